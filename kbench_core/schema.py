"""What a run kind's columns are made of (``docs/formats.md``).

One :class:`Column` per documented column: its type, whether it is required, the values it may
take and its range; a :class:`KindSpec` gathers a kind's columns, key and detection signature.
Each family declares its own spec next to the rest of it (``kbench_core/families/<kind>.py``),
and the registry (:func:`kbench_core.families.kinds`) is the list of kinds: nothing here names
a kind. The vocabularies several modules share (intensities, severities, ...) stay here.

``BIAS``, ``JUDGED``, ``SPECS``, ``KINDS``, ... are still importable from here: they are looked
up in the registry on first use (:func:`__getattr__`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

# A run kind, for type hints: any string the registry holds (families.kinds()).
Kind = str

ColumnType = Literal["text", "category", "float", "int", "bool", "lines"]

INTENSITIES: tuple[str, ...] = ("weak", "moderate", "strong", "adversarial")
CONDITIONS: tuple[str, ...] = ("control", "treatment", "debiasing")
METHOD_KINDS: tuple[str, ...] = ("chain_of_thought", "warning", "other")
TEST_TYPES: tuple[str, ...] = (
    "t", "f", "anova", "correlation", "chi2", "mann_whitney", "binomial",
)
SEVERITIES: tuple[str, ...] = ("critical", "high", "medium", "low")
# Ordered from worst to best, as the agreement module's weighted kappa needs.
TYPE_MATCHES: tuple[str, ...] = ("not_mentioned", "wrong", "partial", "semantic", "exact")
FINDING_COUNTS: tuple[str, ...] = (
    "n_target_match", "n_partial_match", "n_bonus_valid", "n_hallucinated",
    "n_mischaracterized", "n_design_choice", "n_out_of_scope", "n_security_theater",
    "n_informational", "n_other_invalid",
)


@dataclass(frozen=True)
class Column:
    """One canonical column.

    ``required`` is True (every row needs a value), False (optional column, empty cells allowed)
    or ``"column"`` (the column must exist but cells may be empty, as ``score`` whose empty cell
    means "unknown"). ``allowed`` lists the values of an enumerated column; ``low``/``high`` bound
    a numeric one (inclusive unless ``low_open``).
    """

    name: str
    type: ColumnType
    required: bool | Literal["column"] = False
    allowed: tuple[str, ...] | None = None
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    meaning: str = ""

    def expectation(self) -> str:
        """What a valid cell looks like, in words, for error messages."""
        if self.allowed is not None:
            return "one of " + ", ".join(repr(v) for v in self.allowed)
        if self.type == "bool":
            return "true or false"
        if self.type == "lines":
            return "line numbers such as '12;13'"
        if self.type in ("float", "int"):
            word = "a whole number" if self.type == "int" else "a number"
            if self.low is not None and self.high is not None:
                return f"{word} in [{self.low:g}, {self.high:g}]"
            if self.low is not None:
                return f"{word} {'>' if self.low_open else '>='} {self.low:g}"
            return word
        return "text"


@dataclass(frozen=True)
class KindSpec:
    """Columns, key and detection signature of one run kind.

    A file is of this kind when it has every ``signature`` column, at least one of
    ``signature_any`` (when given) and none of ``signature_none``.
    """

    kind: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    signature: frozenset[str]
    description: str
    signature_any: frozenset[str] = frozenset()
    signature_none: frozenset[str] = frozenset()
    prefixed: tuple[Column, ...] = ()  # a family of columns: name = prefix (domain_, ...)

    def columns_of(self, names: list[str] | tuple[str, ...]) -> tuple[Column, ...]:
        """The declared columns, plus one per present column of a ``prefixed`` family (named
        as in the file, typed as its family)."""
        declared = set(self.names)
        extra = tuple(replace(family, name=name) for name in names if name not in declared
                      for family in self.prefixed if str(name).startswith(family.name))
        return self.columns + extra

    def matches(self, names: set[str]) -> bool:
        """Whether a file with these column names is of this kind."""
        return (self.signature <= names
                and (not self.signature_any or bool(self.signature_any & names))
                and not self.signature_none & names)

    def column(self, name: str) -> Column:
        for col in self.columns:
            if col.name == name:
                return col
        raise KeyError(name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(col.name for col in self.columns)

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(col.name for col in self.columns if col.required)


def unit_column(name: str, meaning: str = "",
                required: bool | Literal["column"] = False) -> Column:
    """A number in [0, 1] (a rate, a probability, a score)."""
    return Column(name, "float", required, low=0.0, high=1.0, meaning=meaning)


def __getattr__(name: str) -> object:
    """The old names, read from the registry (imported here, not at the top: the registry and
    the family modules import this module; by the time a name is asked for, it is loaded)."""
    from kbench_core import families

    if name == "SPECS":
        return {family.kind: family.spec for family in families.all_families()}
    if name == "KINDS":
        return tuple(families.kinds())
    if name == "ALIASES":
        return {family.kind: dict(family.aliases) for family in families.all_families()
                if family.aliases}
    if name.isupper() and families.is_registered(name.lower()):
        # the specs each built-in family used to keep here, by their old names (BIAS, ...)
        return families.spec(name.lower())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# The human-alignment direction as KahneBench reports spell it, mapped to kbench's words.
DIRECTIONS_STD: dict[str, str] = {
    "under": "under", "aligned": "aligned", "over": "over",
    "super-human": "under", "human": "aligned", "worse than human": "over",
}
