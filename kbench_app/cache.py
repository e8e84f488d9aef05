"""One cache for every page: results keyed on what they depend on, never on hand-picked keys.

:func:`cached` calls a core function once per key and keeps the result for every session of
the server. The key is the function, the content hashes of the runs the data came from, the
``selection`` that cut the data out of those runs (models, judge, prompt type, ...) and every
option passed to the function; the data arguments themselves are not hashed (a 1M-row frame
would cost more to hash than most results cost to compute), which is why the selection must
name every filter the page applied. Values are shared, so callers never change them in place.

Kept in one process-wide LRU (not ``st.cache_data``) so nothing is pickled and a spinner shows
only when a result is actually computed.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import asdict, is_dataclass
from typing import Any, TypeVar

import streamlit as st

__all__ = ["MAX_ENTRIES", "cached", "clear", "freeze", "runs_key"]

T = TypeVar("T")
MAX_ENTRIES = 256  # results kept (most recently used); a 1M-row fingerprint is a few MB


class _Store:
    """A thread-safe LRU of results (sessions run in threads of one process)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.items: OrderedDict[Hashable, Any] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: Hashable) -> tuple[bool, Any]:
        with self.lock:
            if key not in self.items:
                return False, None
            self.items.move_to_end(key)
            return True, self.items[key]

    def put(self, key: Hashable, value: Any) -> None:
        with self.lock:
            self.items[key] = value
            self.items.move_to_end(key)
            while len(self.items) > self.size:
                self.items.popitem(last=False)


@st.cache_resource(show_spinner=False)
def _store() -> _Store:
    return _Store(MAX_ENTRIES)


def clear() -> None:
    """Forget every cached result (tests)."""
    store = _store()
    with store.lock:
        store.items.clear()


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
    """``(name, content hash)`` of each run: a result of the same runs under other names is
    not reused, because names appear in the tables (``model (run)``)."""
    return tuple((str(run.name), str(run.content_hash)) for run in runs)


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
    store = _store()
    found, value = store.get(key)
    if found:
        return value
    if spinner:
        with st.spinner(spinner):
            value = fn(*data, **options)
    else:
        value = fn(*data, **options)
    store.put(key, value)
    return value
