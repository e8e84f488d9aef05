"""Shareable views: a page's widget state lives in the URL query string.

A page calls :func:`seed` just before creating each widget it wants in the link (with the
options the widget will offer), and :func:`publish` once at the end. On the first render of a
session the widget starts from the link's value, if that value is valid for the widget;
afterwards the URL follows the widgets, so copying the address bar shares the view.

Values are validated, never evaluated: a list must hold offered options, a number must parse
and lie in its range. A run named in the link that is not loaded (an upload of someone else's
session) is reported by :func:`missing_runs` so the page can say which file to upload.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import streamlit as st

__all__ = ["missing_runs", "prepare", "publish", "seed", "stop", "warn_missing_runs"]

_SEEDED = "kbench_url_seeded"
_KEYS = "kbench_url_keys"
Kind = Literal["one", "many", "bool", "float", "int"]


def _seeded() -> set[str]:
    return st.session_state.setdefault(_SEEDED, set())


def seed(key: str, kind: Kind, options: Sequence[Any] | None = None, *,
         low: float | None = None, high: float | None = None) -> None:
    """Start widget ``key`` from the URL on its first render in this session (if valid)."""
    st.session_state.setdefault(_KEYS, {})[key] = kind
    seeded = _seeded()
    if key in seeded:
        return
    seeded.add(key)
    params = st.query_params
    if key not in params:
        return
    offered = None if options is None else [str(o) for o in options]
    value: Any
    try:
        if kind == "many":
            values = params.get_all(key)
            if offered is not None:
                values = [v for v in values if v in offered]
                value = [options[offered.index(v)] for v in values]  # type: ignore[index]
            else:
                value = values
        elif kind == "one":
            raw = params[key]
            if offered is not None and raw not in offered:
                return
            value = options[offered.index(raw)] if offered is not None else raw  # type: ignore[index]
        elif kind == "bool":
            raw = params[key].lower()
            if raw not in ("1", "0", "true", "false"):
                return
            value = raw in ("1", "true")
        else:
            number = float(params[key])
            if (low is not None and number < low) or (high is not None and number > high):
                return
            value = int(number) if kind == "int" else number
    except (ValueError, KeyError):
        return
    st.session_state[key] = value


def _encode(value: Any) -> str | list[str]:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    return str(value)


def publish() -> None:
    """Write the current value of every seeded widget of this page into the URL."""
    keys: dict[str, Kind] = st.session_state.get(_KEYS, {})
    wanted = {k: _encode(st.session_state[k]) for k in keys if k in st.session_state}
    current = {k: (st.query_params.get_all(k) if isinstance(v, list) else st.query_params[k])
               for k, v in wanted.items() if k in st.query_params}
    if current != wanted or set(st.query_params) - set(wanted):
        st.query_params.from_dict(wanted)
    st.session_state[_KEYS] = {}


def missing_runs(loaded: Sequence[str], key: str) -> list[str]:
    """Runs the link names under ``key`` that this session has not loaded."""
    if key not in st.query_params:
        return []
    return [name for name in st.query_params.get_all(key) if name not in loaded]


def stop() -> None:
    """``st.stop()`` after publishing, so an early stop still leaves a shareable link."""
    publish()
    st.stop()


def prepare(key: str, kind: Kind, default: Any, options: Sequence[Any] | None = None, *,
            low: float | None = None, high: float | None = None) -> None:
    """Seed ``key`` from the URL (see :func:`seed`), else start it at ``default``. Create the
    widget afterwards without ``default``/``value`` (its state is already set)."""
    seed(key, kind, options, low=low, high=high)
    if kind == "many" and options is not None and key in st.session_state:
        # Keep only what is still offered (another run may be chosen since).
        offered = set(map(str, options))
        st.session_state[key] = [v for v in st.session_state[key] if str(v) in offered]
    elif kind == "one" and options is not None and key in st.session_state \
            and str(st.session_state[key]) not in set(map(str, options)):
        del st.session_state[key]
    st.session_state.setdefault(key, default)


def warn_missing_runs(loaded: Sequence[str], key: str) -> None:
    """A warning for each run the link names under ``key`` that this session has not loaded
    (someone else's upload): which file to upload again."""
    from kbench_app.ui import plain

    for name in missing_runs(loaded, key):
        st.warning(f"The link shows the run **{plain(name)}**, which this session has not "
                   "loaded: upload its file again on the Runs page (uploads live only in the "
                   "session that made them, unless the app runs with a workspace).",
                   icon=":material/link_off:")
