r"""Shareable views: a page's widget state lives in the URL query string.

Pages declare their widgets with :mod:`kbench_app.kit`, which asks :func:`url_value` for the
link's value of each (on the first render of a session a widget starts from it, if it is valid
for the widget), :func:`register`\ s it, and calls :func:`publish` at the end of the page;
afterwards the URL follows the widgets, so copying the address bar shares the view.

Values are validated, never evaluated: a list must hold offered options, a number must parse
and lie in its range. A link is a stranger's input: a widget takes at most
:data:`MAX_LINK_VALUES` values of at most :data:`MAX_LINK_CHARS` characters each from it (the rest
is dropped, and the page says how much), and what a link names is only ever shown as inert text.
A run named in the link that is not loaded (an upload of someone else's session) is reported by
:func:`missing_runs` so the page can say, in one box, which files to upload.

The link :func:`publish` writes obeys the same caps, and Streamlit's own: a link of more than
1,000 fields or 512 Ki characters is ignored whole when opened (every widget then starts from
its default, without a word). A widget whose value would not survive the link (more than
:data:`MAX_LINK_VALUES` values, a value over :data:`MAX_LINK_CHARS` characters, or the biggest
lists when the whole link is too long) is left out of it, and the sidebar says which: whoever
opens the link sees that widget's default, and knows it (issue 42.9).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal
from urllib.parse import urlencode

import streamlit as st

from kbench_app import state

__all__ = ["MISSING", "Kind", "fit_link", "missing_runs", "publish", "register", "stop",
           "url_value", "warn_missing_runs"]

_SEEDED = "kbench_url_seeded"
_KEYS = "kbench_url_keys"
MISSING = object()  # no (valid) value in the link
MAX_LINK_VALUES = 50  # per widget: more runs or models than any view shows at once
MAX_LINK_CHARS = 300  # per value: longer than any name kbench gives a run (200)
_SHOWN = 5  # names a warning lists before "and N more"
_LABELS = "kbench_url_labels"
# Streamlit ignores a whole query string beyond these (streamlit.runtime.state.query_params:
# CLIENT_STATE_QUERY_STRING_MAX_FIELDS and _MAX_LENGTH); a few fields are kept free for its own
# parameters (``embed``, ``embed_options``).
LINK_FIELDS = 1000 - 10
LINK_CHARS = 512 * 1024 - 1024
Kind = Literal["one", "many", "bool", "float", "int", "text"]


def _seeded() -> set[str]:
    return state.session_setdefault(_SEEDED, set())


def url_value(key: str, kind: Kind) -> Any:
    """The link's value for widget ``key`` on the first call for ``key`` in this session
    (afterwards the URL follows the widgets), parsed as ``kind`` but not yet checked against
    what the widget offers (the kit does that); :data:`MISSING` when there is none."""
    seeded = _seeded()
    if key in seeded:
        return MISSING
    seeded.add(key)
    params = st.query_params
    if key not in params:
        return MISSING
    if kind == "many":
        return _capped(params.get_all(key))
    raw = params[key]
    if len(raw) > MAX_LINK_CHARS:
        return MISSING
    if kind in ("one", "text"):
        return raw
    if kind == "bool":
        raw = raw.lower()
        return raw in ("1", "true") if raw in ("1", "0", "true", "false") else MISSING
    try:
        return float(raw)
    except ValueError:
        return MISSING


def _capped(values: list[str]) -> list[str]:
    """The first :data:`MAX_LINK_VALUES` values of a link's list that are not too long."""
    return [v for v in values if len(v) <= MAX_LINK_CHARS][:MAX_LINK_VALUES]


def register(key: str, kind: Kind, label: str = "") -> None:
    """Put widget ``key`` (shown as ``label``) in the link that :func:`publish` writes at
    the end of the page."""
    state.session_setdefault(_KEYS, {})[key] = kind
    if label:
        state.session_setdefault(_LABELS, {})[key] = label


def _encode(value: Any) -> str | list[str]:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    return str(value)


def _fields(value: str | list[str]) -> int:
    return len(value) if isinstance(value, list) else 1


def fit_link(wanted: dict[str, str | list[str]]) -> dict[str, int]:
    """Take out of ``wanted`` (a link's values by widget) what a link would not carry back;
    returns the widgets taken out, with their numbers of values. First every widget a link
    would cut (:func:`url_value`: more than :data:`MAX_LINK_VALUES` values, or one over
    :data:`MAX_LINK_CHARS` characters); then, while the link is over Streamlit's limits
    (:data:`LINK_FIELDS` fields, :data:`LINK_CHARS` characters), the widget with the most
    values."""
    left_out: dict[str, int] = {}
    for key, value in list(wanted.items()):
        values = value if isinstance(value, list) else [value]
        if len(values) > MAX_LINK_VALUES or any(len(v) > MAX_LINK_CHARS for v in values):
            left_out[key] = len(values)
            del wanted[key]
    while wanted and (sum(map(_fields, wanted.values())) > LINK_FIELDS
                      or len(urlencode(wanted, doseq=True)) > LINK_CHARS):
        key = max(wanted, key=lambda k: (_fields(wanted[k]), len(str(wanted[k]))))
        left_out[key] = _fields(wanted.pop(key))
    return left_out


def _say_left_out(left_out: dict[str, int]) -> None:
    """One line in the sidebar: which widgets the link leaves out, and what that means."""
    from kbench_app.ui import plain

    labels: dict[str, str] = state.session_get(_LABELS, {})
    named = ", ".join(f"{plain(labels.get(key) or key)} ({count:,} value{'s' * (count != 1)})"
                      for key, count in left_out.items())
    st.sidebar.caption(
        f":material/link_off: **The link to this view leaves out** {named}: a link keeps at "
        f"most {MAX_LINK_VALUES} values of a widget, each of at most {MAX_LINK_CHARS} "
        "characters, and 1,000 values in all, so whoever opens it sees "
        f"{'that widget' if len(left_out) == 1 else 'those widgets'} at the default.")


def publish() -> None:
    """Write the current value of every seeded widget of this page into the URL; what a
    link would not carry back is left out, and the sidebar says so (:func:`fit_link`)."""
    keys: dict[str, Kind] = state.session_get(_KEYS, {})
    wanted = {k: _encode(value) for k in keys
              if (value := state.session_get(k, MISSING)) is not MISSING}
    if left_out := fit_link(wanted):
        _say_left_out(left_out)
    current = {k: (st.query_params.get_all(k) if isinstance(v, list) else st.query_params[k])
               for k, v in wanted.items() if k in st.query_params}
    if current != wanted or set(st.query_params) - set(wanted):
        st.query_params.from_dict(wanted)
    state.session_set(_KEYS, {})


def missing_runs(loaded: Sequence[str], key: str) -> list[str]:
    """Runs the link names under ``key`` that this session has not loaded (at most
    :data:`MAX_LINK_VALUES`, each at most :data:`MAX_LINK_CHARS` characters)."""
    if key not in st.query_params:
        return []
    return [name for name in _capped(st.query_params.get_all(key)) if name not in loaded]


def stop() -> None:
    """``st.stop()`` after publishing, so an early stop still leaves a shareable link."""
    publish()
    st.stop()


def _short(name: str, limit: int = 60) -> str:
    return name if len(name) <= limit else name[:limit - 1] + "\u2026"


def warn_missing_runs(loaded: Sequence[str], key: str) -> None:
    """One warning for the runs the link names under ``key`` that this session has not loaded
    (someone else's upload): which files to upload again. Names are code spans (never a link),
    shortened, the first few listed; what the link held beyond the caps is counted."""
    from kbench_app.ui import code

    named = st.query_params.get_all(key) if key in st.query_params else []
    kept = _capped(named)
    missing = [name for name in kept if name not in loaded]  # missing_runs, read once
    dropped = len(named) - len(kept)
    if not missing and not dropped:
        return
    shown = ", ".join(code(_short(name)) for name in missing[:_SHOWN])
    more = f" and {len(missing) - _SHOWN:,} more" if len(missing) > _SHOWN else ""
    text = ""
    if missing:
        one = len(missing) == 1
        text = (f"The link shows {'the run' if one else f'{len(missing):,} runs'} {shown}{more}, "
                f"which this session has not loaded: upload {'its file' if one else 'their files'}"
                " again on the Runs page (uploads live only in the session that made them, "
                "unless the app runs with a workspace).")
    if dropped:
        text += (f" {dropped:,} more run name{'s' * (dropped != 1)} in the link were ignored "
                 f"(a link names at most {MAX_LINK_VALUES} runs of at most {MAX_LINK_CHARS} "
                 "characters).")
    st.warning(text.strip(), icon=":material/link_off:")
