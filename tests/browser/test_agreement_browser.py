"""The Judge agreement page in headless Chromium: heatmap, coefficients, other labels."""

from __future__ import annotations

import pytest

from tests.browser.conftest import ARTIFACTS, screenshot, wait_for_app

pytestmark = pytest.mark.browser
CHARTS = ("agr_heatmap_chart", "agr_labels_chart", "agr_spread_chart", "agr_confusion_chart")


def chart(page, key: str):
    return page.locator(f'.st-key-{key} [data-testid="stPlotlyChart"]')


def test_agreement_page_draws_the_heatmap(app_server, page) -> None:
    page.goto(f"{app_server.url}/agreement")
    wait_for_app(page)
    assert page.locator("h1", has_text="Judge agreement").count() == 1
    heat = chart(page, "agr_heatmap_chart")
    heat.locator(".main-svg").first.wait_for(timeout=15_000)
    # 3 judges: 6 annotated off-diagonal cells; judge-three flips 42 of 360 targets.
    cells = heat.locator("svg text").evaluate_all("els => els.map(e => e.textContent)")
    assert sum("0.76" in t for t in cells) >= 2, cells
    assert heat.get_by_text("judge-three").count() >= 1
    assert page.get_by_text("Fleiss' κ").first.is_visible()
    assert page.get_by_text("almost perfect").first.is_visible()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for key in CHARTS:
        figure = chart(page, key)
        figure.scroll_into_view_if_needed()
        figure.locator(".main-svg").first.wait_for(timeout=15_000)
        figure.screenshot(path=str(ARTIFACTS / f"agreement_{key}.png"))
    screenshot(page, "agreement_page")
    assert page.js_errors == []


def test_agreement_page_follows_the_label(app_server, page) -> None:
    page.goto(f"{app_server.url}/agreement?agr_label=type_match&agr_weights=linear")
    wait_for_app(page)
    assert page.get_by_text("Krippendorff's α (ordinal)").first.is_visible()
    heat = chart(page, "agr_heatmap_chart")
    heat.locator(".main-svg").first.wait_for(timeout=15_000)
    assert heat.get_by_text("type_match").count() >= 1
    page.goto(f"{app_server.url}/agreement?agr_label=rcir")
    wait_for_app(page)
    assert page.get_by_text("Fleiss' κ is for categories").first.is_visible()
    chart(page, "agr_heatmap_chart").locator(".main-svg").first.wait_for(timeout=15_000)
    screenshot(page, "agreement_rcir")
    assert page.js_errors == []
