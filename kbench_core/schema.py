"""The canonical columns of each run kind (``docs/formats.md``).

One :class:`Column` per documented column: its type, whether it is required, the values it may
take and its range. :mod:`kbench_core.io` validates every row against these specs; the sample
generator writes frames that satisfy them; the docs and the app's error messages quote them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

Kind = Literal["bias", "bias_summary", "replication", "replication_summary", "judged"]
KINDS: tuple[Kind, ...] = ("bias", "bias_summary", "replication", "replication_summary",
                          "judged")

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

    kind: Kind
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
        _unit("pas", "published PAS of the study (study rows)"),
        Column("ecs", "float", low=-1.0, high=1.0,
               meaning="published ECS of the study (study rows)"),
        Column("tokens", "float", low=0.0, meaning="tokens used (as published)"),
        Column("cost", "float", low=0.0, meaning="cost in US dollars (as published)"),
        _unit("config_pas", "published configuration-level PAS (pas_raw), on each of its rows"),
        Column("config_ecs", "float", low=-1.0, high=1.0,
               meaning="published configuration-level ECS, on each of its rows"),
        Column("finding", "category",
               meaning="finding id (finding rows: sub_study_id/finding_id)"),
        _unit("finding_score", "published finding score (finding rows)"),
        Column("n_tests", "int", low=0.0, meaning="tests behind the finding (finding rows)"),
    ),
    key=("model", "study", "finding"),
    signature=frozenset({"model", "study"}),
    signature_any=frozenset({"pas", "ecs", "finding_score"}),
    signature_none=frozenset({"test", "bias"}),
    description=("published results, one row per configuration x study (pas, ecs) or per "
                 "configuration x study x finding (finding_score, n_tests)"),
)

# The human-alignment direction as KahneBench reports spell it, mapped to kbench's words.
DIRECTIONS_STD: dict[str, str] = {
    "under": "under", "aligned": "aligned", "over": "over",
    "super-human": "under", "human": "aligned", "worse than human": "over",
}

BIAS_SUMMARY = KindSpec(
    kind="bias_summary",
    columns=(
        Column("model", "category", True, meaning="model under test"),
        Column("bias", "category", True, meaning="bias id, e.g. anchoring_effect"),
        Column("category", "category", meaning="bias family"),
        _unit("bms", "overall magnitude (BMS)"),
        Column("sensitivity", "float", meaning="intensity sensitivity (slope)"),
        _unit("control_mean", "mean control score"),
        *(_unit(f"mean_{level}", f"mean treatment score, {level} trigger")
          for level in INTENSITIES),
        _unit("unknown_rate", "share of responses whose score is unknown"),
        _unit("bci_consistency", "consistency over domains (BCI)"),
        _unit("bci_mean_score", "mean of the domain scores"),
        Column("bci_std", "float", low=0.0, meaning="standard deviation of the domain scores"),
        Column("systematic", "bool", meaning="biased in most domains"),
        _unit("bmp_baseline", "treatment mean before debiasing"),
        Column("best_method", "category", meaning="most effective debiasing method"),
        _unit("effectiveness", "mitigation effectiveness (BMP)"),
        Column("requires_warning", "bool", meaning="warnings beat chain-of-thought"),
        _unit("model_rate", "model bias rate (HAS)"),
        _unit("human_rate", "human baseline rate"),
        Column("alignment", "float", high=1.0, meaning="human alignment score (HAS)"),
        Column("direction", "text", meaning="direction as the report writes it"),
        Column("direction_std", "category", allowed=("under", "aligned", "over"),
               meaning="direction as under / aligned / over"),
        _unit("rci_consistency", "response consistency (RCI)"),
        _unit("rci_mean", "mean response"),
        Column("rci_variance", "float", low=0.0, meaning="response variance"),
        Column("rci_stable", "bool", meaning="stable across trials"),
        Column("rci_trials", "int", low=0.0, meaning="trials behind RCI"),
        _unit("calibration_score", "calibration score (CAS)"),
        _unit("cas_error", "|mean confidence - accuracy|"),
        _unit("cas_confidence", "mean stated confidence"),
        _unit("cas_accuracy", "accuracy (1 - score)"),
        Column("overconfident", "bool", meaning="confidence above accuracy + 0.1"),
        _unit("metacognitive_gap", "max(0, confidence - accuracy)"),
        Column("cas_insufficient", "bool", meaning="too little confidence data for CAS"),
    ),
    key=("model", "bias"),
    signature=frozenset({"model", "bias"}),
    prefixed=(_unit("domain_", "mean score in one domain (BCI)"),
              _unit("debias_", "mean score under one debiasing method (BMP)")),
    signature_any=frozenset({"bms", "bci_consistency", "alignment", "rci_consistency",
                             "calibration_score"}),
    signature_none=frozenset({"condition"}),
    description="KahneBench fingerprint reports, one row per model x bias (no trials)",
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
        Column("claims_fixed_target", "bool",
               meaning="fixed contracts: the detector still claims the fixed vulnerability"),
    ),
    key=("sample", "model", "prompt_type", "judge"),
    signature=frozenset({"sample", "model", "judge", "said_vulnerable"}),
    description=(
        "LLM-judged vulnerability detection, one row per sample x detector x prompt x judge"
    ),
)

SPECS: dict[Kind, KindSpec] = {
    spec.kind: spec for spec in (BIAS, BIAS_SUMMARY, REPLICATION, REPLICATION_SUMMARY, JUDGED)
}

# Other names for canonical columns, by kind (HumanStudy-Bench's simple_studies.csv).
ALIASES: dict[Kind, dict[str, str]] = {
    "replication_summary": {
        "config": "model", "study_id": "study", "pas_raw": "pas",
        "total_tokens": "tokens", "total_cost": "cost",
    },
}
