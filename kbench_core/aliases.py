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
   known provider followed by ``_`` (``anthropic_``, ``mistralai_``, ``x_ai_``);
3. drop date suffixes, repeatedly: ``-2025-12-11``, ``-20250929``, ``_20241022``,
   ``@20240620`` and the four-digit ``-0613`` (MMDD) snapshots;
4. split on ``-``, ``_``, ``.``, ``/`` and white space and join again with ``.`` between a
   token ending in a digit and an all-digit token (a version number: ``4_5`` → ``4.5``,
   ``llama3-1`` → ``llama3.1``) and ``-`` everywhere else, so ``claude_haiku_4.5``,
   ``claude-haiku-4-5`` and ``claude-haiku-4.5`` are all ``claude-haiku-4.5``.
"""

from __future__ import annotations

import itertools
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

__all__ = ["PROVIDERS", "AliasError", "AliasTable", "canonical_id", "load_aliases",
           "parse_aliases", "split_configuration"]

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
_SEPARATORS = re.compile(r"[-_./\s]+")
# HumanStudy-Bench's configurations end in the prompt version: "_v1-empty", "_v4-background",
# "_v1", "_example-v4".
_CONFIGURATION = re.compile(r"_((?:[a-z0-9]+-)?v\d+(?:-[a-z0-9-]+)?)$")


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
    """
    text = str(raw).casefold().strip()
    if "/" in text and text.rsplit("/", 1)[1].strip():
        text = text.rsplit("/", 1)[1].strip()
    stripped = _PROVIDER.sub("", text, count=1)
    if stripped.strip("-_. "):
        text = stripped
    while True:
        shorter = _DATE.sub("", text)
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
    prompt version (``_v1-empty``, ``_v4-background``, ``_v2``) is the configuration, the rest
    the model's raw id; ``(raw, "")`` when there is none.

    >>> split_configuration("anthropic_claude_haiku_4.5_v1-empty")
    ('anthropic_claude_haiku_4.5', 'v1-empty')
    >>> split_configuration("gpt-5.2")
    ('gpt-5.2', '')
    """
    text = str(raw).strip()
    found = _CONFIGURATION.search(text.casefold())
    if found is None or not text[:found.start()].strip("-_. "):
        return text, ""
    return text[:found.start()], found.group(1)


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
        """The aliases as an aliases TOML file (``[aliases] "canonical" = ["raw", ...]``)."""
        by: dict[str, list[str]] = {}
        for raw, canonical in sorted(self.aliases.items()):
            by.setdefault(canonical, []).append(raw)
        lines = ["[aliases]"]
        for canonical, raws in sorted(by.items()):
            listed = ", ".join(_toml_string(r) for r in raws)
            lines.append(f"{_toml_string(canonical)} = [{listed}]")
        return "\n".join(lines) + "\n"


def _toml_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in escaped) + '"'


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
                             f"ids (\"{canonical}\" = [\"raw\", ...]), got {raws!r}")
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


def load_aliases(path: str | Path | bytes, *, name: str | None = None) -> AliasTable:
    """The aliases of an aliases TOML file (a path, or its bytes with ``name`` for messages):
    ``[aliases]`` whose keys are canonical ids and whose values list raw ids. Raises
    :class:`AliasError` naming the file (and the key) when it is not TOML, has no
    ``[aliases]`` table or breaks :func:`parse_aliases`'s rules."""
    if isinstance(path, bytes):
        source, data = name or "aliases file", path
    else:
        source = name or str(path)
        try:
            data = Path(path).read_bytes()
        except OSError as error:
            raise AliasError(f"{source}: cannot read the aliases file ({error.strerror})") \
                from None
    try:
        parsed = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise AliasError(f"{source}: not a TOML aliases file ({error})") from None
    if "aliases" not in parsed:
        raise AliasError(f"{source}: no [aliases] table (write [aliases] then "
                         "\"canonical\" = [\"raw\", ...])")
    return parse_aliases(parsed["aliases"], source=source)
