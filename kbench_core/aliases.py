"""One model under many names: canonical model ids and the aliases that join them.

The same model is ``gpt-5.2-2025-12-11`` in a KahneBench report, ``gpt-5.2`` in BlockBench and
``openai_gpt_5.2_v1-empty`` (a *configuration*: model + prompt version) in HumanStudy-Bench.
:func:`canonical_id` turns a raw id into one spelling by rule; an aliases TOML file
(:func:`load_aliases`, ``docs/formats.md`` "Aliases and profiles") corrects or adds joins the
rule cannot see; :class:`AliasTable` applies both and lists every raw id it joined, so a join
is always shown, never silent.

The rule (``canonical_id``), written by hand because it is kbench's own convention:

1. casefold, strip surrounding white space;
2. drop a provider prefix: anything up to the last ``/`` (``openai/``, ``meta-llama/``), or one
   known provider followed by ``_`` (``anthropic_``, ``mistralai_``, ``x_ai_``) when a model
   name follows it: not when what follows is a version or a size (``deepseek_v3.2`` is
   DeepSeek's model ``deepseek-v3.2``, ``mistral_7b`` Mistral's ``mistral-7b``);
3. drop date suffixes and a release-stage ``preview``, repeatedly: ``-2025-12-11``,
   ``-20250929``, ``_20241022``, ``@20240620``, the four-digit ``-0613`` (MMDD) snapshots and
   ``-preview`` (``gemini_3_pro_preview`` is ``gemini-3-pro``; ``-preview-05-06`` too);
4. split on ``-``, ``_``, ``.``, ``/`` and white space and join again with ``.`` between a
   token ending in a digit and an all-digit token (a version number: ``4_5`` → ``4.5``,
   ``llama3-1`` → ``llama3.1``) and ``-`` everywhere else, so ``claude_haiku_4.5``,
   ``claude-haiku-4-5`` and ``claude-haiku-4.5`` are all ``claude-haiku-4.5``.
"""

from __future__ import annotations

import itertools
import re
import stat
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import tomli_w

__all__ = ["MAX_ALIASES_BYTES", "NEAR_COLUMNS", "PROVIDERS", "AliasError", "AliasTable",
           "canonical_id", "load_aliases", "near_matches", "parse_aliases", "split_configuration"]

# An aliases file lists a few hundred ids at most; a bigger one is refused before parsing.
MAX_ALIASES_BYTES = 1024**2

# Provider prefixes written with "_" (HumanStudy-Bench joins provider and model with "_");
# a "/" prefix of any provider is dropped without a list.
PROVIDERS: tuple[str, ...] = (
    "anthropic", "openai", "google", "mistralai", "mistral", "x_ai", "x-ai", "xai",
    "meta_llama", "meta-llama", "meta", "deepseek", "qwen", "cohere", "ai21", "amazon",
    "microsoft", "nvidia", "moonshotai", "z_ai", "z-ai", "zhipu", "perplexity", "together",
    "openrouter", "bedrock", "vertex_ai", "azure")

_PROVIDER = re.compile(r"^(?:" + "|".join(re.escape(p) for p in
                                         sorted(PROVIDERS, key=len, reverse=True)) + r")_")
_MONTH = r"(?:0[1-9]|1[0-2])"
_DAY = r"(?:0[1-9]|[12]\d|3[01])"
# A date at the end, after a separator: 2025-12-11, 20250929, 2024_10_22, and MMDD (0613).
_DATE = re.compile(rf"[-_.@\s](?:20\d\d[-_.]?{_MONTH}[-_.]?{_DAY}|{_MONTH}{_DAY})$")
# A release stage, not another model: "-preview", optionally with its month and day.
_PREVIEW = re.compile(rf"[-_.@\s]preview(?:[-_.]{_MONTH}[-_.]?{_DAY})?$")
_SEPARATORS = re.compile(r"[-_./\s]+")
# What follows a provider prefix when the prefix is the model's own name: a version ("v3.2")
# or a size ("7b"), not a model name ("deepseek_v3.2", "mistral_7b").
_NOT_A_NAME = re.compile(r"^(?:v\d|\d)")
# HumanStudy-Bench's configurations end in the prompt version: "_v1-empty", "_v4-background",
# "_v1", "_example-v4"; its effect lists' reader writes "Model (Method)" ("Gemini 3 Flash
# (v4-background)").
_VERSION = r"(?:[a-z0-9]+-)?v\d+(?:-[a-z0-9-]+)?"
_CONFIGURATION = re.compile(rf"_({_VERSION})$")
_CONFIGURATION_PAREN = re.compile(rf"\s*\(\s*({_VERSION})\s*\)$")


def canonical_id(raw: str) -> str:
    """The canonical id of a raw model id (the rule in the module docstring).

    >>> canonical_id("claude_haiku_4.5"), canonical_id("claude-haiku-4-5")
    ('claude-haiku-4.5', 'claude-haiku-4.5')
    >>> canonical_id("openai/GPT-5.2-2025-12-11")
    'gpt-5.2'
    >>> canonical_id("anthropic_claude_3_5_sonnet_20241022")
    'claude-3.5-sonnet'
    >>> canonical_id("x_ai_grok_4.1_fast"), canonical_id("meta-llama/Llama-3-70b")
    ('grok-4.1-fast', 'llama-3-70b')
    >>> canonical_id("deepseek_v3.2"), canonical_id("gemini_3_pro_preview")
    ('deepseek-v3.2', 'gemini-3-pro')
    """
    text = str(raw).casefold().strip()
    if "/" in text and text.rsplit("/", 1)[1].strip():
        text = text.rsplit("/", 1)[1].strip()
    stripped = _PROVIDER.sub("", text, count=1)
    if stripped.strip("-_. ") and not _NOT_A_NAME.match(stripped.lstrip("-_. ")):
        text = stripped
    while True:
        shorter = _PREVIEW.sub("", _DATE.sub("", text))
        if shorter == text or not shorter.strip("-_.@ "):
            break
        text = shorter
    tokens = [t for t in _SEPARATORS.split(text) if t]
    if not tokens:
        return text
    out = tokens[0]
    for before, token in itertools.pairwise(tokens):
        out += ("." if before[-1].isdigit() and token.isdigit() else "-") + token
    return out


def split_configuration(raw: str) -> tuple[str, str]:
    """``(model raw id, configuration)`` of a HumanStudy-Bench configuration id: the trailing
    prompt version (``_v1-empty``, ``_v4-background``, ``_v2``, or in brackets as the reader
    of HumanStudy-Bench's effect lists writes it, `` (v4-background)``) is the configuration,
    the rest the model's raw id; ``(raw, "")`` when there is none.

    >>> split_configuration("anthropic_claude_haiku_4.5_v1-empty")
    ('anthropic_claude_haiku_4.5', 'v1-empty')
    >>> split_configuration("Gemini 3 Flash (v4-background)")
    ('Gemini 3 Flash', 'v4-background')
    >>> split_configuration("gpt-5.2")
    ('gpt-5.2', '')
    """
    text = str(raw).strip()
    for pattern in (_CONFIGURATION, _CONFIGURATION_PAREN):
        found = pattern.search(text.casefold())
        if found is not None and text[:found.start()].strip("-_. "):
            return text[:found.start()], found.group(1)
    return text, ""


class AliasError(ValueError):
    """An aliases file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class AliasTable:
    """Raw id → canonical id: the user's aliases first (matched case-insensitively on the raw
    id as written, then on its canonical form), the rule (:func:`canonical_id`) otherwise.

    ``aliases`` maps a raw id (casefolded) to the canonical id it is declared under;
    ``source`` names where the aliases came from (a file, "the app")."""

    aliases: Mapping[str, str] = field(default_factory=dict)
    source: str = ""

    def canonical(self, raw: str) -> str:
        """The canonical id of ``raw``."""
        key = str(raw).casefold().strip()
        if key in self.aliases:
            return self.aliases[key]
        rule = canonical_id(raw)
        return self.aliases.get(rule, rule)

    def how(self, raw: str) -> str:
        """``alias`` when the user's aliases decide ``raw``'s canonical id, else ``rule``."""
        key = str(raw).casefold().strip()
        return "alias" if key in self.aliases or canonical_id(raw) in self.aliases else "rule"

    def join(self, raw_ids: Iterable[str], *, configurations: bool = False) -> pd.DataFrame:
        """Every raw id with what it was joined to: ``raw_id``, ``model`` (canonical),
        ``configuration`` (the HumanStudy-Bench prompt version when ``configurations``, else
        empty) and ``how`` (``alias`` or ``rule``). A full raw id in the aliases wins over its
        model part, so a configuration can be moved on its own."""
        rows = []
        for raw in dict.fromkeys(map(str, raw_ids)):
            model_raw, configuration = (split_configuration(raw) if configurations
                                        else (raw, ""))
            key = raw.casefold().strip()
            if key in self.aliases:
                model, how = self.aliases[key], "alias"
            else:
                model, how = self.canonical(model_raw), self.how(model_raw)
            rows.append({"raw_id": raw, "model": model, "configuration": configuration,
                         "how": how})
        return pd.DataFrame(rows, columns=["raw_id", "model", "configuration", "how"])

    def with_alias(self, raw: str, canonical: str) -> AliasTable:
        """A copy with one more alias (``raw`` → ``canonical``); raises :class:`AliasError`
        when either is empty or ``raw`` is already declared under another canonical id."""
        return parse_aliases({canonical: [raw]}, source="the app", base=self)

    def as_toml(self) -> str:
        """The aliases as an aliases TOML file (``[aliases] "canonical" = ["raw", ...]``),
        written by ``tomli_w`` so that :func:`load_aliases` reads back exactly these aliases
        whatever characters the ids hold (a hand-made writer escaped characters above U+FFFF
        as ``\\u`` and five hex digits, which TOML reads as another text)."""
        by: dict[str, list[str]] = {}
        for raw, canonical in sorted(self.aliases.items()):
            by.setdefault(canonical, []).append(raw)
        return tomli_w.dumps({"aliases": dict(sorted(by.items()))})


def parse_aliases(table: Mapping[str, object], *, source: str = "aliases",
                  base: AliasTable | None = None) -> AliasTable:
    """An :class:`AliasTable` from ``{canonical: [raw, ...]}`` (the ``[aliases]`` table of
    an aliases file), added to ``base``. Raises :class:`AliasError` naming ``source`` and the
    key for a canonical id that is not a non-empty text, a value that is not a list of
    non-empty texts, a raw id listed twice, or a raw id claimed by two canonical ids."""
    if not isinstance(table, Mapping):
        raise AliasError(f"{source}: [aliases] must be a table of \"canonical\" = [\"raw\", ...]")
    out = dict(base.aliases) if base is not None else {}
    for canonical, raws in table.items():
        name = str(canonical).strip()
        if not isinstance(canonical, str) or not name:
            raise AliasError(f"{source}: an alias key must be a non-empty canonical id, "
                             f"got {canonical!r}")
        if not isinstance(raws, list) or not all(isinstance(r, str) and r.strip()
                                                 for r in raws):
            raise AliasError(f"{source}: aliases.{canonical!r} must be a list of non-empty raw "
                             f"ids (\"{canonical}\" = [\"raw\", ...]), got {_short(raws)}")
        if any(_SURROGATE.search(text) for text in (name, *raws)):
            # (a lone surrogate cannot be written to a file, so it could never be downloaded)
            raise AliasError(f"{source}: aliases.{canonical!r} holds a lone surrogate "
                             "character, which is not text a file can hold")
        seen: set[str] = set()
        for raw in raws:
            key = raw.casefold().strip()
            if key in seen:
                raise AliasError(f"{source}: aliases.{canonical!r} lists {raw!r} twice")
            seen.add(key)
            if key in out and out[key] != name.casefold():
                raise AliasError(f"{source}: raw id {raw!r} is claimed by two canonical ids, "
                                 f"{out[key]!r} and {name.casefold()!r} (aliases.{canonical!r})")
            out[key] = name.casefold()
    where = source if base is None or not base.source else f"{base.source}; {source}"
    return AliasTable(aliases=out, source=where)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _short(value: object) -> str:
    try:
        text = repr(value)
    except RecursionError:  # a value nested deeper than repr goes
        text = f"a {type(value).__name__} nested too deeply to show"
    return text if len(text) <= 80 else text[:77] + "..."


def _read(path: str | Path, source: str) -> bytes:
    # Only a regular file, checked before it is opened (a FIFO would block the read), and
    # not a byte past MAX_ALIASES_BYTES.
    try:
        info = Path(path).stat()
        if not stat.S_ISREG(info.st_mode):
            raise AliasError(f"{source}: cannot read the aliases file (not a regular file)")
        if info.st_size > MAX_ALIASES_BYTES:
            raise AliasError(f"{source}: an aliases file over 1 MB is not read")
        with open(path, "rb") as handle:
            return handle.read(MAX_ALIASES_BYTES + 1)
    except OSError as error:
        raise AliasError(f"{source}: cannot read the aliases file "
                         f"({error.strerror or type(error).__name__})") from None


def load_aliases(path: str | Path | bytes, *, name: str | None = None) -> AliasTable:
    """The aliases of an aliases TOML file (a path, or its bytes with ``name`` for messages):
    ``[aliases]`` whose keys are canonical ids and whose values list raw ids.

    Every failure is an :class:`AliasError` naming the file and the reason: not a regular
    file or not readable, over :data:`MAX_ALIASES_BYTES`, not UTF-8, not TOML (nested too
    deeply for the parser included: a 2 KB file of 1,000 nested arrays raised RecursionError),
    no ``[aliases]`` table, or a break of :func:`parse_aliases`'s rules."""
    if isinstance(path, bytes):
        source, data = name or "aliases file", path
    else:
        source = name or str(path)
        data = _read(path, source)
    if len(data) > MAX_ALIASES_BYTES:
        raise AliasError(f"{source}: an aliases file over 1 MB is not read")
    try:
        parsed = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise AliasError(f"{source}: not a TOML aliases file ({error})") from None
    except RecursionError:
        raise AliasError(f"{source}: not a TOML aliases file (nested too deeply to read)") \
            from None
    except Exception as error:  # whatever else the parser meets, said as the file's
        raise AliasError(f"{source}: not a TOML aliases file "
                         f"({type(error).__name__}: {_short(str(error))})") from None
    if "aliases" not in parsed:
        raise AliasError(f"{source}: no [aliases] table (write [aliases] then "
                         "\"canonical\" = [\"raw\", ...])")
    return parse_aliases(parsed["aliases"], source=source)


NEAR_COLUMNS = ["model", "suggested", "why", "raw_ids", "runs", "suggested_raw_ids",
                "suggested_runs"]
_WHY = {"spelling": "the same name written with other separators",
        "order": "the same words in another order",
        "longer": "its first words are the suggested id (a variant or a fuller name)"}


def near_matches(table: pd.DataFrame) -> pd.DataFrame:
    """Canonical ids of ``table`` (a :func:`kbench_core.profile.profile` table, or any frame
    with ``model``, ``raw_ids`` and ``run``) that the rule did not join but that may name one
    model: suggestions for the user to accept into the aliases file, never joins made here.

    Two canonical ids that no run holds both of (a run's models are distinct by definition:
    HumanStudy-Bench's ``mistral-small-creative`` and ``mistral-small-creative-temp0.1`` stay
    apart) are near when they are

    - ``spelling``: equal once their ``-`` are removed (``llama3.1-8b`` under
      ``llama-3.1-8b``, the id in more runs, else with more words);
    - ``order``: the same words in another order (``claude-3.5-sonnet``,
      ``claude-sonnet-3.5``);
    - ``longer``: one's words are the first words of the other, two at least
      (``grok-4.1-fast`` and ``grok-4.1-fast-reasoning``); the longer is suggested under the
      shorter. Versions are words, so ``claude-opus-4.5`` is never near ``claude-opus-4.6``.

    One row per pair, columns :data:`NEAR_COLUMNS`: ``model`` the id to move, ``suggested``
    the id to join it to (accepting the row is the alias ``suggested = [model]``; an id
    suggested under one that is itself moved is suggested where that one goes), ``why``, and
    the raw ids and runs of each (", "-joined)."""
    if not len(table):
        return pd.DataFrame(columns=NEAR_COLUMNS)
    data = table[["model", "raw_ids", "run"]].astype(str).drop_duplicates()
    runs = data.groupby("model")["run"].agg(lambda r: frozenset(r))
    raws = data.groupby("model")["raw_ids"].agg(lambda r: ", ".join(dict.fromkeys(r)))
    ids = sorted(runs.index)
    known = set(ids)
    pairs: dict[tuple[str, str], str] = {}

    def add(a: str, b: str, why: str) -> None:
        if a != b and not runs[a] & runs[b]:
            pairs.setdefault((a, b) if a < b else (b, a), why)

    by_spelling: dict[str, list[str]] = {}
    by_order: dict[tuple[str, ...], list[str]] = {}
    for name in ids:
        words = name.split("-")
        by_spelling.setdefault(name.replace("-", ""), []).append(name)
        by_order.setdefault(tuple(sorted(words)), []).append(name)
        for k in range(2, len(words)):
            prefix = "-".join(words[:k])
            if prefix in known:
                add(prefix, name, "longer")
    for why, groups in (("spelling", by_spelling), ("order", by_order)):
        for names in groups.values():
            for a, b in itertools.combinations(names, 2):
                add(a, b, why)
    moves: list[tuple[str, str, str]] = []
    for (a, b), why in sorted(pairs.items()):
        if why == "longer":  # the longer id under the shorter
            model, suggested = (b, a) if len(b.split("-")) > len(a.split("-")) else (a, b)
        else:  # under the id of more runs, then of more separate words, then alphabetically
            model, suggested = sorted((a, b), key=lambda m: (len(runs[m]), m.count("-"), m))
        moves.append((model, suggested, _WHY[why]))
    # An id suggested under one that is itself moved goes where that one goes (A under B and
    # B under C: A under C), so accepting every suggestion joins all three instead of leaving
    # A under a name nothing else carries; never onto an id one of its runs also holds.
    first_target = {}
    for model, suggested, _ in moves:
        first_target.setdefault(model, suggested)
    rows, seen = [], set()
    for model, suggested, why in moves:
        target, visited = suggested, {model}
        while (target in first_target and target not in visited
               and not runs[model] & runs[first_target[target]]
               and first_target[target] != model):
            visited.add(target)
            target = first_target[target]
        if (model, target) in seen:
            continue
        seen.add((model, target))
        rows.append({"model": model, "suggested": target, "why": why,
                     "raw_ids": raws[model], "runs": ", ".join(sorted(runs[model])),
                     "suggested_raw_ids": raws[target],
                     "suggested_runs": ", ".join(sorted(runs[target]))})
    return pd.DataFrame(rows, columns=NEAR_COLUMNS)
