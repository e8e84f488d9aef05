"""Words and model names as a reader sees them: one display name per model (the same in every
table, figure and hover), names wrapped rather than cut, English plurals and counts, debiasing
methods KahneBench leaves unnamed.

``docs/architecture.md`` ("Model names and column labels on screen") gives the rules. Escaping
untrusted text for each destination is :mod:`kbench_core.text`'s; these functions only choose
the words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

__all__ = ["count_noun", "display_name", "display_names", "method_label", "plural",
           "unit_plural", "wrap_name"]

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


# The units kbench's families cluster or pair by, and the item nouns their data name: words a
# sentence can pluralise. Any other column name is a label, not a word ("clu", "cid").
UNIT_WORDS = frozenset({"bias", "study", "sample", "contract", "domain", "finding", "test",
                        "item", "prompt_type", "trial", "question", "task", "problem", "model",
                        "judge", "session", "document", "user", "condition", "intensity",
                        "group", "cluster", "repository", "file", "dataset", "subject"})


def unit_plural(column: str | None) -> str:
    """The plural of a unit a sentence counts, in words: the plural of a known unit
    (:data:`UNIT_WORDS`: ``sample`` → ``samples``) and ``clusters`` for any other column
    name, which is a label, not a noun (``clu`` must not read "1,733 clus"; issue 38).

    >>> [unit_plural(c) for c in ("study", "prompt_type", "clu", "cluster_id", None)]
    ['studies', 'prompt types', 'clusters', 'clusters', 'clusters']
    """
    if column is None or column.strip().lower() not in UNIT_WORDS:
        return "clusters"
    return plural(column.strip().lower())


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
