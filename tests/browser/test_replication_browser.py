"""The Replication page in headless Chromium: the scatter draws, a legend click isolates a
study, and the heat tables and summary leaderboard render."""

from __future__ import annotations

import pytest

from tests.browser.conftest import ARTIFACTS, screenshot, wait_for_app

pytestmark = pytest.mark.browser

# Visibility of the scatter's marker traces, grouped by legend group (plotly's own state).
VISIBLE_GROUPS = """el => {
    const gd = el.querySelector('.js-plotly-plot');
    const out = {};
    for (const t of gd.data) {
        if (t.mode !== 'markers') continue;
        out[t.legendgroup] = (t.visible === undefined || t.visible === true);
    }
    return out;
}"""


def test_replication_page_draws_the_scatter(app_server, page) -> None:
    page.goto(f"{app_server.url}/replication")
    wait_for_app(page)
    assert page.locator("h1", has_text="Replication").count() == 1
    for key in ("rep_scatter_chart", "rep_pas_heat_chart", "rep_summary_chart",
                "rep_summary_heat_chart"):
        chart = page.locator(f'.st-key-{key} [data-testid="stPlotlyChart"]')
        chart.scroll_into_view_if_needed()
        chart.locator(".main-svg").first.wait_for(timeout=20_000)
        chart.screenshot(path=str(ARTIFACTS / f"replication_{key}.png"))
    screenshot(page, "replication_page")
    scatter = page.locator('.st-key-rep_scatter_chart [data-testid="stPlotlyChart"]')
    scatter.scroll_into_view_if_needed()
    titles = scatter.locator(".annotation-text").all_text_contents()
    assert any("CCC" in t and "n = 36" in t for t in titles)
    assert scatter.locator(".scatterlayer .point").count() >= 3 * 36
    # one click on a study's legend entry shows only that study, in every panel
    before = scatter.evaluate(VISIBLE_GROUPS)
    assert before and all(before.values())
    scatter.locator(".legend .traces", has_text="study_02").first.click()
    page.wait_for_timeout(500)
    after = scatter.evaluate(VISIBLE_GROUPS)
    assert after["study_02"] is True
    assert not any(v for k, v in after.items() if k != "study_02")
    scatter.screenshot(path=str(ARTIFACTS / "replication_scatter_isolated.png"))
    assert page.js_errors == []


def test_compare_panel_keeps_a_pair_when_model_a_leaves(app_server, page) -> None:
    """A link whose model A is not among its models (as after dropping A from the selection)
    gets another A than its B (not "choose two different models"), and the table of every
    pair appears once its section is opened."""
    page.goto(f"{app_server.url}/replication?rep_models=synthetic-agent-mirror"
              "&rep_models=synthetic-agent-shifted&rep_cmp_a=synthetic-agent-flat"
              "&rep_cmp_b=synthetic-agent-mirror")
    wait_for_app(page)
    page.wait_for_function(
        "() => location.search.includes('rep_cmp_a=synthetic-agent-shifted')")
    assert page.get_by_text("Choose two different models").count() == 0
    forest = page.locator('.st-key-rep_cmp_forest_chart [data-testid="stPlotlyChart"]')
    forest.scroll_into_view_if_needed()
    forest.locator(".main-svg").first.wait_for(timeout=20_000)
    page.get_by_text("Every pair of models (1)").click()
    section = page.locator('[data-testid="stExpander"]', has_text="Every pair of models (1)")
    table = section.locator('[data-testid="stDataFrame"]')
    table.wait_for(timeout=20_000)
    wait_for_app(page)
    table.scroll_into_view_if_needed()
    screenshot(page, "replication_compare_every_pair")
    assert page.js_errors == []
