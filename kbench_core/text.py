"""Untrusted text (names and labels from uploaded files) made safe for each place it goes.

Every label in a run comes from a stranger's file, so it may hold control characters, bidi
overrides, invisible characters, spreadsheet formulas or markup. Each destination has its own
hazard, and this module holds the one escape for each:

* :func:`escape_controls`: control, format (bidi, zero-width) and line-separator characters as
  visible ``\\xNN`` / ``\\uNNNN`` escapes, for terminals and comment lines
  (:func:`unescape_controls` reverses it).
* :func:`json_quote`: a name as a JSON string literal that can sit in any comment line (CSV
  ``#``, LaTeX ``%``, HTML ``<!-- -->``) without ending it, splitting it into spreadsheet cells
  or starting a formula; ``json.loads`` gives the name back.
* :func:`neutralise_cell`: the OWASP rule against CSV injection ("CSV Injection", OWASP
  Foundation): a text cell starting with ``= + - @``, TAB or CR (or NUL, or a full-width
  ``＝ ＋ － ＠``) gets a leading ``'`` (so does one starting with ``'``, which keeps the rule
  reversible: :func:`restore_cell`); :func:`csv_cell` also writes NUL as ``\\x00``.
* :func:`plot_text`: plotly renders a small HTML subset (``<a href>``, ``<b>``, ``<br>``,
  ``<span style>``) in trace names, tick labels, titles and hover text, and decodes HTML
  entities; escaping ``& < >`` as entities makes a label show literally.
* :func:`lookalike_warnings`: labels that are not what they look like: invisible or bidi
  characters, compatibility forms (fullwidth ``ｇｐｔ``), characters of another script that look
  Latin (Unicode's confusables data via ``confusable_homoglyphs``), and distinct labels that
  look the same.
* :class:`FileNamer`: unique, short, file-system-safe names for exported files.

Only the escapes themselves are written here (a few lines each); Unicode data comes from
:mod:`unicodedata` and ``confusable_homoglyphs``.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "FileNamer",
    "count_noun",
    "csv_cell",
    "display_name",
    "display_names",
    "escape_controls",
    "json_quote",
    "lookalike_warnings",
    "method_label",
    "neutralise_cell",
    "plot_text",
    "plural",
    "restore_cell",
    "safe_name",
    "strip_controls",
    "unescape_controls",
    "wrap_name",
]

# Cc (C0, DEL, C1), Cf (bidi embeddings/overrides/isolates, zero-width, soft hyphen, BOM),
# Zl/Zp (U+2028/U+2029) and lone surrogates: every character that moves the cursor, changes
# the direction of what follows, ends a line somewhere, or is invisible.
_CONTROL_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f"
                     "\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\ufff9-\ufffb"
                     "\ud800-\udfff\U000e0000-\U000e007f]")
_UNSAFE_OR_BACKSLASH = re.compile(_UNSAFE.pattern[:-1] + "\\\\]")


def _is_unsafe(ch: str) -> bool:
    return unicodedata.category(ch) in _CONTROL_CATEGORIES or bool(_UNSAFE.match(ch))


def _escape_char(ch: str) -> str:
    if ch == "\\":
        return "\\\\"
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def strip_controls(text: Any) -> str:
    """``text`` without the characters :func:`escape_controls` would escape (controls, bidi
    and zero-width characters, line separators): for names, where an escape is no better.

    >>> strip_controls("gpt\\u202e4\\x00")
    'gpt4'
    """
    return _UNSAFE.sub("", str(text))


def escape_controls(text: Any, *, reversible: bool = False) -> str:
    """``text`` with every control, format, line-separator or invisible character written as a
    visible escape (``\\x1b``, ``\\u202e``); with ``reversible``, backslashes are doubled so
    :func:`unescape_controls` gives the text back exactly.

    >>> escape_controls("gpt\\u202e4\\n")
    'gpt\\\\u202e4\\\\x0a'
    """
    text = str(text)
    if reversible:
        text = _UNSAFE_OR_BACKSLASH.sub(lambda m: _escape_char(m.group()), text)
    else:
        text = _UNSAFE.sub(lambda m: _escape_char(m.group()), text)
    if not text.isprintable() and any(_is_unsafe(ch) for ch in text):
        # Format characters the fast pattern does not list (new Unicode versions).
        text = "".join(_escape_char(ch) if _is_unsafe(ch) and ch != "\\" else ch for ch in text)
    return text


_ESCAPE = re.compile(r"\\(\\|x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8})")


def unescape_controls(text: str) -> str:
    """The inverse of ``escape_controls(text, reversible=True)``."""
    def back(match: re.Match[str]) -> str:
        token = match.group(1)
        return "\\" if token == "\\" else chr(int(token[1:], 16))

    return _ESCAPE.sub(back, text)


_JSON_UNSAFE = re.compile("[,;]|-(?=-)|" + _UNSAFE.pattern)


def _json_escape(match: re.Match[str]) -> str:
    out = []
    for ch in match.group():
        code = ord(ch)
        if code > 0xFFFF:  # JSON writes astral characters as a surrogate pair
            code -= 0x10000
            out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
        else:
            out.append(f"\\u{code:04x}")
    return "".join(out)


def json_quote(value: Any) -> str:
    """``value`` as a JSON string literal that is safe inside any comment line.

    Besides JSON's own escapes: control, format and line-separator characters, ``,`` and ``;``
    (a spreadsheet would start a new cell there, and the cell could be a formula) and the
    first ``-`` of ``--`` (which would end an HTML comment) are written as ``\\uNNNN``, so the
    literal is one cell, one line and one comment; ``json.loads`` returns ``value`` unchanged.

    >>> json_quote("a,=1\\n-->")
    '"a\\\\u002c=1\\\\n\\\\u002d->"'
    """
    literal = json.dumps(str(value), ensure_ascii=False)
    return _JSON_UNSAFE.sub(_json_escape, literal)


def json_safe(value: Any) -> str:
    """Any JSON-able value as one comment-safe line (strings as in :func:`json_quote`)."""
    literal = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str,
                         separators=(", ", ": "))
    # Outside strings the only "," is a separator (always followed by a space) and ";" and
    # "--" never occur, so every substitution below lands inside a string literal.
    return re.sub(",(?! )|;|-(?=-)|" + _UNSAFE.pattern, _json_escape, literal)


# ------------------------------------------------------------------------------ CSV cells

# OWASP's = + - @ TAB CR, the full-width ＝ ＋ － ＠ (a spreadsheet with a CJK input method
# reads them as the ASCII ones), NUL (some spreadsheets skip it, so the next character leads),
# and ' itself so the rule stays reversible.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\x00", "\uff1d", "\uff0b", "\uff0d",
                  "\uff20", "'")


def neutralise_cell(value: Any) -> Any:
    """A text cell that a spreadsheet could run as a formula, prefixed with ``'`` (OWASP).

    Only text is touched: numbers (``-0.5``) are written as numbers and stay numbers.
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def csv_cell(value: Any) -> Any:
    """A cell as written to a CSV file: :func:`neutralise_cell`, and NUL written as the visible
    escape ``\\x00`` (a raw NUL ends the cell for C-based readers and is refused by Python's
    :mod:`csv`). Only text is touched."""
    value = neutralise_cell(value)
    if isinstance(value, str) and "\x00" in value:
        value = value.replace("\x00", "\\x00")
    if isinstance(value, str) and _BIDI_CONTROLS.search(value):
        # a right-to-left override shows the rest of the row reversed in a spreadsheet
        value = _BIDI_CONTROLS.sub(lambda m: _escape_char(m.group()), value)
    return value


def restore_cell(value: Any) -> Any:
    """The inverse of :func:`neutralise_cell` (for reading an exported CSV back)."""
    if isinstance(value, str) and value.startswith("'") and value[1:].startswith(
            _FORMULA_START):
        return value[1:]
    return value


# ------------------------------------------------------------------------------ plotly


def _plot_str(text: str) -> str:
    # Controls and bidi overrides as visible escapes (a U+202E would reverse the rest of a
    # legend), markup as entities, and "%{" as "%&#123;" so that a name inside a hover
    # template is never read as a placeholder (plotly shows the entity as "{").
    return (escape_controls(text).replace("&", "&amp;").replace("<", "&lt;")
            .replace(">", "&gt;").replace("%{", "%&#123;"))


def plot_text(value: Any, columns: Iterable[str] | None = None) -> Any:
    """Labels escaped so plotly shows them literally (no link, bold or line break from data).

    ``value`` may be a string (escaped), a Series or Index (its string values escaped, order
    and categories kept), a DataFrame (the named ``columns``, default every text or
    categorical column), a dict (its keys: colours by model), a list or tuple (each item) or
    anything else (returned as is, e.g. None). Apply it where data enters a
    figure; plotly turns ``&lt;`` back into ``<`` on screen.
    """
    if isinstance(value, str):
        return _plot_str(value)
    if isinstance(value, pd.DataFrame):
        names = list(columns) if columns is not None else [
            c for c in value.columns if _is_labels(value[c])]
        names = [c for c in names if c in value.columns]
        if not names:
            return value
        out = value.copy(deep=False)
        for name in names:
            out[name] = plot_text(value[name])
        if isinstance(out.index, pd.Index) and _is_labels(out.index):
            out.index = plot_text(out.index)
        return out
    if isinstance(value, pd.Series | pd.Index):
        if isinstance(value.dtype, pd.CategoricalDtype):
            cats = value.cat.categories if isinstance(value, pd.Series) else value.categories
            fixed = [_plot_str(c) if isinstance(c, str) else c for c in cats]
            if fixed == list(cats):
                return value
            if len(set(fixed)) != len(fixed):  # cannot happen: the escape is injective
                raise ValueError("escaped labels collide")
            mapping = dict(zip(cats, fixed, strict=True))
            return (value.cat.rename_categories(mapping) if isinstance(value, pd.Series)
                    else value.rename_categories(mapping))
        if not _is_labels(value):
            return value
        return _escape_each(value)
    if isinstance(value, dict):  # e.g. colours keyed by model name
        return {plot_text(k): v for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(plot_text(v) for v in value)
    if isinstance(value, np.ndarray) and value.dtype == object:
        return np.array([plot_text(v) for v in value], dtype=object)
    return value


def _escape_each(values: pd.Series | pd.Index) -> pd.Series | pd.Index:
    """Each text value escaped, computed once per distinct value (a 100k-point scatter repeats
    a few hundred study names); other values kept as they are."""
    try:
        codes, uniques = pd.factorize(values, use_na_sentinel=True)
    except TypeError:  # unhashable values (lists): one by one
        return values.map(lambda v: _plot_str(v) if isinstance(v, str) else v)
    texts = np.array([isinstance(u, str) for u in uniques] + [False], dtype=bool)
    escaped = np.array([_plot_str(u) if isinstance(u, str) else u for u in uniques] + [None],
                       dtype=object)
    original = np.asarray(values, dtype=object)
    out = np.where(texts[codes], escaped[codes], original)
    if isinstance(values, pd.Series):
        return pd.Series(out, index=values.index, name=values.name, dtype=object)
    return pd.Index(out, name=values.name, dtype=object)


def _is_labels(values: pd.Series | pd.Index) -> bool:
    dtype = values.dtype
    return (pd.api.types.is_object_dtype(dtype) or isinstance(dtype, pd.CategoricalDtype)
            or pd.api.types.is_string_dtype(dtype))


# ------------------------------------------------------------------------------ look-alikes

def _confusables(text: str) -> list[dict[str, Any]]:
    """Characters of ``text`` from another script that look like Latin ones (Unicode's
    confusables data, via ``confusable_homoglyphs``; nothing when it is not installed)."""
    try:
        from confusable_homoglyphs import confusables
    except ImportError:  # a dependency, but a missing one must not stop a run from loading
        return []
    try:
        return confusables.is_confusable(text, greedy=True,
                                         preferred_aliases=["latin", "common"]) or []
    except (KeyError, TypeError, ValueError):
        return []


_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_BIDI_CONTROLS = re.compile("[" + "".join(sorted(_BIDI)) + "]")


def _skeleton(label: str) -> str:
    """What a label looks like: compatibility forms folded (NFKC), case folded, invisible
    characters removed, letters of other scripts mapped to the Latin letter they resemble."""
    text = unicodedata.normalize("NFKC", label)
    text = "".join(ch for ch in text if (not _is_unsafe(ch) and not ch.isspace()) or ch == " ")
    found = _confusables(text)
    if found:
        swap = {}
        for item in found:
            latin = next((h["c"] for h in item["homoglyphs"]
                          if h["n"].startswith(("LATIN", "DIGIT"))), None)
            if latin is not None:
                swap[item["character"]] = latin
        text = "".join(swap.get(ch, ch) for ch in text)
    return text.casefold().strip()


def _describe(label: str) -> list[str]:
    notes = []
    hidden = sorted({ch for ch in label if _is_unsafe(ch) and ch not in _BIDI})
    if hidden:
        notes.append("invisible or control characters (" + ", ".join(
            f"U+{ord(ch):04X} {unicodedata.name(ch, 'unnamed')}" for ch in hidden[:4]) + ")")
    if any(ch in _BIDI for ch in label):
        notes.append("bidirectional-text controls (the name may display reordered)")
    if unicodedata.normalize("NFKC", label) != label and not hidden:
        notes.append("compatibility characters (e.g. fullwidth letters)")
    confusable = _confusables(label)
    if confusable:
        chars = [f"U+{ord(item['character']):04X} {unicodedata.name(item['character'], '?')}"
                 for item in confusable[:3]]
        notes.append("letters of another script that look Latin (" + ", ".join(chars) + ")")
    return notes


def lookalike_warnings(field: str, labels: Iterable[Any], *, limit: int = 5) -> list[str]:
    """Warnings for labels of one column (distinct values) that are not what they look like.

    Each suspicious label is named with its characters escaped; labels that differ but look
    the same (same skeleton) are listed together. Plain ASCII labels cost one check each.
    """
    distinct = [str(v) for v in dict.fromkeys(labels) if isinstance(v, str) and v]
    suspicious = [v for v in distinct if not (v.isascii() and v.isprintable())]
    if not suspicious:
        return []
    warnings = []
    for label in suspicious[:limit]:
        notes = _describe(label)
        if notes:
            warnings.append(f"{field} {json.dumps(label)} contains " + "; ".join(notes))
    if len(suspicious) > limit:
        warnings.append(f"... and {len(suspicious) - limit} more {field} labels with "
                        "non-ASCII or invisible characters")
    if len(suspicious) > 1_000:  # e.g. names in another script: no look-alike grouping
        return warnings
    groups: dict[str, list[str]] = {}
    suspicious_set = set(suspicious)
    plain_skeletons = {v.casefold(): v for v in distinct if v not in suspicious_set}
    for label in suspicious:
        groups.setdefault(_skeleton(label), []).append(label)
    for skeleton, members in groups.items():
        if skeleton in plain_skeletons:  # an ASCII label looks the same
            members.insert(0, plain_skeletons[skeleton])
    for members in groups.values():
        if len(members) > 1:
            shown = ", ".join(json.dumps(m) for m in members[:6])
            warnings.append(f"{len(members)} {field} labels look alike but differ: {shown}")
    return warnings


# ------------------------------------------------------------------------------ file names

_NAME_BYTES = 120  # far below NAME_MAX (255 bytes) even with a suffix and a hash


# Names Windows reserves for devices, whatever the extension (``CON.csv`` cannot be created
# or extracted there).
_RESERVED = frozenset({"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$",
                       *(f"{dev}{n}" for dev in ("COM", "LPT") for n in "0123456789¹²³")})


def _safe_stem(text: str) -> str:
    cleaned = "".join(ch if (ch.isalnum() and ch.isprintable()) or ch in "._-" else "_"
                      for ch in unicodedata.normalize("NFC", str(text)))
    cleaned = cleaned.strip("._-") or "item"
    if cleaned.split(".", 1)[0].rstrip(" ").upper() in _RESERVED:
        cleaned = f"_{cleaned}"
    return cleaned


class FileNamer:
    """Unique file names for one export (a folder or a ZIP).

    ``name(label)`` keeps letters, digits and ``._-`` of the label (the rest become ``_``),
    puts ``_`` before a name Windows reserves (``CON``, ``NUL``, ``COM1``), cuts it to 120
    UTF-8 bytes, and appends ``-`` and 8 hex digits of the label's SHA-256 when
    it was cut or when another label already took the name, so ``x/y``, ``x y`` and ``x_y``
    give three files and a 300-character id gives a short name. The same label always gets
    the same name within one namer; names are compared case-insensitively (macOS and Windows
    folders are).
    """

    def __init__(self) -> None:
        self._given: dict[str, str] = {}
        self._taken: set[str] = set()

    def name(self, label: str, *, suffix: str = "", key: str | None = None) -> str:
        """The file name for ``label`` (+ ``suffix``); ``key`` (default the label) tells
        apart two objects with one label, and is what the hash is taken of."""
        key = label if key is None else key
        if f"{key}\0{suffix}" in self._given:
            return self._given[f"{key}\0{suffix}"]
        stem = _safe_stem(label)
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
        cut = stem.encode()[:_NAME_BYTES].decode("utf-8", "ignore")
        candidate = cut if cut == stem else f"{cut}-{digest[:8]}"
        n = 8
        while (candidate + suffix).casefold() in self._taken:
            candidate = (f"{cut}-{digest[:n]}" if n <= 64
                         else f"{cut}-{digest[:8]}-{len(self._taken)}")
            n += 4
        self._taken.add((candidate + suffix).casefold())
        self._given[f"{key}\0{suffix}"] = candidate + suffix
        return candidate + suffix


from kbench_core.words import (  # noqa: E402  (re-exported: where they were first)
    count_noun,
    display_name,
    display_names,
    method_label,
    plural,
    wrap_name,
)


def safe_name(text: str) -> str:
    """A file-name-safe version of a label: letters, digits, ``._-`` (the rest become ``_``),
    at most 120 bytes (a longer label keeps 8 hex digits of its hash), never a name Windows
    reserves (:class:`kbench_core.text.FileNamer`, the rule of every export)."""
    return FileNamer().name(str(text))
