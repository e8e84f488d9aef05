"""The Runs page in a real headless Chromium: samples on first open, uploads, bad files."""

from __future__ import annotations

from kbench_core import __version__
from tests.browser.conftest import screenshot, wait_for_app

GOOD = ("model,bias,condition,intensity,domain,score\n"
        "browser-model,anchoring_effect,control,,social,0\n"
        "browser-model,anchoring_effect,treatment,strong,social,1\n")
BAD = GOOD.replace("social,1", "social,yes")


def _expander(page, name: str):
    return page.locator('[data-testid="stExpander"] summary', has_text=name)


def test_runs_page_lists_samples_and_takes_uploads(app_server, page, tmp_path) -> None:
    page.goto(app_server.url)
    wait_for_app(page)
    for name in ("bias · bias", "replication · replication", "replication_summary ·",
                 "judged · judged"):
        assert _expander(page, name).count() == 1, name
    assert page.get_by_text("4 runs loaded", exact=True).is_visible()
    screenshot(page, "runs_page")

    good = tmp_path / "uploaded_run.csv"
    good.write_text(GOOD)
    uploader = page.locator('[data-testid="stFileUploader"] input[type="file"]')
    uploader.set_input_files(str(good))
    _expander(page, "uploaded_run · bias · 2 rows").wait_for(timeout=30_000)
    wait_for_app(page)
    assert page.get_by_text("5 runs loaded", exact=True).is_visible()
    screenshot(page, "runs_after_upload")

    bad = tmp_path / "bad.csv"
    bad.write_text(BAD)
    uploader.set_input_files([str(good), str(bad)])
    message = page.locator('[data-testid="stCode"]', has_text="bad.csv: line 3, field 'score'")
    message.wait_for(timeout=30_000)
    wait_for_app(page)
    assert _expander(page, "uploaded_run · bias").count() == 1
    assert page.get_by_text("5 runs loaded", exact=True).is_visible()
    screenshot(page, "runs_bad_upload")
    assert page.get_by_text(f"kbench {__version__} · 5 runs loaded").count() == 1
    assert page.js_errors == []
