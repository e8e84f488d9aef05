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
