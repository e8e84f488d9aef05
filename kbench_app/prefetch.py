"""Work done ahead of the user: results a page will probably be asked for next, computed in
one background thread after the page is shown and kept in :mod:`kbench_app.cache`.

Why: on a big judged run each judge's tiers cost a tenth of a second or more of arithmetic
that no cache of the current view can answer (another judge is other rows). A page names
what it will likely need next (the Vulnerability page: the other judges' leaderboard and
figures under the options on screen); one worker computes it while the user reads, and the
change, when it comes, finds it (:func:`kbench_app.cache.cached` also waits for a result the
worker is computing rather than computing it twice).

Bounded cost on a shared server: one worker thread per server process for every session,
at most :data:`MAX_PENDING` tasks waiting (the oldest are dropped: they belong to a view the
user has left), a task already waiting is not queued twice, a session's waiting tasks are
dropped when its page runs again (:func:`cancel`: they were for the view it is leaving, and
would compete with the rerun for the CPU) and its running task stops before its next result,
and ``KBENCH_PREFETCH=0`` turns it off. A task
that fails is dropped quietly: the page meets the same error, with its message, if the user
asks for that view.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

from kbench_app import cache

__all__ = ["MAX_PENDING", "cancel", "enabled", "owner", "submit", "wait_idle"]

MAX_PENDING = 8
_log = logging.getLogger(__name__)


def enabled() -> bool:
    """Whether pages work ahead (``KBENCH_PREFETCH``, default on; ``0`` turns it off)."""
    return os.environ.get("KBENCH_PREFETCH", "1").strip().lower() not in {"0", "false", "no",
                                                                         "off"}


def owner() -> Hashable:
    """The session asking (its Streamlit session id; None outside a session)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    context = get_script_run_ctx(suppress_warning=True)
    return None if context is None else context.session_id


class _Worker:
    def __init__(self) -> None:
        self.tasks: OrderedDict[Hashable, tuple[Hashable, cache._Store,
                                                Callable[[], object]]] = OrderedDict()
        self.busy = False
        self.condition = threading.Condition()
        self.thread: threading.Thread | None = None
        self.running: tuple[Hashable, threading.Event] | None = None  # (owner, its stop)

    def submit(self, key: Hashable, task: Callable[[], object], who: Hashable) -> None:
        store = cache.current_store()  # read here, in the page's thread
        with self.condition:
            if key in self.tasks:
                return
            self.tasks[key] = (who, store, task)
            while len(self.tasks) > MAX_PENDING:
                self.tasks.popitem(last=False)
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run, name="kbench-prefetch",
                                               daemon=True)
                self.thread.start()
            self.condition.notify_all()

    def _run(self) -> None:
        while True:
            with self.condition:
                while not self.tasks:
                    self.busy = False
                    self.condition.notify_all()
                    self.condition.wait()
                _, (who, store, task) = self.tasks.popitem(last=False)
                stop = threading.Event()
                self.running = (who, stop)
                self.busy = True
            try:
                with cache.using(store, stop):
                    task()
            except cache.Interrupted:  # its session's page runs again: give way to it
                _log.debug("prefetch task interrupted")
            except BaseException:  # the page shows the error if the user asks for this view
                _log.debug("prefetch task failed", exc_info=True)
            with self.condition:
                self.running = None
            # let go of the task while idle: it holds a session's run (its whole frame)
            del store, task, stop

    def cancel(self, who: Hashable) -> int:
        with self.condition:
            gone = [k for k, (whose, _, _) in self.tasks.items() if whose == who]
            for key in gone:
                del self.tasks[key]
            if self.running is not None and self.running[0] == who:
                self.running[1].set()  # the running task stops before its next result
            self.condition.notify_all()
        return len(gone)

    def wait_idle(self, timeout: float) -> bool:
        with self.condition:
            return self.condition.wait_for(lambda: not self.tasks and not self.busy,
                                           timeout=timeout)


_WORKER = _Worker()


def submit(key: Hashable, task: Callable[[], object]) -> None:
    """Queue ``task`` (a call of cached page functions) under ``key`` for the session asking;
    nothing when prefetching is off or the same key is already waiting."""
    if enabled():
        _WORKER.submit(key, task, owner())


def cancel() -> int:
    """Drop the waiting tasks of the session asking (a page calls it as it runs again: what
    it queued was for the view being left); returns how many. Its task already running
    stops before the next result it would compute (the ones it finished stay cached)."""
    return _WORKER.cancel(owner())


def wait_idle(timeout: float = 60.0) -> bool:
    """Block until no task waits or runs (tests and benchmarks: a user reading the page);
    False if ``timeout`` seconds passed first."""
    return _WORKER.wait_idle(timeout)
