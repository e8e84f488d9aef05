"""The Models page in headless Chromium: /models opens on claude-haiku-4.5 joined across the
KahneBench reports and the HumanStudy-Bench results, its cards draw their figures."""

from __future__ import annotations

import pytest

from tests.browser.conftest import ARTIFACTS, screenshot, wait_for_app

pytestmark = pytest.mark.browser


def test_models_page_shows_a_model_across_families(app_server, page) -> None:
    page.goto(f"{app_server.url}/models")
    wait_for_app(page)
    assert page.locator("h1", has_text="Models").count() == 1
    # the picker opens on the model most families hold, and the link says so
    assert "models_model=claude-haiku-4.5" in page.url
    assert page.get_by_text("Every metric of claude-haiku-4.5").count() == 1
    for title in ("Cognitive biases", "Replication of human studies", "Coverage"):
        assert page.locator("h3", has_text=title).count() >= 1, title
    metrics = page.locator('[data-testid="stMetric"]')
    assert metrics.count() >= 5                    # the bias card and four configurations
    assert "0.2668 [0.1006, 0.5197]" in metrics.first.inner_text()
    charts = page.locator('[class*="st-key-models_card_"] [data-testid="stPlotlyChart"]')
    assert charts.count() >= 2
    for k in range(charts.count()):
        chart = charts.nth(k)
        chart.scroll_into_view_if_needed()
        chart.locator(".main-svg").first.wait_for(timeout=20_000)
    charts.first.screenshot(path=str(ARTIFACTS / "models_bias_card.png"))
    page.locator("h1", has_text="Models").scroll_into_view_if_needed()
    screenshot(page, "models_page")
    assert page.js_errors == []
