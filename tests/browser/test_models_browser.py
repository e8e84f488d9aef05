"""The Models page in headless Chromium: /models opens on claude-haiku-4.5 joined across the
KahneBench reports and the HumanStudy-Bench results; its compact profile, the figure of its
configurations named by prompt version, and the suggested joins."""

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
    for title in ("Profile", "Replication of human studies", "Coverage"):
        assert page.locator("h3", has_text=title).count() >= 1, title
    # the compact profile, not a metric card cut by its column ("0.3041 [0.04149, 0.56…")
    assert page.locator('[data-testid="stMetric"]').count() == 0
    profile = page.locator('[class*="st-key-models_profile_headline"]')
    assert profile.count() >= 1
    # one model's fingerprint is no longer a one-column heat table
    assert page.locator('[class*="st-key-models_card_bias_"]').count() == 0
    charts = page.locator('[class*="st-key-models_card_"] [data-testid="stPlotlyChart"]')
    assert charts.count() == 1
    chart = charts.first
    chart.scroll_into_view_if_needed()
    chart.locator(".main-svg").first.wait_for(timeout=20_000)
    ticks = chart.locator(".xtick text, .ytick text").all_text_contents()
    # the configurations named once each, by prompt version (were "cla-h-4.5 · v4-background",
    # "cla-… · v3-human-plus-demo", "cla-haiku-4.5 · v1-empty")
    assert {"v1-empty", "v2-human", "v3-human-plus-demo", "v4-background"} <= set(ticks), ticks
    assert not any("cla" in t for t in ticks), ticks
    chart.screenshot(path=str(ARTIFACTS / "models_replication_card.png"))
    # KahneBench's grok-4-1-fast-reasoning and HumanStudy-Bench's grok: a suggested join
    near = page.locator('[data-testid="stExpander"]', has_text="Suggested joins (1)")
    assert near.count() == 1
    near.locator("summary").click()
    near.locator('[data-testid="stMultiSelect"]').wait_for(timeout=10_000)
    page.wait_for_timeout(500)  # the table draws on its canvas
    near.screenshot(path=str(ARTIFACTS / "models_suggested_joins.png"))
    page.locator("h1", has_text="Models").scroll_into_view_if_needed()
    screenshot(page, "models_page")
    page.set_viewport_size({"width": 900, "height": 1200})
    page.locator("h3", has_text="Profile").scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    page.screenshot(path=str(ARTIFACTS / "models_profile_narrow.png"))
    assert page.js_errors == []


def test_a_detector_and_a_bias_trial_model(app_server, page) -> None:
    # a judged run's card keeps its SUI tier bars; a bias-trial model has only its profile row
    page.goto(f"{app_server.url}/models?models_model=synthetic-detector-sharp")
    wait_for_app(page)
    assert page.locator('[class*="st-key-models_card_vulnerability_"] '
                        '[data-testid="stPlotlyChart"]').count() == 1
    table = page.locator('[class*="st-key-models_profile_headline"] table')
    assert "TDR" in table.inner_text() and "few samples" in table.inner_text()
    screenshot(page, "models_detector")
    page.goto(f"{app_server.url}/models?models_model=synthetic-alpha")
    wait_for_app(page)
    table = page.locator('[class*="st-key-models_profile_headline"] table')
    assert "susceptibility" in table.inner_text()
    assert page.locator('[class*="st-key-models_card_"]').count() == 0
    assert page.js_errors == []
