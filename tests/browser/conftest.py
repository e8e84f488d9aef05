"""End-to-end fixtures: the real app in a subprocess, driven by Debian's Chromium.

Playwright only drives the browser; it never downloads one (``executable_path``). Without
Chromium the browser tests are skipped on a laptop and fail in CI (``CI=true``).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT, in_ci

ARTIFACTS = Path(os.environ.get("KBENCH_ARTIFACTS", ROOT / "test-artifacts"))
CHROMIUM = os.environ.get("KBENCH_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage",
]
START_TIMEOUT_S = 60.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class AppServer:
    """``streamlit run app.py`` on a free port; its output goes to ``test-artifacts/``."""

    def __init__(self, args: str = "") -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.log = ARTIFACTS / f"streamlit-{self.port}.log"
        self._log_file = self.log.open("w")
        env = {**os.environ, "KBENCH_APP_ARGS": args}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
             "--server.headless", "true", "--server.port", str(self.port),
             "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"],
            cwd=ROOT, env=env, stdout=self._log_file, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL)
        self._wait_healthy()

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as reply:
                    if reply.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.3)
        status = self.process.poll()
        self.stop()
        why = (f"exited with status {status}" if status is not None
               else f"was not healthy after {START_TIMEOUT_S:.0f} s")
        raise RuntimeError(f"the app {why}; its output:\n{self.log.read_text()[-4000:]}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self._log_file.close()


@pytest.fixture(scope="session")
def app_server() -> Iterator[AppServer]:
    """The app on the bundled sample runs, shared by every browser test of the session."""
    server = AppServer()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium under Playwright; skipped without it, except in CI."""
    if not Path(CHROMIUM).exists():
        reason = (f"Debian's chromium is not installed at {CHROMIUM}: "
                  "`bash scripts/test.sh` installs it")
        if in_ci():
            pytest.fail(f"CI: {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@pytest.fixture
def page(browser):
    """A fresh browser context per test (own Streamlit session); collects JavaScript errors."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(30_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.js_errors = errors  # type: ignore[attr-defined]
    yield page
    context.close()


def wait_for_app(page, timeout: float = 60_000) -> None:
    """Wait until Streamlit is connected and has finished running the script, then check that
    the page shows no exception.

    ``stApp`` carries the script state (``initial``, ``running``, ``notRunning``, ...), the
    status widget is mounted only while a run is under way, and elements whose code is still
    loading (data frames, charts) show as ``stSkeleton`` placeholders. After an action that
    reruns the script, first wait for what the rerun should show: it may not have started yet.
    """
    ready = """() => {
        const app = document.querySelector('[data-testid="stApp"]');
        return app !== null
            && app.getAttribute('data-test-connection-state') === 'CONNECTED'
            && app.getAttribute('data-test-script-state') === 'notRunning'
            && !document.querySelector('[data-testid="stStatusWidgetRunningIcon"]')
            && !document.querySelector('[data-testid="stSkeleton"]')
            && document.querySelector('[data-testid="stMainBlockContainer"] h1') !== null;
    }"""
    page.wait_for_function(ready, timeout=timeout)
    page.wait_for_timeout(250)  # a rerun queued by the last message would start by now
    page.wait_for_function(ready, timeout=timeout)
    exceptions = page.locator('[data-testid="stException"]')
    assert exceptions.count() == 0, exceptions.first.inner_text()


def screenshot(page, name: str) -> Path:
    """Save a screenshot of the whole page as ``test-artifacts/<name>.png``.

    Streamlit scrolls inside its main section, not the document, so the viewport is stretched
    to the section's height for the shot (at most 6000 px) and then restored."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    viewport = page.viewport_size
    height = page.evaluate(
        """() => Math.max(...[...document.querySelectorAll(
            '[data-testid="stMain"], [data-testid="stSidebarContent"]')].map(e => e.scrollHeight),
            0)""")
    if viewport and height > viewport["height"]:
        page.set_viewport_size({"width": viewport["width"], "height": min(int(height), 6000)})
        page.wait_for_timeout(300)
    try:
        page.screenshot(path=str(path), full_page=True)
    finally:
        if viewport:
            page.set_viewport_size(viewport)
    return path
