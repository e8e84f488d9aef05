"""The Compare panel of the Vulnerability page in headless Chromium (issue 37, item 6): it
opens on TDR, the family's headline, words the pair in plain words, and every pair shows
its verdicts, both intervals named, and the simultaneous intervals in its forest plot."""

from __future__ import annotations

import pytest

from tests.browser.conftest import ARTIFACTS, screenshot, wait_for_app

pytestmark = pytest.mark.browser


def test_the_compare_panel_opens_on_tdr_and_words_every_pair(app_server, page) -> None:
    page.goto(f"{app_server.url}/vulnerability")
    wait_for_app(page)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    metric = page.locator(".st-key-vuln_cmp_metric")
    metric.scroll_into_view_if_needed()
    page.wait_for_function("() => location.search.includes('vuln_cmp_metric=TDR')")
    verdict = page.locator('[data-testid="stAlert"]', has_text=" in TDR (target found")
    verdict.first.wait_for(timeout=30_000)
    assert "target_found_vulnerable" not in verdict.first.inner_text()
    forest = page.locator('.st-key-vuln_cmp_forest_chart [data-testid="stPlotlyChart"]')
    forest.locator(".main-svg").first.wait_for(timeout=15_000)
    page.locator(".st-key-vuln_cmp_mode").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "compare_two_models.png"))

    page.locator(".st-key-vuln_cmp_mode").get_by_text("Every pair").click()
    wait_for_app(page)
    chart = page.locator('.st-key-vuln_cmp_pairs_chart [data-testid="stPlotlyChart"]')
    chart.locator(".main-svg").first.wait_for(timeout=30_000)
    chart.scroll_into_view_if_needed()
    subtitle = " ".join(chart.locator(".gtitle").all_text_contents())
    assert "simultaneous 95% interval" in subtitle
    chart.screenshot(path=str(ARTIFACTS / "compare_every_pair_forest.png"))
    text = page.locator('[data-testid="stMain"]').inner_text()
    assert "this pair alone; 95% simultaneous over the" in text
    page.get_by_text("this pair alone; 95% simultaneous over the").last.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "compare_every_pair.png"))
    screenshot(page, "compare_page")
    assert page.js_errors == []
