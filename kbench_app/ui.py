"""Small display helpers shared by pages. Uploaded text is always shown as text.

Numbers in the app's tables follow :mod:`kbench_core.tables` (integers as integers, ranks as
ranks, costs in US dollars, 4 significant digits, residues as 0): :func:`number_format` gives
the Streamlit format of a column, :func:`shown` rounds a frame for display (sorting stays
numeric), and :func:`table_config` pins the first column so it stays in view while a wide
table scrolls sideways (no column is cut off: the grid scrolls).
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping

import numpy as np
import pandas as pd
import streamlit as st

from kbench_core.tables import SIGNIFICANT, TINY, column_kind, format_value

# ``&`` too: Markdown resolves HTML entities, so ``https&colon;&sol;&sol;evil`` would become a
# URL (and a live link) after the escapes were checked.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&])")
# What GitHub-flavoured Markdown turns into a link by itself (URLs, www., e-mail addresses,
# ftp://): Streamlit applies it after escapes are resolved, so an escaped name would still be a
# link. Inside a code span nothing is a link.
_AUTOLINK = re.compile(r"https?://|www\.|\w@\w|ftp://", re.IGNORECASE)


def code(text: object) -> str:
    """``text`` as a Markdown code span, shown literally (no link, emphasis or escape); the
    fence is one backtick longer than any run of backticks inside."""
    text = str(text).replace("\n", " ")
    ticks = "`" * (max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    return f"{ticks} {text} {ticks}"


def plain(text: object) -> str:
    """A stranger's text (a file, run, model or judge name) shown literally inside a Markdown
    label: Markdown escaped, and as a code span (:func:`code`) when it holds something Markdown
    would autolink (a URL, ``www.``, an e-mail address). Only for Markdown: inside ``st.text``,
    ``st.code`` or a dataframe use the raw text."""
    text = str(text)
    if _AUTOLINK.search(text) or _AUTOLINK.search(html.unescape(text)):
        return code(text)
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def interval_text(low: pd.Series, high: pd.Series) -> pd.Series:
    """``[low, high]`` to 4 significant digits; empty where either bound is undefined."""
    text = pd.Series([f"[{format_value(lo)}, {format_value(hi)}]"
                      for lo, hi in zip(low, high, strict=True)], index=low.index, dtype=object)
    return text.where(low.notna() & high.notna(), "")


def number_format(name: str, values: pd.Series) -> str | None:
    """The Streamlit ``NumberColumn`` format of a column (``None``: not a number column)."""
    kind = column_kind(name, values)
    return {"integer": "localized", "rank": "%g", "cost": "dollar", "p": "%.2g",
            "number": f"%.{SIGNIFICANT}g"}.get(kind)


def shown(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` for display: floating-point residues (|x| < 1e-12) set to 0 and whole-number
    count and rank columns as integers; the 4 significant digits come from the column format
    (:func:`number_format`), so sorting and copying keep every digit."""
    out = frame.copy()
    for column in out.columns:
        if pd.api.types.is_float_dtype(out[column]):
            values = out[column]
            out[column] = values.mask(values.abs() < TINY, 0.0)
            if column_kind(str(column), values) in ("integer", "rank"):
                whole = out[column].dropna()
                if (whole == whole.round()).all() and np.isfinite(whole).all():
                    out[column] = out[column].astype("Int64")
    return out


def table_config(frame: pd.DataFrame, config: Mapping[str, object] | None = None, *,
                 pin: str | None = None) -> dict[str, object]:
    """Column configuration for ``st.dataframe``: the columns ``config`` leaves out (or names
    with a plain label) get their number format; the first column (or ``pin``) is pinned."""
    out: dict[str, object] = dict(config or {})
    first = pin if pin in frame.columns else (frame.columns[0] if len(frame.columns) else None)
    for column in frame.columns:
        given = out.get(column)
        if given is not None and not isinstance(given, str):
            continue  # a full column configuration from the page stays as it is
        label = given if isinstance(given, str) else str(column)
        fmt = number_format(str(column), frame[column])
        if column == first:
            out[column] = (st.column_config.NumberColumn(label, format=fmt, pinned=True)
                           if fmt else st.column_config.TextColumn(label, pinned=True))
        elif fmt:
            out[column] = st.column_config.NumberColumn(label, format=fmt)
    return out
