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

from kbench_core.tables import SIGNIFICANT, TINY, column_kind, format_numbers

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
    lows = pd.to_numeric(pd.Series(low), errors="coerce").to_numpy(dtype=float)
    highs = pd.to_numeric(pd.Series(high), errors="coerce").to_numpy(dtype=float)
    known = ~(np.isnan(lows) | np.isnan(highs))
    texts = np.full(len(lows), "", dtype=object)
    texts[known] = [f"[{lo}, {hi}]" for lo, hi in zip(
        format_numbers(lows[known]), format_numbers(highs[known]), strict=True)]
    return pd.Series(texts, index=low.index, dtype=object)


MAX_DECIMALS = 6  # what a column's smallest value may ask for (published scores have six)


def decimals_format(values: pd.Series | np.ndarray) -> str:
    """The Streamlit format of a column of numbers: fixed decimals, as many as give its
    typical value (the median of the non-zero magnitudes) :data:`SIGNIFICANT` significant
    digits with their trailing zeros, as :mod:`kbench_core.tables` writes it (0.84 →
    ``0.8400``, 0.6 → ``0.6000``, 12.5 → ``12.50``), and its smallest non-zero value two (up to
    :data:`MAX_DECIMALS`: 0.000034 among scores near 0.02 is ``0.000034``, not ``0.0000``).
    Streamlit's ``%.4g`` drops trailing zeros ("0.84", "0.6" beside intervals of four digits,
    issue 37.12) and no printf format keeps them; one number of decimals per column also lines
    the points up. Outside [1e-4, 10**SIGNIFICANT) it stays ``%.4g``."""
    array = values.to_numpy() if isinstance(values, pd.Series) else np.asarray(values)
    try:  # a float column as it is (called for every number column on every rerun)
        magnitudes = np.abs(array.astype(float, copy=False).ravel())
    except (TypeError, ValueError):  # pandas' missing values, numbers as text
        magnitudes = np.abs(pd.to_numeric(pd.Series(array.ravel()), errors="coerce")
                            .to_numpy(dtype=float, na_value=np.nan))
    with np.errstate(invalid="ignore"):
        magnitudes = magnitudes[np.isfinite(magnitudes) & (magnitudes >= TINY)]
    if not len(magnitudes):
        return f"%.{SIGNIFICANT}g"
    typical = float(np.median(magnitudes))
    if not 1e-4 <= typical < 10**SIGNIFICANT:
        return f"%.{SIGNIFICANT}g"
    decimals = SIGNIFICANT - 1 - int(np.floor(np.log10(typical)))
    smallest = 1 - int(np.floor(np.log10(float(magnitudes.min()))))
    return f"%.{max(0, decimals, min(smallest, MAX_DECIMALS))}f"


def number_format(name: str, values: pd.Series) -> str | None:
    """The Streamlit ``NumberColumn`` format of a column (``None``: not a number column)."""
    kind = column_kind(name, values)
    if kind == "number":
        return decimals_format(values)
    return {"integer": "localized", "rank": "%g", "cost": "dollar", "p": "%.2g"}.get(kind)


def shown(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` for display: floating-point residues (|x| < 1e-12) set to 0 and whole-number
    count and rank columns as integers; the 4 significant digits come from the column format
    (:func:`number_format`), so sorting and copying keep every digit."""
    if frame.columns.has_duplicates:  # (no table of kbench has them; kept as they are)
        return _shown_by_column(frame)
    # Columns gathered and the frame made once: a leaderboard has some eighty columns, and
    # assigning them one by one cost more than the rest of a widget change's table work.
    columns: dict[object, object] = {}
    for column in frame.columns:
        series = frame[column]
        if not pd.api.types.is_float_dtype(series.dtype):
            columns[column] = series.array
            continue
        if not isinstance(series.dtype, np.dtype):  # Float64 and friends: pandas' way
            columns[column] = _shown_by_column(frame[[column]])[column].array
            continue
        values = series.to_numpy()
        with np.errstate(invalid="ignore"):
            tiny = np.abs(values) < TINY
        if tiny.any():
            values = np.where(tiny, 0.0, values)
        if column_kind(str(column), series) in ("integer", "rank"):
            whole = values[~np.isnan(values)]
            # (whole numbers an int64 holds exactly: a count or a rank, never 1e300)
            if (np.abs(whole) < 2.0 ** 53).all() and (whole == np.round(whole)).all():
                columns[column] = pd.array(values, dtype="Int64")
                continue
        columns[column] = values.astype(series.dtype, copy=False)
    out = pd.DataFrame(columns, index=frame.index)
    out.columns, out.attrs = frame.columns, dict(frame.attrs)  # (their name and type kept)
    return out


def _shown_by_column(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for position in range(out.shape[1]):
        values = out.iloc[:, position]
        if pd.api.types.is_float_dtype(values):
            values = values.mask(values.abs() < TINY, 0.0)
            if column_kind(str(out.columns[position]), values) in ("integer", "rank"):
                whole = values.dropna()
                if (whole == whole.round()).all() and (whole.abs() < 2.0 ** 53).all():
                    values = values.astype("Int64")
            out.isetitem(position, values)
    return out


# One column-naming style in every table the app shows (the style most of its tables use):
# sentence-case words, acronyms in capitals, units and qualifiers in brackets, an interval
# column named after its value ("SUI 95% CI"). Labels of kbench's own columns that pages do
# not name themselves; the exported files keep the column names.
COLUMN_LABELS: dict[str, str] = {
    "model": "Model", "model_a": "Model A", "model_b": "Model B", "judge": "Judge",
    "bias": "Bias", "study": "Study", "finding": "Finding", "domain": "Domain",
    "test": "Test", "sample": "Sample", "category": "Category", "condition": "Condition",
    "method": "Method", "prompt_type": "Prompt type", "n": "n", "df": "df",
    "value": "Value", "delta": "Difference", "delta_low": "Difference 95% CI low",
    "delta_high": "Difference 95% CI high", "p_value": "p (unadjusted)",
    "p_adjusted": "p (adjusted)", "n_clusters": "Clusters", "n_dropped": "Left out",
    "direction": "Direction", "rank": "Rank", "rank_low": "Rank 95% CI low",
    "rank_high": "Rank 95% CI high", "control_mean": "Control mean",
    "direction_as_written": "Direction (as written)", "is_vulnerable": "Vulnerable",
    "severity": "Severity", "vuln_type": "Vulnerability type",
    "said_vulnerable": "Said vulnerable", "confidence": "Confidence",
    "target_found": "Target found", "type_match": "Type match", "rcir": "RCIR",
    "ava": "AVA", "fsv": "FSV", "claimed_lines": "Claimed lines", "true_lines": "True lines",
    "n_target_match": "Target matches", "n_partial_match": "Partial matches",
    "n_bonus_valid": "Valid bonus findings", "n_hallucinated": "Hallucinated findings",
    "n_mischaracterized": "Mischaracterised findings",
    "n_design_choice": "Design-choice findings", "n_out_of_scope": "Out-of-scope findings",
    "n_security_theater": "Security-theatre findings",
    "n_informational": "Informational findings", "n_other_invalid": "Other invalid findings",
    "finding_type": "Finding type", "description": "Description", "lines": "Lines",
    "few_items": "Few items", "n_items": "Items", "n_samples": "Samples",
}
_ACRONYMS = frozenset({"bms", "bci", "has", "ecs", "pas", "sui", "tus", "tdr", "rci", "rcir",
                       "ava", "fsv", "ece", "mce", "cas", "lgi", "fpr", "fnr", "tp", "tn", "fp",
                       "fn", "f1", "f2", "ci", "id", "llm", "us$"})


def column_label(column: object, label: str | None = None, *,
                 labels: Mapping[str, str] | None = None) -> str:
    """The label a table shows for ``column``: ``label`` when the page gives one, else
    :data:`COLUMN_LABELS`, else the name as it is (a study id or a model name used as a
    column is data, shown as written). A bare "95% CI" (or "95% interval") gets the name of
    the value it belongs to (``labels`` of the table's other columns): "ECS 95% CI"."""
    name = str(column)
    # a label that only repeats the column's name names nothing
    text = label if label not in (None, name) else COLUMN_LABELS.get(name, name)
    if text in ("95% CI", "95% interval") and name.endswith("_ci"):
        base = name.removesuffix("_ci")
        owner = (labels or {}).get(base) or COLUMN_LABELS.get(base) or (
            base.upper() if base in _ACRONYMS else None)
        if owner:
            text = f"{owner} 95% CI"
    return text


def _label_of(given: object) -> str | None:
    if isinstance(given, str):
        return given
    if isinstance(given, Mapping) and isinstance(given.get("label"), str):
        return given["label"]
    return None


def table_config(frame: pd.DataFrame, config: Mapping[str, object] | None = None, *,
                 pin: str | None = None) -> dict[str, object]:
    """Column configuration for ``st.dataframe``: the columns ``config`` leaves out (or names
    with a plain label) get their number format and their label in the app's one style
    (:func:`column_label`); the first column (or ``pin``) is pinned."""
    out: dict[str, object] = dict(config or {})
    first = pin if pin in frame.columns else (frame.columns[0] if len(frame.columns) else None)
    given_labels = {str(c): t for c, g in out.items() if (t := _label_of(g)) is not None}
    for column in frame.columns:
        given = out.get(column)
        if given is not None and not isinstance(given, str):
            # a full column configuration from the page stays, its label in the one style
            label = _label_of(given)
            if isinstance(given, Mapping) and label is not None:
                styled = column_label(column, label, labels=given_labels)
                if styled != label:
                    out[column] = {**given, "label": styled}
            continue
        label = column_label(column, given if isinstance(given, str) else None,
                             labels=given_labels)
        fmt = number_format(str(column), frame[column])
        if column == first:
            out[column] = (st.column_config.NumberColumn(label, format=fmt, pinned=True)
                           if fmt else st.column_config.TextColumn(label, pinned=True))
        elif fmt:
            out[column] = st.column_config.NumberColumn(label, format=fmt)
        elif label != str(column):
            out[column] = label
    return out
