"""The Runs page in a real headless Chromium: samples on first open, uploads, bad files."""

from __future__ import annotations

import re

import pytest

from kbench_core import __version__
from tests.browser.conftest import screenshot, wait_for_app

pytestmark = pytest.mark.browser

SAMPLE_RUNS = ("bias", "bias_summary", "replication", "replication_summary", "judged",
               "kahnebench", "simple_results")
GOOD = ("model,bias,condition,intensity,domain,score\n"
        "browser-model,anchoring_effect,control,,social,0\n"
        "browser-model,anchoring_effect,treatment,strong,social,1\n"
        "browser-model,anchoring_effect,treatment,weak,social,0.5\n"
        "browser-model,framing_effect,control,,risk,0\n"
        "browser-model,framing_effect,treatment,moderate,risk,1\n")
BAD = GOOD.replace("strong,social,1", "strong,social,yes")


def run_row(page, name: str):
    """The run's row in the list: the label of its expander, ``<name> · <kind> · ...``.

    (The run table above it is a canvas-drawn data frame, so its cells are not page text.)"""
    label = re.compile(rf"^{re.escape(name)} · ")
    return page.locator('[data-testid="stExpander"] summary').get_by_text(label)


def loaded(page, count: int):
    return page.locator("h3", has_text=re.compile(rf"^{count} runs? loaded"))


def test_runs_page_lists_samples_and_takes_uploads(app_server, page, tmp_path) -> None:
    page.goto(app_server.url)
    wait_for_app(page)
    for name in SAMPLE_RUNS:
        assert run_row(page, name).is_visible(), f"sample run {name!r} not listed"
    assert loaded(page, 7).is_visible()
    assert page.locator('[data-testid="stDataFrame"]').count() >= 1
    screenshot(page, "runs_page")

    good = tmp_path / "uploaded_run.csv"
    good.write_text(GOOD)
    uploader = page.locator('[data-testid="stFileUploader"] input[type="file"]')
    uploader.set_input_files(str(good))
    # One new run: its family's page opens with that run (and its model) selected.
    page.get_by_role("heading", name="Cognitive biases").wait_for(state="visible")
    wait_for_app(page)
    screenshot(page, "runs_after_upload")
    selects = page.locator('[data-testid="stMultiSelect"]')
    assert "uploaded_run" in selects.nth(0).inner_text()      # Runs
    models = selects.nth(1).inner_text()                     # Models
    assert "browser-model" in models and "synthetic" not in models

    page.get_by_role("link", name="Runs").first.click()
    run_row(page, "uploaded_run").wait_for(state="visible")
    wait_for_app(page)
    assert run_row(page, "uploaded_run").inner_text().startswith("uploaded_run · bias · 5 rows")
    assert loaded(page, 8).is_visible()
    assert page.get_by_text("last for this browser session only").is_visible()

    bad = tmp_path / "bad.csv"
    bad.write_text(BAD)
    uploader = page.locator('[data-testid="stFileUploader"] input[type="file"]')
    uploader.set_input_files(str(bad))  # a bad file: an error box, nothing else changes
    error = page.locator('[data-testid="stCode"]', has_text="bad.csv")
    error.wait_for(state="visible")
    wait_for_app(page)
    message = error.inner_text()
    assert "score" in message and "yes" in message, message
    assert "line 3" in message, message  # the row as a user counts lines (header is line 1)
    assert page.get_by_text(re.compile(r"Could not load\s+bad\.csv")).is_visible()
    assert run_row(page, "uploaded_run").is_visible()
    for name in SAMPLE_RUNS:
        assert run_row(page, name).is_visible()
    assert loaded(page, 8).is_visible()
    screenshot(page, "runs_bad_upload")
    assert page.get_by_text(f"kbench {__version__} · 8 runs loaded").count() == 1
    assert page.js_errors == []
