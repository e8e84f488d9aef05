"""The canonical columns of each run kind (SPEC section 1).

One :class:`Column` per documented column: its type, whether it is required, the values it may
take and its range. :mod:`kbench_core.io` validates every row against these specs; the sample
generator writes frames that satisfy them; the docs and the app's error messages quote them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["bias", "replication", "replication_summary", "judged"]
KINDS: tuple[Kind, ...] = ("bias", "replication", "replication_summary", "judged")

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
    """Columns, key and detection signature of one run kind."""

    kind: Kind
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    signature: frozenset[str]
    description: str

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


def _unit(name: str, meaning: str = "", required: bool | Literal["column"] = False) -> Column:
    return Column(name, "float", required, low=0.0, high=1.0, meaning=meaning)


BIAS = KindSpec(
    kind="bias",
    columns=(
        Column("model", "category", True, meaning="model under test"),
        Column("bias", "category", True, meaning="bias id, e.g. anchoring_effect"),
        Column("condition", "category", True, allowed=CONDITIONS),
        Column("intensity", "category", allowed=INTENSITIES,
               meaning="trigger intensity; required on treatment rows"),
        Column("method", "category", meaning="debiasing method; required on debiasing rows"),
        Column("method_kind", "category", allowed=METHOD_KINDS),
        Column("domain", "category", True, meaning="ecological domain"),
        Column("trial", "int", low=0.0, meaning="repetition index"),
        Column("category", "category", meaning="bias family"),
        _unit("score", "1 = fully biased, 0 = unbiased, empty = unknown", "column"),
        _unit("confidence", "confidence the model stated"),
        Column("id", "text"),
        Column("prompt", "text"),
        Column("response", "text"),
        Column("answer", "text"),
        Column("response_ms", "float", low=0.0),
    ),
    key=("id",),
    signature=frozenset({"model", "bias", "condition", "score"}),
    description="cognitive-bias trials, one row per model response",
)

REPLICATION = KindSpec(
    kind="replication",
    columns=(
        Column("model", "category", True, meaning="agent configuration"),
        Column("study", "category", True),
        Column("finding", "category", True),
        Column("test", "text", True),
        Column("domain", "category"),
        Column("test_type", "category", allowed=TEST_TYPES,
               meaning="required with human_effect/agent_effect"),
        Column("human_effect", "float", meaning="native effect size of the human study"),
        Column("agent_effect", "float", meaning="native effect size of the agent"),
        Column("human_d", "float", meaning="Cohen's d-equivalent, human"),
        Column("agent_d", "float", meaning="Cohen's d-equivalent, agent"),
        _unit("human_pi", "posterior probability that the human effect exists"),
        _unit("agent_pi", "posterior probability that the agent effect exists"),
        Column("human_bf10", "float", low=0.0, low_open=True),
        Column("agent_bf10", "float", low=0.0, low_open=True),
        Column("human_significant", "bool"),
        Column("n_eff", "float", low=0.0, low_open=True, meaning="effective sample size"),
        Column("human_n", "float", low=0.0, low_open=True,
               meaning="sample size of the human test (for ECS_Strict's standard error)"),
        Column("agent_n", "float", low=0.0, low_open=True,
               meaning="sample size of the agent test (for ECS_Strict's standard error)"),
    ),
    key=("model", "study", "finding", "test"),
    signature=frozenset({"model", "study", "finding", "test"}),
    description="human-vs-agent replication tests, one row per model x statistical test",
)

# A replication run needs at least one complete pair of these.
REPLICATION_PAIRS: tuple[tuple[str, str], ...] = (
    ("human_effect", "agent_effect"),
    ("human_d", "agent_d"),
    ("human_pi", "agent_pi"),
    ("human_bf10", "agent_bf10"),
)

REPLICATION_SUMMARY = KindSpec(
    kind="replication_summary",
    columns=(
        Column("model", "category", True, meaning="configuration"),
        Column("study", "category", True),
        Column("title", "text"),
        _unit("pas", "published PAS of the study", "column"),
        Column("ecs", "float", "column", low=-1.0, high=1.0,
               meaning="published ECS of the study"),
        Column("tokens", "float", low=0.0),
        Column("cost", "float", low=0.0),
    ),
    key=("model", "study"),
    signature=frozenset({"model", "study", "pas", "ecs"}),
    description="published study-level results, one row per configuration x study",
)

JUDGED = KindSpec(
    kind="judged",
    columns=(
        Column("sample", "category", True, meaning="contract / item id"),
        Column("model", "category", True, meaning="detector model"),
        Column("judge", "category", True, meaning="judge model; 'human' for expert labels"),
        Column("prompt_type", "category"),
        Column("is_vulnerable", "bool", True, meaning="ground truth"),
        Column("severity", "category", allowed=SEVERITIES),
        Column("vuln_type", "category"),
        Column("said_vulnerable", "bool", True, meaning="the detector's verdict"),
        _unit("confidence", "confidence the detector expressed"),
        Column("target_found", "bool", True),
        Column("type_match", "category", allowed=TYPE_MATCHES),
        _unit("rcir", "root-cause score"),
        _unit("ava", "attack-vector score"),
        _unit("fsv", "fix-suggestion score"),
        *(Column(name, "int", low=0.0, meaning="findings by judge classification")
          for name in FINDING_COUNTS),
        Column("claimed_lines", "lines"),
        Column("true_lines", "lines"),
    ),
    key=("sample", "model", "prompt_type", "judge"),
    signature=frozenset({"sample", "model", "judge", "said_vulnerable"}),
    description=(
        "LLM-judged vulnerability detection, one row per sample x detector x prompt x judge"
    ),
)

SPECS: dict[Kind, KindSpec] = {
    spec.kind: spec for spec in (BIAS, REPLICATION, REPLICATION_SUMMARY, JUDGED)
}

# Other names for canonical columns, by kind (HumanStudy-Bench's simple_studies.csv).
ALIASES: dict[Kind, dict[str, str]] = {
    "replication_summary": {
        "config": "model", "study_id": "study", "pas_raw": "pas",
        "total_tokens": "tokens", "total_cost": "cost",
    },
}
