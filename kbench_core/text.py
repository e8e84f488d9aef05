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


def plural(noun: str) -> str:
    """The plural of an English item noun (``study`` → ``studies``, ``bias`` → ``biases``,
    ``sample`` → ``samples``), underscores read as spaces.

    >>> [plural(w) for w in ("study", "bias", "sample", "prompt_type", "day")]
    ['studies', 'biases', 'samples', 'prompt types', 'days']
    """
    word = noun.replace("_", " ")
    if word.endswith("y") and len(word) > 1 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    return word + "s"


# ------------------------------------------------------------------------------ model names

# A release date at the end of a model id: -20250929, -2025-12-11, _2024_08_06, @20240620,
# -2024-08 (the date a provider stamps on a snapshot; the family and version stay).
_DATE_SUFFIX = re.compile(r"[-_@.](?:20\d{2}[-_.]?[01]\d[-_.]?[0-3]\d|20\d{2}[-_.][01]\d)$")


# HumanStudy-Bench names a configuration ``<provider>_<family>_<version>[_temp<T>]_<method>``,
# words joined by "_" and the prompting method (``v1-empty`` ... ``v4-background``,
# ``example-v4``) by "-": ``mistralai_mistral_small_creative_temp0.5_v3-human-plus-demo``.
_CONFIG_ID = re.compile(r"^(?P<model>[^\s/:\-_][^\s/:\-]*_[^\s/:\-]+?)"
                        r"_(?P<method>v\d+(?:-[a-z0-9]+)*|example-v\d+)$")
_QUALIFIER = re.compile(r"^(\S+) (\([^()]*\))$")
_TEMPERATURE = re.compile(r"^temp(\d+(?:\.\d+)?)$")
# A provider whose model families name it already ("claude" is Anthropic's): said once, by the
# family. Other providers stay.
_FAMILIES_OF = {
    "anthropic": ("claude",), "openai": ("gpt", "o1", "o3", "o4", "chatgpt", "davinci"),
    "google": ("gemini", "gemma", "palm"), "x_ai": ("grok",), "xai": ("grok",),
    "meta": ("llama",), "meta_llama": ("llama",), "mistralai": (
        "mistral", "mixtral", "ministral", "codestral", "magistral", "devstral", "pixtral"),
    "deepseek": ("deepseek",), "qwen": ("qwen", "qwq"), "moonshotai": ("kimi", "moonshot"),
    "microsoft": ("phi",), "z_ai": ("glm",), "zhipuai": ("glm",), "cohere": ("command",),
}


def _configuration_name(model: str, method: str) -> str:
    """``claude-haiku-4.5 · v1-empty`` for HumanStudy-Bench's ``anthropic_claude_haiku_4.5``
    and ``v1-empty``: the provider dropped where the family names it, words joined by "-",
    a temperature as `` t0.5`` after the model, the method after " · "."""
    for provider, families in _FAMILIES_OF.items():
        rest = model.removeprefix(provider + "_")
        if rest != model and rest.lower().startswith(families):
            model = rest
            break
    words = model.split("_")
    temperature = [m.group(1) for w in words if (m := _TEMPERATURE.match(w))]
    words = [w for w in words if not _TEMPERATURE.match(w)]
    shown = "-".join(words) + "".join(f" t{t}" for t in temperature)
    return f"{shown} · {method}"


def display_name(model_id: Any) -> str:
    """The name a figure shows for one model id, alone (:func:`display_names` makes a set of
    them unique): the release date at the end dropped (``claude-sonnet-4-5-20250929`` →
    ``claude-sonnet-4-5``, ``gpt-5.2-2025-12-11`` → ``gpt-5.2``), and a provider token that
    the family repeats said once (``mistralai_mistral_small`` → ``mistral_small``,
    ``deepseek_deepseek_v3.2`` → ``deepseek_v3.2``, ``qwen_qwen3_next`` → ``qwen3_next``);
    provider, family and version otherwise stay as written.

    A HumanStudy-Bench configuration (``<provider>_<family>_<version>_<method>``) reads as
    model · method, the provider dropped where the family names it (``claude`` is
    Anthropic's) and a temperature kept as ``t0.5``:
    ``anthropic_claude_haiku_4.5_v1-empty`` → ``claude-haiku-4.5 · v1-empty``,
    ``mistralai_mistral_small_creative_temp0.5_v3-human-plus-demo`` →
    ``mistral-small-creative t0.5 · v3-human-plus-demo``.

    >>> display_name("claude-sonnet-4-5-20250929"), display_name("anthropic_claude_haiku_4.5")
    ('claude-sonnet-4-5', 'anthropic_claude_haiku_4.5')
    >>> display_name("x_ai_grok_4.1_fast_none_v2-human")
    'grok-4.1-fast-none · v2-human'
    """
    text = str(model_id)
    qualified = _QUALIFIER.match(text)  # "<id> (no scores)", "<id> (run name)"
    if qualified:
        base = display_name(qualified.group(1))
        if base != qualified.group(1):
            return f"{base} {qualified.group(2)}"
    shorter = _DATE_SUFFIX.sub("", text)
    text = shorter if shorter else text
    config = _CONFIG_ID.match(text)
    if config:
        return _configuration_name(config.group("model"), config.group("method"))
    parts = re.split(r"([_/:-])", text, maxsplit=2)
    if len(parts) >= 3 and parts[0] and parts[2]:
        provider, family = parts[0].lower(), parts[2].lower()
        stem = provider.removesuffix("ai") if len(provider) > 4 else provider
        if family.startswith(stem) and len(stem) >= 4:
            text = "".join(parts[2:])
    return text


def display_names(model_ids: Iterable[Any]) -> dict[str, str]:
    """One display name per model id, the same in every figure (legends, ticks, panel titles):
    :func:`display_name` of each, unless two ids would read the same (two snapshots of one
    model, ``gpt-4o-2024-05-13`` and ``gpt-4o-2024-08-06``): those keep their full ids. Tables
    and hovers show the full id. Hand-written: no library names model ids.

    >>> display_names(["gpt-4o-2024-05-13", "gpt-4o-2024-08-06", "gpt-5.2-2025-12-11"])
    {'gpt-4o-2024-05-13': 'gpt-4o-2024-05-13', 'gpt-4o-2024-08-06': 'gpt-4o-2024-08-06', \
'gpt-5.2-2025-12-11': 'gpt-5.2'}
    """
    ids = [str(m) for m in dict.fromkeys(model_ids) if m is not None]
    shown = {m: display_name(m) for m in ids}
    taken: dict[str, int] = {}
    for name in shown.values():
        taken[name] = taken.get(name, 0) + 1
    literal = set(ids)
    return {m: (name if taken[name] == 1 and (name == m or name not in literal) else m)
            for m, name in shown.items()}


_NAME_BREAK = re.compile(r"(?<=[ \-_/])")  # after a space, hyphen, underscore or slash


def wrap_name(name: Any, width: int) -> list[str]:
    """A display name in lines of at most ``width`` characters, broken only where the name
    has a separator, never inside a word: between model and method first
    (``mistral-small-creative t0.5`` / ``· v3-human-plus-demo``), then after a space, ``-``,
    ``_`` or ``/`` (``grok-4-1-fast-`` / ``reasoning``). A word longer than ``width`` stays
    whole on its own line (the caller shrinks the font); read across the lines, the name is
    whole. Hand-written: :mod:`textwrap` breaks inside hyphenated words' letters on overflow
    and drops the separators.

    >>> wrap_name("mistral-small-creative t0.5 · v3-human-plus-demo", 28)
    ['mistral-small-creative t0.5', '· v3-human-plus-demo']
    >>> wrap_name("grok-4-1-fast-reasoning", 16)
    ['grok-4-1-fast-', 'reasoning']
    >>> wrap_name("claude-sonnet-4-5", 16)
    ['claude-sonnet-', '4-5']
    """
    text = str(name)
    width = max(1, int(width))
    if len(text) <= width:
        return [text]
    lines: list[str] = []
    parts = text.split(" · ")
    for k, part in enumerate(parts):
        part = part if k == 0 else "· " + part
        if lines and len(lines[-1]) + 1 + len(part) <= width and k > 0:
            lines[-1] = f"{lines[-1]} {part}"
            continue
        if len(part) <= width:
            lines.append(part)
            continue
        line, start = "", len(lines)
        for piece in (p for p in _NAME_BREAK.split(part) if p):
            if line and len(line) + len(piece.rstrip()) > width:
                lines.append(line.rstrip())
                line = ""
            line += piece
        if line:
            lines.append(line.rstrip())
        # a version number alone on the last line ("claude-sonnet-4-" / "5") reads as a
        # stray digit: the short pieces before it go down with it ("claude-sonnet-" / "4-5")
        if len(lines) - start >= 2 and len(lines[-1]) <= 2:
            before = [p for p in _NAME_BREAK.split(lines[-2]) if p]
            while len(before) > 1 and len(lines[-1]) <= 2 + len(before[-1]) and (
                    len(before[-1]) <= 2 or len(lines[-1]) <= 2):
                lines[-1] = before.pop() + lines[-1]
            lines[-2] = "".join(before).rstrip()
    return lines


_DEBIASING = re.compile(r"^debiasing_(\d+)$")


def method_label(name: Any) -> str:
    """A debiasing method as a reader sees it. KahneBench names a method it has no name for
    by its condition, ``debiasing_0``, ``debiasing_1``, ... (a fingerprint report never has
    the names): those read ``debiasing method 1``, ``debiasing method 2``, ...; a named
    method keeps its name. The hover and the exports keep the name as written.

    >>> method_label("debiasing_0"), method_label("chain_of_thought")
    ('debiasing method 1', 'chain_of_thought')
    """
    text = str(name)
    found = _DEBIASING.match(text)
    return f"debiasing method {int(found.group(1)) + 1}" if found else text


def count_noun(count: int, noun: str) -> str:
    """``count`` and its noun, singular for one (``1 model``, ``3 models``, ``1 study``,
    ``2 studies``), never ``model(s)`` or ``1 models``.

    >>> count_noun(1, "model"), count_noun(3, "model"), count_noun(2, "study"), count_noun(0, "run")
    ('1 model', '3 models', '2 studies', '0 runs')
    """
    return f"{count:,} {noun.replace('_', ' ') if count == 1 else plural(noun)}"


def safe_name(text: str) -> str:
    """A file-name-safe version of a label: letters, digits, ``._-`` (the rest become ``_``),
    at most 120 bytes (a longer label keeps 8 hex digits of its hash), never a name Windows
    reserves (:class:`kbench_core.text.FileNamer`, the rule of every export)."""
    return FileNamer().name(str(text))
