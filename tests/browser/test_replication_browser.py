"""The Replication page in headless Chromium: the scatter draws."""

from __future__ import annotations

import pytest

from tests.browser.conftest import ARTIFACTS, screenshot, wait_for_app

pytestmark = pytest.mark.browser


def test_replication_page_draws_the_scatter(app_server, page) -> None:
    page.goto(f"{app_server.url}/replication")
    wait_for_app(page)
    assert page.locator("h1", has_text="Replication").count() == 1
    for key in ("rep_scatter_chart", "rep_pas_heat_chart", "rep_summary_chart"):
        chart = page.locator(f'.st-key-{key} [data-testid="stPlotlyChart"]')
        chart.scroll_into_view_if_needed()
        chart.locator(".main-svg").first.wait_for(timeout=20_000)
        chart.screenshot(path=str(ARTIFACTS / f"replication_{key}.png"))
    screenshot(page, "replication_page")
    assert page.js_errors == []
