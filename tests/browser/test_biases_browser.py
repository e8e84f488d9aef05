"""The Cognitive biases page in headless Chromium, opened by a deep link."""

from __future__ import annotations

from tests.browser.conftest import wait_for_app


def test_bias_page_draws_its_charts(app_server, page) -> None:
    page.goto(f"{app_server.url}/biases")
    wait_for_app(page)
    assert page.locator("h1", has_text="Cognitive biases").count() == 1
    # The deep link goes through the router: its navigation is in the sidebar.
    assert page.locator('[data-testid="stSidebarNav"]').get_by_text("Runs").count() == 1
    charts = page.locator('[data-testid="stPlotlyChart"]')
    charts.nth(3).wait_for(timeout=30_000)
    assert charts.count() == 4
    for index, name in enumerate(["bias_curves", "bci_heatmap", "has_chart", "cas_bars"]):
        charts.nth(index).scroll_into_view_if_needed()
        charts.nth(index).locator(".main-svg").first.wait_for(timeout=15_000)
        charts.nth(index).screenshot(path=str(_artifact(name)))
    assert page.js_errors == []


def _artifact(name: str):
    from tests.browser.conftest import ARTIFACTS

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS / f"biases_{name}.png"
