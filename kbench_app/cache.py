"""One cache for every page: results keyed on what they depend on, never on hand-picked keys.

:func:`cached` calls a core function once per key and keeps the result for every session of
the server. The key is the function, the content hashes of the runs the data came from, the
``selection`` that cut the data out of those runs (models, judge, prompt type, ...) and every
option passed to the function; the data arguments themselves are not hashed (a 1M-row frame
would cost more to hash than most results cost to compute), which is why the selection must
name every filter the page applied. Values are shared, so callers never change them in place.

Kept in one process-wide LRU (not ``st.cache_data``) so nothing is pickled and a spinner shows
only when a result is actually computed. A result being computed is computed once: a second
caller of the same key (another session, or :mod:`kbench_app.prefetch` working ahead of the
page) waits for it instead of computing it again, so two users opening the same big run pay
for it once.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, fields, is_dataclass
from typing import Any, TypeVar

import numpy as np
import pandas as pd
import streamlit as st

__all__ = ["MAX_BYTES", "MAX_ENTRIES", "WAIT_SECONDS", "cached", "clear", "current_store",
           "freeze", "nbytes", "runs_key", "using"]

T = TypeVar("T")
MAX_ENTRIES = 256  # results kept (most recently used); a 1M-row fingerprint is a few MB
# ... and at most this many bytes of them (KBENCH_CACHE_MB): a big judged run's selection of
# rows, or its answers read into arrays, holds tens of MB, and a shared server keeps one store.
MAX_BYTES = int(float(os.environ.get("KBENCH_CACHE_MB", "1024")) * 1024**2)
WAIT_SECONDS = 120.0  # longest wait for another thread's computation before doing it here


def nbytes(value: Any, _depth: int = 0) -> int:
    """About the memory a cached value holds (its arrays and frames; containers and frozen
    dataclasses summed over their items; anything else counted as small). Shallow for frames
    (no per-string count: the estimate must cost nothing beside the result it weighs)."""
    if isinstance(value, pd.DataFrame | pd.Series | pd.Index):
        # each column's own nbytes (memory_usage builds a Series of them: 4x the time, on
        # every result a page caches)
        columns = ([c for _, c in value.items()] if isinstance(value, pd.DataFrame)
                   else [value])
        index = [] if isinstance(value, pd.Index) else [value.index]
        size = sum(int(c.nbytes) for c in [*columns, *index])
        # an object column holds a pointer per row and the objects themselves: about a short
        # string each (counting them exactly would walk every row)
        return size + _OBJECT_BYTES * len(value) * sum(c.dtype == object for c in columns)
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if _depth >= 4:
        return 0
    if is_dataclass(value) and not isinstance(value, type):
        # (a field marked ``shared`` refers to data another result holds: counted there)
        return sum(nbytes(getattr(value, f.name), _depth + 1) for f in fields(value)
                   if not f.metadata.get("shared"))
    if isinstance(value, Mapping):
        value = list(value.values())
    if isinstance(value, list | tuple):
        # a long list (a run's sample ids) is weighed by its first items, not walked
        head = value[:_SAMPLED]
        total = sum(nbytes(v, _depth + 1) for v in head)
        return total * len(value) // len(head) if head else 0
    return 0


_SAMPLED = 8
_OBJECT_BYTES = 56  # a short Python str


class _Store:
    """A thread-safe LRU of results (sessions run in threads of one process), with the keys
    being computed right now (``pending``: their callers wait rather than compute twice)."""

    def __init__(self, size: int, max_bytes: int = MAX_BYTES) -> None:
        self.size = size
        self.max_bytes = max_bytes
        self.items: OrderedDict[Hashable, Any] = OrderedDict()
        self.weights: dict[Hashable, int] = {}
        self.bytes = 0
        self.pending: dict[Hashable, threading.Event] = {}
        self.lock = threading.Lock()

    def get(self, key: Hashable) -> tuple[bool, Any]:
        with self.lock:
            if key not in self.items:
                return False, None
            self.items.move_to_end(key)
            return True, self.items[key]

    def put(self, key: Hashable, value: Any) -> None:
        with self.lock:
            self._put(key, value)

    def _put(self, key: Hashable, value: Any) -> None:
        self.bytes -= self.weights.get(key, 0)
        self.weights[key] = weight = nbytes(value)
        self.bytes += weight
        self.items[key] = value
        self.items.move_to_end(key)
        # the least recently used go first; the newest result stays even if it alone is over
        while len(self.items) > 1 and (len(self.items) > self.size
                                       or self.bytes > self.max_bytes):
            old, _ = self.items.popitem(last=False)
            self.bytes -= self.weights.pop(old, 0)

    def claim(self, key: Hashable) -> tuple[str, Any]:
        """``("found", value)``, ``("wait", event)`` when another thread is computing it, or
        ``("mine", None)``: the caller computes it and must :meth:`release` the key."""
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return "found", self.items[key]
            if key in self.pending:
                return "wait", self.pending[key]
            self.pending[key] = threading.Event()
            return "mine", None

    def release(self, key: Hashable, *value: Any) -> None:
        """The end of a claimed computation: its value stored (none when it failed) and its
        waiters woken (after a failure they compute it themselves and meet the error)."""
        with self.lock:
            if value:
                self._put(key, value[0])
            event = self.pending.pop(key, None)
        if event is not None:
            event.set()


@st.cache_resource(show_spinner=False)
def _store() -> _Store:
    return _Store(MAX_ENTRIES)


_thread = threading.local()  # the store a worker thread uses (it has no Streamlit context)


def current_store() -> _Store:
    """The store of this thread: the app's, or the one :func:`using` handed a worker."""
    store = getattr(_thread, "store", None)
    return store if store is not None else _store()


class Interrupted(Exception):
    """A worker's task stopped between two results (:func:`using`'s ``stop`` was set)."""


@contextmanager
def using(store: _Store, stop: threading.Event | None = None) -> Iterator[None]:
    """Run :func:`cached` calls of this thread (a worker outside any Streamlit session)
    against ``store``, without spinners. Once ``stop`` is set, the next result this thread
    would compute raises :class:`Interrupted` instead (what it finds is still returned): a
    task worked ahead gives way to the page that asked for it within one result."""
    _thread.store, _thread.stop = store, stop
    try:
        yield
    finally:
        _thread.store = _thread.stop = None


def clear() -> None:
    """Forget every cached result (tests)."""
    store = current_store()
    with store.lock:
        store.items.clear()
        store.weights.clear()
        store.bytes = 0


def freeze(value: Any) -> Hashable:
    """A hashable, order-free form of an option value: mappings as sorted pairs, sequences
    as tuples, frozen dataclasses as their fields; NaN made equal to itself."""
    if is_dataclass(value) and not isinstance(value, type):
        return (type(value).__qualname__, freeze(asdict(value)))
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), freeze(v)) for k, v in value.items()))
    if isinstance(value, list | tuple | set | frozenset):
        items = [freeze(v) for v in value]
        return tuple(sorted(items, key=repr)) if isinstance(value, set | frozenset) \
            else tuple(items)
    if isinstance(value, float) and value != value:
        return "nan"
    if isinstance(value, Hashable):
        return value
    return repr(value)


def runs_key(runs: Sequence[Any]) -> tuple[tuple[str, str], ...]:
    """``(name, content hash, labels)`` of each run: a result of the same runs under other
    names is not reused, because names appear in the tables (``model (run)``); nor one of a
    run without the judge audit's labels its view carries
    (:func:`kbench_app.audit.with_reviewers`)."""
    return tuple((str(run.name), str(run.content_hash),
                  str(getattr(run, "meta", {}).get("audit_labels_sha256", "")))
                 for run in runs)


def cached(fn: Callable[..., T], *data: Any, runs: Sequence[Any], selection: Any = (),
           spinner: str | None = None, **options: Any) -> T:
    """``fn(*data, **options)``, computed once per (``fn``, ``runs``, ``selection``,
    ``options``).

    Parameters
    ----------
    fn : callable
        A core function (or a page's small composition of core calls).
    *data
        Frames or other data handed to ``fn`` unhashed: they must follow from ``runs`` and
        ``selection``.
    runs : sequence of Run
        The runs ``data`` was taken from (their content hashes key the result).
    selection : hashable-ish
        Every filter that cut ``data`` out of the runs.
    spinner : str, optional
        Shown while a result is computed (not when it is found).
    **options
        Keyword arguments of ``fn``; all part of the key.
    """
    key = (getattr(fn, "__module__", ""), getattr(fn, "__qualname__", repr(fn)),
           runs_key(runs), freeze(selection), freeze(options))
    if getattr(_thread, "store", None) is not None:
        spinner = None  # a worker has no page to show one on
    store = current_store()
    state, value = store.claim(key)
    if state == "found":
        return value
    stop = getattr(_thread, "stop", None)
    if stop is not None and stop.is_set():
        if state == "mine":
            store.release(key)
        raise Interrupted
    if state == "wait":
        with _maybe_spinner(spinner):
            value.wait(WAIT_SECONDS)
        state, value = store.claim(key)  # found, or (it failed or took too long) ours
        if state == "found":
            return value
        if state == "wait":  # still running elsewhere: compute without waiting longer
            with _maybe_spinner(spinner):
                return fn(*data, **options)
    try:
        with _maybe_spinner(spinner):
            value = fn(*data, **options)
    except BaseException:
        store.release(key)
        raise
    store.release(key, value)
    return value


@contextmanager
def _maybe_spinner(text: str | None) -> Iterator[None]:
    if text:
        with st.spinner(text):
            yield
    else:
        yield
