"""Uploads shared by sessions: the same bytes load in every browser session and after a reload.

The upload cache is shared by the server's sessions; a session must never meet another
session's upload as an error, nor see its runs.
"""

from __future__ import annotations

import re
import uuid

import pytest

from tests.browser.conftest import ROOT, screenshot, wait_for_app

pytestmark = pytest.mark.browser


def upload_and_expect_bias_page(page, path, run: str) -> None:
    """Upload ``path`` on the Runs page: one new run opens the bias page with it chosen."""
    uploader = page.locator('[data-testid="stFileUploader"] input[type="file"]')
    uploader.set_input_files(str(path))
    failed = page.get_by_text(re.compile(r"Could not load"))
    opened = page.get_by_role("heading", name="Cognitive biases")
    failed.or_(opened).first.wait_for(state="visible")
    assert failed.count() == 0, page.locator('[data-testid="stCode"]').first.inner_text()
    wait_for_app(page)
    assert run in page.locator('[data-testid="stMultiSelect"]').nth(0).inner_text()


def test_the_same_file_loads_in_two_sessions_and_after_a_reload(app_server, browser,
                                                                tmp_path) -> None:
    model = f"shared-{uuid.uuid4().hex[:8]}"  # bytes no earlier test uploaded: a cache miss
    path = tmp_path / "shared_upload.csv"
    path.write_text("model,bias,condition,intensity,domain,score\n"
                    f"{model},anchoring_effect,control,,social,0\n"
                    f"{model},anchoring_effect,treatment,strong,social,1\n"
                    f"{model},framing_effect,control,,risk,0\n"
                    f"{model},framing_effect,treatment,weak,risk,1\n")
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000})
                for _ in range(2)]
    try:
        pages = []
        for context in contexts:
            context.set_default_timeout(30_000)
            page = context.new_page()
            page.goto(app_server.url)
            wait_for_app(page)
            pages.append(page)
        first, second = pages
        upload_and_expect_bias_page(first, path, "shared_upload")
        # Another browser, the same bytes: loaded from the shared cache, not an error.
        upload_and_expect_bias_page(second, path, "shared_upload")
        screenshot(second, "upload_second_session")
        # Back to the Runs page and F5 there: a new session, which uploads the file again.
        first.goto(app_server.url)
        wait_for_app(first)
        first.reload()
        wait_for_app(first)
        assert first.locator('[data-testid="stExpander"] summary').get_by_text(
            re.compile(r"^shared_upload")).count() == 0  # a new session has none of it
        upload_and_expect_bias_page(first, path, "shared_upload")
        screenshot(first, "upload_after_reload")
        # Each session has its own runs: the second one still has exactly one copy.
        second.get_by_role("link", name="Runs").first.click()
        rows = second.locator('[data-testid="stExpander"] summary').get_by_text(
            re.compile(r"^shared_upload"))
        rows.first.wait_for(state="visible")
        wait_for_app(second)
        assert [t.split(" · ")[0] for t in rows.all_inner_texts()] == ["shared_upload"]
        screenshot(second, "upload_second_session_runs")
    finally:
        for context in contexts:
            context.close()


def test_a_link_to_the_runs_page_opens_it(app_server, page) -> None:
    # Issue 24.12: /runs (the Runs page's own address) said "Page not found".
    page.goto(f"{app_server.url}/runs")
    wait_for_app(page)
    assert page.get_by_role("heading", name="Runs", exact=True).is_visible()
    assert page.get_by_text("Page not found").count() == 0
    assert page.locator('[data-testid="stFileUploader"]').count() == 1
    screenshot(page, "runs_deep_link")
    assert page.js_errors == []


def test_a_folder_of_reports_uploaded_as_files_is_one_run(app_server, page) -> None:
    # Issue 24.8: the 11 KahneBench fingerprint reports, chosen together in the file dialog,
    # made 11 runs and the bias page opened on one of them.
    # Ten of them: all eleven are the bundled kahnebench folder's own bytes (the same content
    # hash, since a folder's hash covers the files read), which the app reports as a duplicate.
    reports = sorted((ROOT / "sample_data" / "real" / "kahnebench").glob("fingerprint_*.json"))
    reports = reports[:10]
    page.goto(app_server.url)
    wait_for_app(page)
    uploader = page.locator('[data-testid="stFileUploader"] input[type="file"]')
    uploader.set_input_files([str(p) for p in reports])
    page.get_by_role("heading", name="Cognitive biases").wait_for(state="visible")
    wait_for_app(page)
    runs = page.locator('[data-testid="stMultiSelect"]').nth(0).inner_text()
    assert "fingerprint" in runs
    screenshot(page, "upload_reports_as_one_run")
    page.get_by_role("link", name="Runs").first.click()
    rows = page.locator('[data-testid="stExpander"] summary')
    rows.get_by_text(re.compile(r"^fingerprint · ")).wait_for(state="visible")
    wait_for_app(page)
    assert rows.get_by_text(re.compile(r"^fingerprint_")).count() == 0  # no run per file
    assert "10 models" in rows.get_by_text(re.compile(r"^fingerprint · ")).inner_text()
    screenshot(page, "runs_reports_as_one_run")
    assert page.js_errors == []
