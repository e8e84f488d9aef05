"""The Cognitive biases page in headless Chromium, opened by a deep link."""

from __future__ import annotations

import pytest

from tests.browser.conftest import ARTIFACTS, screenshot, wait_for_app

pytestmark = pytest.mark.browser
CHARTS = ("bias_curves_chart", "bias_heatmap_chart", "bias_has_chart", "bias_cas_chart",
          "bias_cmp_forest_chart")


def test_bias_page_draws_its_charts(app_server, page) -> None:
    page.goto(f"{app_server.url}/biases")
    wait_for_app(page)
    assert page.locator("h1", has_text="Cognitive biases").count() == 1
    # The deep link goes through the router: its navigation is in the sidebar.
    assert page.locator('[data-testid="stSidebarNav"]').get_by_text("Runs").count() == 1
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for key in CHARTS:
        chart = page.locator(f'.st-key-{key} [data-testid="stPlotlyChart"]')
        chart.scroll_into_view_if_needed()
        chart.locator(".main-svg").first.wait_for(timeout=15_000)
        chart.screenshot(path=str(ARTIFACTS / f"biases_{key}.png"))
    screenshot(page, "biases_page")
    assert page.js_errors == []


def test_bias_page_bootstrap_switch_adds_intervals(app_server, page) -> None:
    page.goto(f"{app_server.url}/biases")
    wait_for_app(page)
    page.get_by_text("Metric options").click()
    page.get_by_text("Bootstrap BMS intervals").click()
    page.get_by_text("BMS 95% CI").first.wait_for(state="attached", timeout=30_000)
    wait_for_app(page)
    screenshot(page, "biases_bootstrap")
    assert page.js_errors == []


def _chips(page, key: str) -> list[str]:
    return page.locator(f".st-key-{key} span[data-tag] > span[title]").all_inner_texts()


def test_a_shared_link_reproduces_the_view(app_server, browser) -> None:
    first = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    first.goto(f"{app_server.url}/biases")
    wait_for_app(first)
    # choose a view: one model, one family, mean-score curves
    first.locator('.st-key-bias_models button[aria-label="Remove synthetic-gamma"]').click()
    wait_for_app(first)
    first.locator(".st-key-bias_curve_y").get_by_text("Mean score").click()
    wait_for_app(first)
    first.wait_for_function("() => location.search.includes('bias_curve_y=mean')")
    link = first.url
    assert "bias_models=synthetic-alpha" in link and "synthetic-gamma" not in link
    first.context.close()

    fresh = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    fresh.goto(link)
    wait_for_app(fresh)
    assert _chips(fresh, "bias_models") == ["synthetic-alpha", "synthetic-beta"]
    assert fresh.locator(".st-key-bias_curve_y input[type=radio]:checked").evaluate(
        "e => e.parentElement.innerText") == "Mean score" or fresh.locator(
        ".st-key-bias_curve_y").get_by_role("radio", name="Mean score").is_checked()
    screenshot(fresh, "biases_shared_link")
    fresh.context.close()


def test_figure_and_table_downloads(app_server, page, tmp_path) -> None:
    page.goto(f"{app_server.url}/biases")
    wait_for_app(page)
    button = page.locator(".st-key-bias_has_dl_pdf button, "
                          ".st-key-bias_has_dl_pdf a").first
    button.scroll_into_view_if_needed()
    with page.expect_download(timeout=60_000) as info:
        button.click()
    pdf = tmp_path / info.value.suggested_filename
    info.value.save_as(pdf)
    assert pdf.name == "has_chart.pdf" and pdf.read_bytes()[:5] == b"%PDF-"
    table = page.locator(".st-key-bias_fingerprint_table_dl_tex button, "
                         ".st-key-bias_fingerprint_table_dl_tex a").first
    with page.expect_download(timeout=60_000) as info:
        table.click()
    tex = tmp_path / "fingerprint.tex"
    info.value.save_as(tex)
    assert r"\toprule" in tex.read_text()
    assert page.js_errors == []
