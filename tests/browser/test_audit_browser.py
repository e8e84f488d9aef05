"""The Judge audit page in headless Chromium: a reviewer labels ten items with the keyboard,
the server restarts, and a second session on the same workspace sees the ten labels."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser.conftest import AppServer, screenshot, wait_for_app

pytestmark = pytest.mark.browser


def _start(page, url: str, name: str) -> None:
    page.goto(f"{url}/audit")
    wait_for_app(page)
    page.get_by_label("Your name").fill(name)
    page.get_by_role("button", name="Start labelling").click()
    page.get_by_text(re.compile(r"Item \d+ of 60")).first.wait_for(timeout=30_000)
    wait_for_app(page)


def _progress(page) -> str:
    return page.locator('[data-testid="stProgress"]').first.inner_text()


LABELLED = 5  # labels made with the keyboard: N, F, F, N, F


def test_labels_made_with_the_keyboard_survive_a_restart(browser, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    server = AppServer(f"--workspace {workspace}")
    try:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        _start(page, server.url, "Ann Reviewer")
        assert "0 of 60 labelled by you" in _progress(page)
        for k in range(LABELLED):
            page.locator("h1").first.click()  # focus off any text box
            page.keyboard.press("f" if k % 3 else "n")
            page.get_by_text(re.compile(rf"\b{k + 1} of 60 labelled by you")).first.wait_for(
                timeout=30_000)
            wait_for_app(page)
        assert page.get_by_text(f"Item {LABELLED + 1} of 60").first.is_visible()
        # a note typed into the text box does not trigger the F and N keys
        page.get_by_label("Note (optional)").fill("fine as is, no typo")
        wait_for_app(page)
        assert f"{LABELLED} of 60 labelled by you" in _progress(page)
        page.get_by_role("button", name="Previous").click()
        page.get_by_text(f"Item {LABELLED} of 60").first.wait_for(timeout=30_000)
        wait_for_app(page)
        page.get_by_text("What the labels say").first.scroll_into_view_if_needed()
        screenshot(page, "audit_after_labels")
        assert errors == []
        context.close()
        files = list((workspace / "labels").rglob("*.csv"))
        assert len(files) == 1 and files[0].read_text().count("\n") == LABELLED + 1  # + header
    finally:
        server.stop()

    server = AppServer(f"--workspace {workspace}")
    try:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        _start(page, server.url, "Ann Reviewer")
        assert f"{LABELLED} of 60 labelled by you" in _progress(page)
        assert page.get_by_text(f"Item {LABELLED + 1} of 60").first.is_visible()  # resumes
        context.close()
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        _start(page, server.url, "Bo Second")
        assert (f"0 of 60 labelled by you (Bo Second) · {LABELLED} by anyone"
                in _progress(page))
        assert page.get_by_text("Corrected").first.is_visible()
        screenshot(page, "audit_second_session")
        context.close()
    finally:
        server.stop()
