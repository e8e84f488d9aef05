"""LLM-judged vulnerability detection (BlockBench): one row per sample × detector × prompt type
× judge.

Metrics in :mod:`kbench_core.vuln` and :mod:`kbench_core.agreement` (``docs/metrics/vuln.md``,
``docs/metrics/agreement.md``); the page is ``views/vuln.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from kbench_core.catalog import RELIABILITY_PAGE, Item, split_pages
from kbench_core.families._agreement import AgreementOptions
from kbench_core.families._base import CompareDefaults, Family, Options, PageInfo, Profile
from kbench_core.families._judged_sources import _judge_answers, fixed_versions
from kbench_core.families._judges import (
    MAJORITY,
    ConsensusOptions,
    check_judges,
    default_judge,
    judge_views,
    leaderboard_groups,
    majority_provenance,
    offered_judges,
)
from kbench_core.schema import (
    FINDING_COUNTS,
    SEVERITIES,
    TYPE_MATCHES,
    Column,
    KindSpec,
    unit_column,
)

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from kbench_core.io import Run

__all__ = ["FAMILY", "MAJORITY", "AgreementOptions", "ConsensusOptions", "Keys", "TierOptions",
           "check_judges", "default_judge", "difficulty_tdr", "fixed_versions", "judge_views",
           "leaderboard", "leaderboard_groups", "majority_provenance"]


class Keys:
    """The Vulnerability detection page's widget keys (also the names of its link
    parameters); the family's page entry names its own from here, and the majority vote's
    controls (``VOTERS``, ``MIN_VOTES``, ``FAILED_AS``) are the Judge agreement kit's
    ``MAJORITY_KEYS``."""

    RUNS = "vuln_runs"
    MODELS = "vuln_models"
    JUDGE = "vuln_judge"
    DRILL_MODEL = "vuln_drill_model"
    DRILL_SAMPLE = "vuln_drill_sample"
    VOTERS = "vuln_voters"
    MIN_VOTES = "vuln_min_votes"
    FAILED_AS = "vuln_failed_as"
    SPLIT = "vuln_split"
    PARTIAL = "vuln_partial"
    SEVERITY = "vuln_severity"
    ZERO = "vuln_zero"
    BOOTSTRAP = "vuln_bootstrap"
    WEIGHT = "vuln_w_"  # + the SUI component
    WEIGHTS_RESET = "vuln_w_reset"
    BINNING = "vuln_binning"
    BINS = "vuln_bins"
    RELIABILITY_PROMPT = "vuln_rel_prompt"
    PROMPT_METRIC = "vuln_prompt_metric"
    DRILL_SEARCH = "vuln_drill_search"
    DRILL_PROMPT = "vuln_drill_prompt"
    COMPARE = "vuln_cmp"
    RUN_GROUP = "vuln_run_group"



# The columns of this run kind (docs/formats.md): they belong with the family.
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
        # Empty only in a failed judgement's row (``failed_judgement`` says why, docs/formats.md):
        # a judge whose record could not be read leaves the answer's labels missing.
        Column("said_vulnerable", "bool", "column", meaning="the detector's verdict"),
        unit_column("confidence", "confidence the detector expressed"),
        Column("target_found", "bool", "column"),
        Column("type_match", "category", allowed=TYPE_MATCHES),
        unit_column("rcir", "root-cause score"),
        unit_column("ava", "attack-vector score"),
        unit_column("fsv", "fix-suggestion score"),
        *(Column(name, "int", low=0.0, meaning="findings by judge classification")
          for name in FINDING_COUNTS),
        Column("claimed_lines", "lines"),
        Column("true_lines", "lines"),
        Column("claims_fixed_target", "bool",
               meaning="fixed contracts: the detector still claims the fixed vulnerability"),
        Column("failed_judgement", "text",
               meaning="why the judgement failed (its labels are then empty)"),
    ),
    key=("sample", "model", "prompt_type", "judge"),
    signature=frozenset({"sample", "model", "judge", "said_vulnerable"}),
    description=(
        "LLM-judged vulnerability detection, one row per sample x detector x prompt x judge"
    ),
)


@dataclass(frozen=True)
class TierOptions(Options):
    """The options of the seven tiers as the Vulnerability page and the exports set them.

    ``sui_weights`` empty means the seed's weights; ``bootstrap`` adds the composites'
    intervals (and the SUI rank interval). :meth:`tiers` gives the keyword arguments of
    :func:`kbench_core.vuln.tiers`, :meth:`provenance` what an exported file records.
    """

    partial_credit: float = 1.0
    severity_weighted: bool = False
    zero_division: Literal["seed", "nan"] = "seed"
    bootstrap: bool = False
    n_bins: int = 10
    binning: Literal["uniform", "quantile"] = "uniform"
    sui_weights: tuple[tuple[str, float], ...] = ()

    @classmethod
    def from_mapping(cls, options: Mapping[str, Any] | None) -> TierOptions:
        """The options named in ``options`` (others ignored), the rest at their defaults; SUI
        weights may come as a mapping."""
        given = dict(options or {}) if not isinstance(options, TierOptions) else options
        if isinstance(given, dict) and isinstance(given.get("sui_weights"), Mapping):
            given["sui_weights"] = tuple(sorted(given["sui_weights"].items()))
        return super().from_mapping(given)

    def weights(self) -> dict[str, float]:
        """SUI's weights (the seed's unless set)."""
        from kbench_core.vuln import SUI_WEIGHTS

        return {**SUI_WEIGHTS, **dict(self.sui_weights)}

    def tiers(self, *, with_weights: bool = True) -> dict[str, Any]:
        """Keyword arguments of :func:`kbench_core.vuln.tiers` (``with_weights=False``: the
        seed's SUI weights, for tables re-weighted afterwards with
        :func:`kbench_core.vuln.reweight_sui`)."""
        from kbench_core.vuln import SEVERITY_WEIGHTS, SUI_WEIGHTS

        return dict(partial_credit=self.partial_credit,
                    severity_weights=SEVERITY_WEIGHTS if self.severity_weighted else None,
                    zero_division=0.0 if self.zero_division == "seed" else np.nan,
                    ci="bootstrap" if self.bootstrap else None, n_bins=self.n_bins,
                    binning=self.binning,
                    sui_weights=self.weights() if with_weights else dict(SUI_WEIGHTS))

    def provenance(self) -> dict[str, Any]:
        """The options as an exported file records them."""
        out = asdict(self)
        out["sui_weights"] = self.weights()
        return out


def leaderboard(tiers: pd.DataFrame) -> pd.DataFrame:
    """A :func:`kbench_core.vuln.tiers` table as the leaderboard shows it: ranked by SUI
    (1 = best, undefined last), with ``rank_text`` (the SUI rank interval when the tiers were
    bootstrapped; "few samples" below 30 samples)."""
    from kbench_core.ranking import rank_by

    return rank_by(tiers, "sui", few_label="few samples")


def difficulty_tdr(tiers: pd.DataFrame, by_difficulty: pd.DataFrame) -> pd.DataFrame:
    """One row per detector (and judge): TDR per difficulty tier (``tdr_t1`` …, with
    ``n_vulnerable_t1`` …), the unweighted mean over the tiers ``tdr_difficulty_mean``
    (BlockBench's DS "Avg") with its own (MOVER) interval and the TDR pooled over answers
    with its interval, from :func:`kbench_core.vuln.tiers` by model and by (model,
    difficulty)."""
    per = by_difficulty[by_difficulty["difficulty"].notna()].copy()
    per["model"] = per["model"].astype(str)
    per["difficulty"] = per["difficulty"].astype(str)
    wide = per.pivot(index="model", columns="difficulty", values=["tdr", "n_vulnerable"])
    wide.columns = [f"{name}_{tier}" for name, tier in wide.columns]
    tiers_ = sorted(per["difficulty"].unique())
    order = [c for tier in tiers_ for c in (f"tdr_{tier}", f"n_vulnerable_{tier}")]
    base = tiers.assign(model=tiers["model"].astype(str))
    keep = [c for c in ("model", "judge", "tdr_difficulty_mean", "tdr_difficulty_mean_low",
                        "tdr_difficulty_mean_high", "n_difficulties", "tdr",
                        "tdr_low", "tdr_high", "n_vulnerable", "n_samples", "few_items")
            if c in base]
    return base[keep].merge(wide[order].reset_index(), on="model", how="left")


def _per_item(frame: pd.DataFrame) -> pd.DataFrame:
    """``correct`` = 1 when said_vulnerable == is_vulnerable (NaN when the verdict is missing,
    e.g. a failed judgement); ``target_found_vulnerable`` = target_found on vulnerable samples
    only (NaN on safe ones, where a target cannot be found)."""
    said = frame["said_vulnerable"].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    truth = frame["is_vulnerable"].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    found = frame["target_found"].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    known = np.isfinite(said) & np.isfinite(truth)
    return frame.assign(correct=np.where(known, (said == truth).astype(float), np.nan),
                        target_found_vulnerable=np.where(truth == 1, found, np.nan))


def _lower() -> frozenset[str]:
    from kbench_core.vuln import LOWER_IS_BETTER

    return LOWER_IS_BETTER | {"false_positive_rate", "fixed_claim_rate"}


# ``ece`` is the plug-in (biased upward) and travels with the debiased ℓ2 error beside it;
# ``tdr_difficulty_mean`` (BlockBench's DS "Avg") exists only for runs with difficulty tiers.
_TIER_COLUMNS = ["rank", "rank_text", "model", "judge", "n", "n_samples", "few_items",
                 "accuracy", "f2", "tdr", "tdr_difficulty_mean", "n_difficulties",
                 "lucky_guess_rate", "finding_precision", "hallucination_rate",
                 "avg_reasoning", "ece", "ece_l2_debiased", "brier", "sui", "tus", "lgi",
                 "renormalised"]


def main_columns(table: pd.DataFrame) -> pd.DataFrame:
    """The columns of a tier leaderboard the main table shows (:data:`_TIER_COLUMNS` and
    their intervals); ``_engine_tables`` (an engine's cells) shows the same."""
    keep = [c for c in table.columns
            if c in _TIER_COLUMNS or (c.removesuffix("_low").removesuffix("_high")
            in _TIER_COLUMNS and c.endswith(("_low", "_high")))]
    return table[keep]


def _catalog() -> list[Item]:
    from kbench_core import vuln
    from kbench_core.families._judged_sources import FrameJudged
    from kbench_core.figures import vuln as vuln_figures

    # Every builder reads the run through a source (FrameJudged: its rows; EngineJudged: an
    # engine's sums, kbench_core.families._judged_sources), each view's answers as rows or as
    # the cells vuln.tiers and vuln.reliability read alike.

    def tier_table(rows: Any, options: Mapping[str, Any]) -> pd.DataFrame:
        return vuln.tiers(rows, **TierOptions.from_mapping(options).tiers())

    def tiers(src: Any, options: Mapping[str, Any]):
        # The majority of several LLM judges first, then each judge (docs/metrics/agreement.md).
        for judge, rows in src.views(options):
            yield judge, main_columns(leaderboard(tier_table(rows, options)))

    def difficulty_table(src: Any, options: Mapping[str, Any]):
        if not src.has_values("difficulty"):
            return
        for judge, rows in src.views(options):
            if "difficulty" not in rows.columns:  # a view that lost the column has no tiers
                continue
            yield judge, difficulty_tdr(tier_table(rows, options), vuln.tiers(
                rows, by=("model", "difficulty"), **TierOptions.from_mapping(options).tiers()))

    def fixed_table(src: Any, options: Mapping[str, Any]):
        if not src.has_values("claims_fixed_target"):
            return
        table = src.fixed_versions(options)
        if len(table):
            yield "", table

    def fixed_figure(src: Any, options: Mapping[str, Any]):
        for _, table in fixed_table(src, options):
            yield "", vuln_figures.fixed_claims_chart(table)

    def reliability(src: Any, options: Mapping[str, Any]):
        chosen = TierOptions.from_mapping(options)
        for judge, rows in src.views(options):
            table = vuln.reliability(rows, n_bins=chosen.n_bins, binning=chosen.binning)
            models = sorted(map(str, table["model"].unique()))
            pages = split_pages(models, RELIABILITY_PAGE)
            for k, page in enumerate(pages, start=1):
                part = table[table["model"].astype(str).isin(page)]
                suffix = judge if len(pages) == 1 else f"{judge}-p{k}"
                yield suffix, vuln_figures.reliability_diagram(
                    part, title=f"Reliability of stated confidence ({judge})"
                    + (f", page {k} of {len(pages)}" if len(pages) > 1 else ""))

    def sui(src: Any, options: Mapping[str, Any]):
        for judge, rows in src.views(options):
            table = tier_table(rows, options)
            yield judge, vuln_figures.sui_leaderboard(
                table, vuln.sui_contributions(
                    table, sui_weights=TierOptions.from_mapping(options).weights()),
                title=f"Security Understanding Index (SUI) and what it is made of ({judge})")

    def lucky(src: Any, options: Mapping[str, Any]):
        for judge, rows in src.views(options):
            yield judge, vuln_figures.lucky_guess_chart(tier_table(rows, options))

    def prompt_types(src: Any, options: Mapping[str, Any]):
        if not src.has_values("prompt_type"):
            return
        for judge, rows in src.views(options):
            yield judge, vuln_figures.prompt_type_chart(
                vuln.tiers(rows, by=("model", "prompt_type"),
                           **TierOptions.from_mapping(options).tiers()),
                title=f"Target detection rate by prompt type ({judge})")

    def several_judges(src: Any) -> bool:
        return len([j for j in vuln.judges_of(src.judges) if j != "human"]) >= 2

    def kappa(src: Any, options: Mapping[str, Any]):
        from kbench_core.figures import agreement as agreement_figures

        if several_judges(src):
            # the rule for failed judgements (--failed-as) is named in the title
            pairs, rule = src.kappa("target_found",
                                    ConsensusOptions.from_mapping(options).failed_as)
            said = "failed = not found" if rule == "not_found" else "failed left out"
            yield "target_found", agreement_figures.kappa_heatmap(
                pairs, label=f"target_found ({said})")

    def spread(src: Any, options: Mapping[str, Any]):
        from kbench_core.figures import agreement as agreement_figures

        if several_judges(src):
            yield "", agreement_figures.judge_spread_chart(src.spread(options))

    def item(name: str, title: str, what: Literal["figure", "table"], make: Any,
             **extra: Any) -> Item:
        def from_tables(tables: Mapping[str, Any], options: Mapping[str, Any]):
            kept = tables["engine"]  # an EngineJudged: its queries guarded as its first
            with kept.guard():
                yield from make(kept, options)

        return Item(name, title, what,
                    lambda frame, options: make(FrameJudged(frame), options),
                    from_tables=from_tables, **extra)

    best = {m: "min" if m in vuln.LOWER_IS_BETTER else "max"
            for m in vuln.HIGHER_IS_BETTER | vuln.LOWER_IS_BETTER}
    return [
        item("tiers", "The seven tiers per detector, one table per judge (the majority of "
             "several judges first)", "table", tiers,
             best=best, main=True),
        item("sui_chart", "SUI and what it is made of, per judge", "figure", sui),
        item("difficulty", "Target detection rate per difficulty tier and their mean, beside "
             "the pooled TDR, per judge", "table", difficulty_table),
        item("reliability", "Reliability diagram, per judge", "figure", reliability),
        item("fixed_versions", "Fixed versions: still claims the fixed bug, beside TDR (per "
             "judge and by consensus)", "table", fixed_table,
             best={"fixed_claim_rate": "min", "tdr": "max"}),
        item("fixed_versions_chart", "Fixed versions: still claims the fixed bug, beside TDR",
             "figure", fixed_figure),
        item("lucky_guesses", "Accuracy against target detection, per judge", "figure", lucky),
        item("prompt_types", "Target detection rate by prompt type, per judge", "figure",
             prompt_types),
        item("kappa_heatmap", "Cohen's kappa between judges", "figure", kappa),
        item("judge_spread", "TDR and SUI across judges", "figure", spread),
    ]


# A verdict or found label may be empty only in a failed judgement's row, which says why.
FAILED_LABELS = ("said_vulnerable", "target_found")


def _rules(columns: Mapping[str, Any], frame: pd.DataFrame, add) -> None:
    """No judge may be called ``majority``: that is the consensus's label, and a judge of that
    name would print as a second consensus beside the real one. ``said_vulnerable`` and
    ``target_found`` are empty only in a failed judgement's row, whose ``failed_judgement``
    says why (docs/formats.md: a failed judgement is kept as a row with missing labels); anywhere
    else an empty cell is a missing value, as for any required column."""
    if "judge" not in columns:  # the file-level pass: nothing to check
        return
    reason = columns.get("failed_judgement")
    for name in FAILED_LABELS:
        values = columns.get(name)
        if values is None:
            continue
        empty = np.isnan(np.asarray(values, dtype=float))  # parsed: NaN = empty or unreadable
        if not empty.any():
            continue
        at = np.flatnonzero(empty)
        raw = frame[name].iloc[at]
        # only cells left empty: an unreadable one ("maybe") has its own message already
        blank = (raw.isna() | raw.astype(str).str.strip().eq("")).to_numpy(dtype=bool)
        if reason is not None:
            given = pd.Series(reason).iloc[at].astype("string").str.strip()
            blank = blank & ~(given.notna() & given.ne("")).fillna(False).to_numpy(dtype=bool)
        bad = np.zeros(len(empty), dtype=bool)
        bad[at[blank]] = True
        add(bad, name, "missing value: expected true or false (a failed judgement leaves it "
                       "empty, with its reason in failed_judgement)")
    judge = columns["judge"]
    if isinstance(judge.dtype, pd.CategoricalDtype):  # on the distinct names, not the rows
        names = pd.Series(judge.cat.categories).astype("string").str.strip().str.casefold()
        taken = np.flatnonzero((names == MAJORITY).fillna(False).to_numpy(dtype=bool))
        named = np.isin(judge.cat.codes.to_numpy(), taken)
    else:
        names = judge.astype("string").str.strip().str.casefold()
        named = (names == MAJORITY).fillna(False).to_numpy(dtype=bool)
    add(named, "judge",
        f"'{MAJORITY}' is the name kbench gives the judges' consensus; rename this judge "
        "(e.g. 'majority-judge')")


# ------------------------------------------------------------------------------ replication


def _profile_rows(run: Run) -> tuple[pd.DataFrame, int, str]:
    """The profile's rows of a judged run (:func:`kbench_core.vuln.profile.profile_rows`):
    the majority of several judges, else the one judge, under bootstrapped tier options."""
    from kbench_core.vuln.profile import profile_rows

    summed = getattr(run, "tables", None) or {}
    if "profile" in summed:  # computed by the engine (_engine_run)
        return summed["profile"]
    views = judge_views(run.frame)
    if not views:
        return pd.DataFrame(), 0, ""
    judge, rows = views[0]
    return profile_rows(rows, judge, tier_options=TierOptions(bootstrap=True).tiers(),
                        leaderboard=leaderboard, item_key=FAMILY.item_key or (),
                        cluster=FAMILY.comparison.cluster)  # type: ignore[union-attr]


def _engine_run(src: Any, backend: Any) -> Any:
    """The family's ``engine_run``: a judged source kept in the engine (``kbench figures``,
    ``report`` and ``profile`` from ``KBENCH_JUDGED_RUN_ROWS`` rows on, when set), no
    answer fetched: validated by the engine with the loader's rules
    (:func:`kbench_core.engines.validate.validate`), then a
    :class:`~kbench_core.io.SummedRun` whose ``engine`` table is the run as the catalog reads
    it (:class:`~kbench_core.families._judged_sources.EngineJudged`: each judge's answers
    made by the engine and summed per cell, κ and the fixed versions from their sums), and
    whose ``profile`` (computed when read) is :func:`_engine_profile`'s. None unless the run
    has ``KBENCH_JUDGED_RUN_ROWS`` rows or more (unset by default: the per-sample sums grow
    with the samples, ``engines.settings``; the rows are fetched) or when the file's columns
    need the loader."""
    from kbench_core import engines
    from kbench_core.engines import settings, source, validate
    from kbench_core.engines.judged import judge_names, supported
    from kbench_core.families._judged_sources import EngineJudged
    from kbench_core.io import LazyTables, SummedRun

    rows = source.parquet_rows(src)
    if settings.JUDGED_RUN_ROWS is None or rows < settings.JUDGED_RUN_ROWS:
        return None
    table = source.open_table(backend, src)
    if not supported(table):
        return None
    labels = validate.validate(table, src)  # read again by the names, the normalised rows
    files = tuple(f.name for f in src.files)
    names = judge_names(table, labels)
    models = labels.of("model")
    if models is None:  # more than Labels fetches
        models = table.select("model").distinct().to_pyarrow().column(0).to_pylist()
    source.check_read(src, backend)

    def guard() -> Any:
        # every later query as the first: an engine out of memory named with both ways out,
        # the files re-checked after it
        return engines.guarded(src, backend, rows, "KBENCH_JUDGED_RUN_ROWS")

    state = EngineJudged(table, files, names, guard=guard, labels=labels, rows=rows)
    meta = {**src.meta, "rows": rows, "columns": list(src.columns),
            "models": sorted(str(m) for m in models if m is not None)}

    def profile() -> Any:
        with guard():
            return _engine_profile(table, names, files, rows=rows)

    return SummedRun(name=src.name, kind=src.kind, frame=pd.DataFrame(), meta=meta,
                     tables=LazyTables({"engine": state}, {"profile": profile}))


def _engine_profile(table: Any, names: list[str], files: tuple[str, ...], *, rows: int = 0,
                    ) -> tuple[pd.DataFrame, int, str]:
    """``kbench profile``'s rows of a judged run kept in the engine (what
    :func:`_profile_rows` gives of its rows): the first judge it is shown by (the majority
    of several LLM judges under the default rule, else the one judge) made by the engine
    (:func:`kbench_core.engines.judged.answers`) and kept there; the bootstrapped tier
    leaderboard finished from the cells it sums (:class:`kbench_core.engines.judged.
    EngineCells`); TDR's rank from the found targets and counted answers per sample ×
    detector (:func:`kbench_core.engines.judged.profile_sums`). ``rows``: the run's rows,
    from which DuckDB makes the answers in parts of the samples
    (:func:`kbench_core.engines.judged_cells.kept_answers`)."""
    import dataclasses

    from kbench_core import vuln
    from kbench_core.engines.judged import EngineCells, profile_sums
    from kbench_core.engines.judged_cells import kept_answers
    from kbench_core.vuln.profile import profile_rows_from_sums

    offered = offered_judges(pd.DataFrame({"judge": names}))
    if not offered:
        return pd.DataFrame(), 0, ""
    judge = offered[0]
    made = _judge_answers(table, judge, ConsensusOptions(), files, names=names)
    kept, drop = kept_answers(made, rows)  # read by the cells and the sums
    try:
        made = dataclasses.replace(made, expr=kept, make=None)
        board = vuln.tiers(EngineCells(made), **TierOptions(bootstrap=True).tiers())
        board = board.assign(model=board["model"].astype(str))
        cluster = FAMILY.comparison.cluster  # type: ignore[union-attr]
        num, den, differ = profile_sums(made.expr, list(board["model"]), cluster=cluster,
                                        item_key=FAMILY.item_key or ())
    finally:
        drop()
    return profile_rows_from_sums(board, num, den, judge, differ=differ,
                                  leaderboard=leaderboard, cluster=cluster)


def _card(run: Run, raws: frozenset[str]) -> go.Figure | None:
    """The Models page's figure of one detector (``raws``: its ids in the run): the SUI tier
    bars of its answers, as the run's first view (the majority, else the one judge) shows
    them."""
    from kbench_core import vuln
    from kbench_core.figures import vuln as vuln_figures

    views = judge_views(run.frame)
    if not views:
        return None
    judge, rows = views[0]
    rows = rows[rows["model"].astype(str).isin(raws)]
    options = TierOptions()
    tiers = vuln.tiers(rows, **options.tiers())
    return vuln_figures.tier_leaderboard(
        tiers, vuln.sui_contributions(tiers, sui_weights=options.weights()),
        title=f"SUI and what it is made of ({judge})")


def _suspect_rows(absent: Any, said: Any, columns: set[str]) -> Any:
    """:func:`_rules` as the engines' predicate: a label left empty needs a failed
    judgement's reason."""
    return ((absent("said_vulnerable") | absent("target_found"))
            & absent("failed_judgement"))


def _engine_tables(src: Any, backend: Any, options: Mapping[str, Any] | None,
                   ) -> tuple[list[tuple[str, pd.DataFrame]], dict] | None:
    """``kbench metrics``' tier leaderboards of a judged source (the majority first, then
    each judge, as :func:`main_table` shows a frame), every one finished from the cells the
    engine sums (:class:`kbench_core.engines.judged.EngineCells`): the run is validated by
    the engine (:func:`kbench_core.engines.validate.validate`, the loader's messages), and
    no answer is fetched. Returns the tables and what an export records of the majority;
    None when the file's columns are not in their natural Parquet types
    (:func:`kbench_core.engines.judged.supported`: the loader reads it). The family's
    ``engine_tables``."""
    from kbench_core import vuln
    from kbench_core.engines import source, validate
    from kbench_core.engines.judged import judge_names, supported
    from kbench_core.families._judged_sources import EngineJudged

    table = source.open_table(backend, src)
    if not supported(table):
        return None
    labels = validate.validate(table, src)  # read again by the names, the normalised rows
    kept = EngineJudged(table, tuple(f.name for f in src.files), judge_names(table, labels),
                        labels=labels, rows=source.parquet_rows(src))
    chosen = check_judges(kept.judges, options)
    tier_options = TierOptions.from_mapping(options).tiers()
    # the views as the catalog's tiers item makes them (EngineJudged.views), each one's
    # cells dropped once its table is made (nothing here reads them again)
    out = []
    for name, cells in kept.views(options):
        out.append((name, main_columns(leaderboard(vuln.tiers(cells, **tier_options)))))
        cells.forget()
    source.check_read(src, backend)
    return out, (chosen.provenance() if default_judge(kept.judges) == MAJORITY else {})


def _engine_items(table: Any, src: Any, value: str, options: Mapping[str, Any] | None,
                  ) -> tuple[Any, dict] | None:
    """The family's ``engine_items``: the run validated by the engine (the loader's
    messages), the judge checked as :func:`check_judges` checks it (ValueError naming the
    run's judges), and the chosen judge's answers (``options``' judge, else
    :func:`default_judge`: the majority of several LLM judges) made by the engine
    (:func:`kbench_core.engines.judged.answers`) and kept there (cached: the comparison
    queries them once per key and once grouped), with ``correct`` and
    ``target_found_vulnerable`` (:func:`kbench_core.engines.judged.per_item`). Only the
    columns those and ``value`` are made of go into the answers (the verdict, the truth,
    target found: a majority of every label and number would cost 6× more). What is
    recorded: the judge, and the majority's rule when the run has several LLM judges. None
    when the file's columns are not in their natural Parquet types (the loader reads it)."""
    from kbench_core.agreement._labels import ITEM_KEY
    from kbench_core.engines import validate
    from kbench_core.engines.judged import judge_names, normalised, per_item, supported
    from kbench_core.engines.judged_cells import cached
    from kbench_core.engines.source import FILE, ROW

    if not supported(table):
        return None
    labels = validate.validate(table, src)  # read again by the names, the normalised rows
    names = pd.DataFrame({"judge": judge_names(table, labels)})
    chosen = check_judges(names, options)
    judge = chosen.judge or default_judge(names)
    files = tuple(f.name for f in src.files)
    read = {*ITEM_KEY, "model", "judge", "is_vulnerable", "said_vulnerable", "target_found",
            value, ROW, FILE}
    table = table.select(*[c for c in table.columns if c in read])
    made = _judge_answers(table, judge, chosen, files, normalised_rows=normalised(table, labels),
                          names=list(names["judge"]))
    several = default_judge(names) == MAJORITY
    recorded = {**chosen.provenance(), "judge": judge} if several else {"judge": judge}
    return cached(per_item(made.expr)), recorded


def _cells_rows() -> int:
    """From how many rows ``kbench metrics`` computes the tiers in the engine
    (``KBENCH_JUDGED_CELLS_ROWS``: the cells are slower than fetching below it)."""
    from kbench_core.engines import settings

    return settings.JUDGED_CELLS_ROWS


def _sample_frame(seed: int) -> pd.DataFrame:
    """The frame of the bundled sample run ``sample_data/judged.csv`` (planted effects, known in
    closed form)."""
    from kbench_core.samples.judged import judged_samples

    return judged_samples(seed=seed)


FAMILY = Family(
    kind="judged", title="Vulnerability detection", spec=JUDGED,
    detection_order=10,  # before bias: a judged file may also carry a score column
    headline_items=("tiers", "sui_chart"),
    judges=True,
    item_key=("sample", "prompt_type"),
    comparison=CompareDefaults((("correct verdict", "correct"),
                                ("TDR (target found, vulnerable samples)",
                                 "target_found_vulnerable")),
                               "prompt_type", "sample", "answers",
                               headline="target_found_vulnerable",  # TDR: the headline
                               renamed=(("target_found", "target_found_vulnerable"),)),
    per_item=_per_item, lower_is_better=_lower(), catalog=_catalog, rules=_rules,
    sample_files=("judged.csv",), sample_frame=_sample_frame, suspect_rows=_suspect_rows,
    engine_tables=_engine_tables, engine_tables_rows=_cells_rows, engine_items=_engine_items,
    engine_run=_engine_run, engine_run_setting="KBENCH_JUDGED_RUN_ROWS",
    profile=Profile("vulnerability", "Vulnerability detection",
                    (("tdr", "Target detection rate (TDR)", "TDR"),
                     ("sui", "Security Understanding Index (SUI)", "SUI")),
                    "tdr", _profile_rows, card=_card),
    format_doc="docs/formats.md",
    page=PageInfo("views/vuln.py", "Vulnerability detection", Keys.RUNS,
                  dependent=(Keys.MODELS, Keys.JUDGE, Keys.DRILL_MODEL, Keys.DRILL_SAMPLE,
                             Keys.VOTERS, Keys.MIN_VOTES),
                  icon=":material/security:", url="vulnerability", order=30, keys=Keys),
)
