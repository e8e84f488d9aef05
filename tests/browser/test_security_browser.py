"""Uploaded text never runs or renders as markup (issue 10): a run whose model name, bias,
prompts and responses are HTML/JavaScript/Markdown payloads shows them literally."""

from __future__ import annotations

import csv
import io

import pytest

from tests.browser.conftest import screenshot, wait_for_app

pytestmark = pytest.mark.browser

MODEL = '<img src=x onerror="window.__xss=1">'
RESPONSE = "<script>window.__xss=2</script> **bold** [link](javascript:window.__xss=3)"


def _payload_run() -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["model", "bias", "condition", "intensity", "domain", "score", "response",
                     "prompt"])
    for condition, intensity, score in (("control", "", 0), ("treatment", "weak", 1),
                                        ("treatment", "strong", 1)):
        writer.writerow([MODEL, "anchoring_effect", condition, intensity, "social", score,
                         RESPONSE, "<b>prompt</b>"])
    return out.getvalue().encode()


RUN_NAME = "xss_<img src=y onerror=window.__xss=4>"


def test_payloads_show_as_text_and_never_run(app_server, page) -> None:
    page.goto(app_server.url)
    wait_for_app(page)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
        {"name": f"{RUN_NAME}.csv", "mimeType": "text/csv", "buffer": _payload_run()})
    row = page.locator('[data-testid="stExpander"] summary').get_by_text(RUN_NAME,
                                                                          exact=False)
    row.wait_for(timeout=30_000)  # the run's name shows literally, markup and all
    wait_for_app(page)
    # same session (a new page load would start a new one, without the upload)
    page.locator('[data-testid="stSidebarNav"]').get_by_text("Cognitive biases").click()
    page.locator("h1", has_text="Cognitive biases").wait_for()
    wait_for_app(page)
    page.locator(".st-key-bias_runs input").fill("xss")
    page.keyboard.press("Enter")
    page.keyboard.press("Escape")
    page.locator(".st-key-bias_models span[data-tag]").first.wait_for()
    wait_for_app(page)
    chips = page.locator(".st-key-bias_models span[data-tag] > span[title]").all_inner_texts()
    assert MODEL in chips, chips
    page.locator(".st-key-bias_drill_search input").fill("script")
    page.keyboard.press("Enter")
    wait_for_app(page)
    screenshot(page, "security_payloads")
    assert page.evaluate("() => window.__xss") is None
    assert page.locator("img[src='x'], img[src='y']").count() == 0
    assert page.locator("a[href^='javascript']").count() == 0
    assert page.js_errors == []
