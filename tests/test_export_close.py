"""Closing the static-figure render server (``export.FigureExporter.close``): bounded even
when kaleido's browser does not exit. A module of its own: these tests stop kaleido's
singleton server, which a module-scoped ``exporter`` fixture elsewhere keeps open."""

from __future__ import annotations

import shutil

import pytest

from kbench_core import export
from tests.conftest import in_ci


def test_a_render_server_whose_browser_hangs_is_killed_and_reset(monkeypatch) -> None:
    """The close seen hanging once in CI (kaleido's stop waits for ever on the browser):
    after ``CLOSE_SECONDS`` the browsers kaleido started are killed and the singleton is
    reset as kaleido resets it, so the next export starts a new server."""
    import queue
    import signal
    import threading
    import time

    import kaleido

    release = threading.Event()
    killed = []

    class Hung:
        _initialized = True

        def __init__(self) -> None:
            self._task_queue: queue.Queue = queue.Queue()
            self._return_queue: queue.Queue = queue.Queue()
            self._thread = threading.Thread(target=release.wait, daemon=True)
            self._thread.start()

        def is_running(self) -> bool:
            return self._initialized

    server = Hung()
    monkeypatch.setattr(kaleido, "_global_server", server)
    monkeypatch.setattr(export, "CLOSE_SECONDS", 0.2)
    monkeypatch.setattr(export, "_browser_children", lambda: [424242])

    def kill(pid: int, sig: int) -> None:
        killed.append((pid, sig))
        release.set()  # the browser gone, the server's thread ends

    monkeypatch.setattr(export.os, "kill", kill)
    asked = server._task_queue
    exporter = export.FigureExporter()
    exporter._started = True
    start = time.monotonic()
    exporter.close()
    assert time.monotonic() - start < 5
    assert killed == [(424242, signal.SIGKILL)]
    assert asked.get_nowait() is None  # the stop was asked for first, as kaleido asks
    assert not server.is_running() and not hasattr(server, "_thread")
    assert not hasattr(server, "_task_queue") and not hasattr(server, "_return_queue")


def test_the_render_server_s_browser_is_found_and_gone_after_close() -> None:
    """``_browser_children`` finds the Chromium kaleido starts (a grandchild, under
    choreographer's Python launcher) while it renders, and none once the exporter closed."""
    import plotly.graph_objects as go

    if not shutil.which("chromium"):
        if in_ci():
            pytest.fail("CI: Debian's chromium is needed for static figure export")
        pytest.skip("static export needs Debian's chromium on the PATH")

    with export.FigureExporter() as ex:
        ex.to_bytes(go.Figure(go.Bar(y=[1, 2])), "svg")
        assert export._browser_children()
    assert export._browser_children() == []
