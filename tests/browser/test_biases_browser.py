"""The Cognitive biases page in headless Chromium, opened by a deep link."""

from __future__ import annotations

import pytest

from tests.browser.conftest import ARTIFACTS, screenshot, wait_for_app

pytestmark = pytest.mark.browser
CHARTS = ("bias_curves_chart", "bias_heatmap_chart", "bias_has_chart", "bias_cas_chart")


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
