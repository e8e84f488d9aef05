"""Human–agent replication tests (HumanStudy-Bench): one row per model × statistical test.

Metrics in :mod:`kbench_core.replication` (``docs/metrics/replication.md``); the page is
``views/replication.py``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from kbench_core.catalog import Item
from kbench_core.families._base import CompareDefaults, Family, Options, PageInfo, Profile
from kbench_core.schema import TEST_TYPES, Column, KindSpec, unit_column

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from kbench_core.io import Run
    from kbench_core.replication import PasResult

__all__ = ["FAMILY", "Keys", "ReplicationOptions", "ecs_tables", "pas_models", "pas_result",
           "pas_study_grid"]


class Keys:
    """The Replication page's widget keys (also the names of its link parameters), of its
    tests (this family) and its published results (``replication_summary``) alike; both
    families' page entries name theirs from here."""

    RUNS = "rep_runs"
    MODELS = "rep_models"
    WEIGHTING = "rep_weighting"
    NORMALIZE = "rep_normalize"
    CI = "rep_ci"
    FINDING_WEIGHTS = "rep_finding_weights"
    POOLING = "rep_pooling"
    COLOR = "rep_color"
    PANELS = "rep_panels"
    COMPARE = "rep_cmp"
    SUMMARY_RUN = "rep_summary_run"
    SUMMARY_METRIC = "rep_summary_metric"

ECS_LEVELS = ("overall", "domain", "study")


# A replication run needs at least one complete pair of these.
REPLICATION_PAIRS: tuple[tuple[str, str], ...] = (
    ("human_effect", "agent_effect"),
    ("human_d", "agent_d"),
    ("human_pi", "agent_pi"),
    ("human_bf10", "agent_bf10"),
)

# The columns of this run kind (docs/formats.md): they belong with the family.
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
        unit_column("human_pi", "posterior probability that the human effect exists"),
        unit_column("agent_pi", "posterior probability that the agent effect exists"),
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


@dataclass(frozen=True)
class ReplicationOptions(Options):
    """The options of ECS and PAS as the Replication page and the exports set them (the
    defaults are those of ``docs/metrics/replication.md``): ECS test ``weighting`` and
    ``normalize_weights`` (Lin's CCC, or the released code's weighted sums), the intervals ``ci`` of
    both metrics, PAS test weights within a finding (``finding_weights``) and the pooling of
    findings within a study (``study_pooling``). :meth:`ecs` and :meth:`pas` give the keyword
    arguments of :func:`kbench_core.replication.ecs` and :func:`kbench_core.replication.pas`,
    :meth:`provenance` what an exported file records.
    Examples
    --------
    >>> ReplicationOptions.from_mapping({"weighting": "equal", "other": 1}).ecs()
    {'weighting': 'equal', 'normalize_weights': True, 'ci': 'analytic'}
    """

    weighting: Literal["structure", "equal"] = "structure"
    normalize_weights: bool = True
    ci: Literal["analytic", "bootstrap"] = "analytic"
    finding_weights: Literal["equal", "n_eff"] = "equal"
    study_pooling: Literal["fisher", "mean"] = "fisher"

    def ecs(self) -> dict[str, Any]:
        """Keyword arguments of :func:`kbench_core.replication.ecs`."""
        return dict(weighting=self.weighting, normalize_weights=self.normalize_weights,
                    ci=self.ci)

    def pas(self) -> dict[str, Any]:
        """Keyword arguments of :func:`kbench_core.replication.pas`."""
        return dict(finding_weights=self.finding_weights, study_pooling=self.study_pooling,
                    ci=self.ci)


def _few(table: pd.DataFrame, count: str) -> pd.DataFrame:
    """``table`` with ``few_items``: fewer than :data:`kbench_core.compare.FEW_ITEMS` (30)
    ``count`` behind the row (``docs/statistics.md``: marked in every leaderboard)."""
    from kbench_core.compare import FEW_ITEMS

    return table.assign(few_items=table[count].to_numpy() < FEW_ITEMS)


def ecs_tables(tests: pd.DataFrame | None, *, options: ReplicationOptions | None = None,
               sums: pd.DataFrame | None = None) -> dict[str, pd.DataFrame]:
    """ECS per model at every level the run has (``overall``, ``domain`` with a domain column,
    ``study``), :func:`kbench_core.replication.ecs` under ``options``; the overall and domain
    tables carry ``few_items`` (fewer than 30 studies behind the value). The page's tables and
    the catalog's ``ecs`` table. ``sums``: the tests' sufficient table
    (:func:`kbench_core.replication.ecs.finding_sums`), made once for the three levels, or
    an engine's (``tests`` None then; the study level's bootstrap resamples tests, so
    ``ci="bootstrap"`` needs them)."""
    from kbench_core import replication
    from kbench_core.replication.ecs import sums_in_order

    chosen = ReplicationOptions.from_mapping(options)
    if sums is None:
        sums = replication.finding_sums(tests)
    sums, weights = sums_in_order(sums, chosen.weighting)  # once for the three levels
    out = {}
    for level in ECS_LEVELS:
        if level == "domain" and "domain" not in sums:
            continue
        if level == "study" and chosen.ci == "bootstrap":
            if tests is None:
                raise ValueError("the per-study ECS bootstrap resamples tests: give them")
            table = replication.ecs(tests, level=level, **chosen.ecs())
        else:
            table = replication.ecs_from_sums(sums, level=level, weights=weights,
                                              **chosen.ecs())
        out[level] = table if level == "study" else _few(table, "n_studies")
    return out


def pas_result(tests: pd.DataFrame, *, options: ReplicationOptions | None = None,
               ) -> PasResult:
    """:func:`kbench_core.replication.pas` under ``options`` (its tables are empty when no
    test has both posteriors: PAS is unavailable)."""
    from kbench_core import replication

    return replication.pas(tests, **ReplicationOptions.from_mapping(options).pas())


def pas_models(result: PasResult) -> pd.DataFrame:
    """The model PAS table as every leaderboard shows it: best PAS first (undefined last) with
    ``few_items`` (fewer than 30 studies behind the mean)."""
    # PAS equal to 12 digits are ties (an engine's sums differ from memory's in the last bit)
    order = result.model["pas"].round(12).sort_values(ascending=False, na_position="last",
                                                      kind="stable").index
    table = result.model.loc[order]
    return _few(table.reset_index(drop=True), "n")


def pas_study_grid(study: pd.DataFrame) -> pd.DataFrame:
    """Study (rows) × model (columns) PAS of a :class:`~kbench_core.replication.PasResult`'s
    ``study`` table, with ``domain`` (when given) and ``findings``: the most findings with a
    PAS any model has in that study."""
    grid = study.pivot_table(index="study", columns="model", values="pas", observed=True,
                             dropna=False)
    grid.columns = [str(c) for c in grid.columns]
    out = grid.join(study.groupby("study", observed=True)["n"].max().rename("findings"))
    if "domain" in study:
        out.insert(0, "domain", study.groupby("study", observed=True)["domain"].first())
    return out.reset_index()


def _rules(columns: Mapping[str, Any], frame: pd.DataFrame, add) -> None:
    """A run needs one complete pair of effect or posterior columns; native effect sizes need
    their test type (file-level problems are reported with a mask of None)."""
    if not any(set(pair) <= set(frame.columns) for pair in REPLICATION_PAIRS):
        pairs = "; ".join(" + ".join(p) for p in REPLICATION_PAIRS)
        add(None, None, f"a replication run needs at least one pair of columns: {pairs}")
    if "human_effect" in frame.columns and "test_type" not in frame.columns:
        add(None, "test_type", "required column 'test_type' is missing: native effect sizes "
                               "(human_effect/agent_effect) need their test type to be "
                               "converted to d")
    if "human_effect" in columns and "test_type" in columns:
        has_effect = ~np.isnan(columns["human_effect"]) | ~np.isnan(columns["agent_effect"])
        absent = has_effect & columns["test_type"].isna().to_numpy()
        add(absent, "test_type", "rows with human_effect/agent_effect need a test_type")


def _notes(frame: pd.DataFrame) -> list[str]:
    """Bayes factors without the significance flag have no prior: PAS will leave them out."""
    if "human_bf10" not in frame:
        return []
    no_flag = frame["human_bf10"].notna().to_numpy()
    if "human_significant" in frame:
        no_flag = no_flag & frame["human_significant"].isna().to_numpy()
    if "human_pi" in frame:  # a given posterior needs no prior
        no_flag = no_flag & frame["human_pi"].isna().to_numpy()
    return _flag_notes(int(no_flag.sum()), len(frame))


def _flag_notes(no_flag: int, rows: int) -> list[str]:
    if not no_flag:
        return []
    return [f"{no_flag:,} of {rows:,} tests have a human Bayes factor but no "
            "human_significant flag: without it there are no prior odds, so PAS leaves those "
            "tests out (add the flag to include them)"]


def _per_item(frame: pd.DataFrame) -> pd.DataFrame:
    """``abs_diff`` = |d_agent − d_human|, d from human_d/agent_d where given, else converted
    from the native effects (:func:`kbench_core.replication.prepare_tests`)."""
    from kbench_core.replication import prepare_tests

    if {"d_h", "d_a"} <= set(frame.columns):  # already prepared (the replication page)
        d_h, d_a = (frame[c].to_numpy(dtype=float, na_value=np.nan) for c in ("d_h", "d_a"))
    else:
        prepared = prepare_tests(frame)
        d_h, d_a = prepared["d_h"].to_numpy(float), prepared["d_a"].to_numpy(float)
    return frame.assign(abs_diff=np.abs(d_a - d_h))


def _catalog() -> list[Item]:
    from kbench_core import replication
    from kbench_core.figures import replication as rep_figures

    def ecs_table(frame: pd.DataFrame, options: Mapping[str, Any]):
        yield from ecs_tables(frame, options=ReplicationOptions.from_mapping(options)).items()

    def ecs_summed(tables: Mapping[str, Any], options: Mapping[str, Any]):
        yield from ecs_tables(None, options=ReplicationOptions.from_mapping(options),
                              sums=tables["ecs"]).items()

    def pas_table(frame: pd.DataFrame, options: Mapping[str, Any]):
        yield from _pas_model_table(pas_result(
            frame, options=ReplicationOptions.from_mapping(options)))

    def pas_summed(tables: Mapping[str, Any], options: Mapping[str, Any]):
        yield from _pas_model_table(_summed_pas(tables, options))

    def scatter(frame: pd.DataFrame, options: Mapping[str, Any]):
        chosen = ReplicationOptions.from_mapping(options)
        yield "", rep_figures.effect_scatter(
            replication.scatter_points(frame, weighting=chosen.weighting),
            replication.ecs(frame, **chosen.ecs()))

    def scatter_summed(tables: Mapping[str, Any], options: Mapping[str, Any]):
        chosen = ReplicationOptions.from_mapping(options)
        if chosen.weighting != tables["weighting"]:
            raise ValueError(f"the engine drew the scatter under {tables['weighting']} "
                             "weights: read the tests (--engine memory) for others")
        ecs = replication.ecs_from_sums(tables["ecs"], **chosen.ecs())
        drawn = tables["scatter"]
        if isinstance(drawn, pd.DataFrame):  # few tests: each drawn
            yield "", rep_figures.effect_scatter(drawn, ecs)
        else:
            yield "", rep_figures.effect_scatter(pd.DataFrame(), ecs, grid=drawn)

    def pas_heat(frame: pd.DataFrame, options: Mapping[str, Any]):
        yield from _pas_heatmap(pas_result(
            frame, options=ReplicationOptions.from_mapping(options)))

    def pas_heat_summed(tables: Mapping[str, Any], options: Mapping[str, Any]):
        yield from _pas_heatmap(_summed_pas(tables, options))

    return [
        Item("ecs", "ECS (weighted Lin's CCC) per model, overall, per domain, per study",
             "table", ecs_table, best={"ecs": "max"}, main=True, from_tables=ecs_summed),
        Item("pas", "PAS per model (Fisher-z pooled)", "table", pas_table, best={"pas": "max"},
             from_tables=pas_summed),
        Item("effect_scatter", "Human against agent effect sizes", "figure", scatter,
             from_tables=scatter_summed),
        Item("pas_heatmap", "PAS per study and model", "figure", pas_heat,
             from_tables=pas_heat_summed),
    ]


def _pas_model_table(result: PasResult) -> Iterator[tuple[str, pd.DataFrame]]:
    if len(result.model):
        yield "", pas_models(result)


def _pas_heatmap(result: PasResult) -> Iterator[tuple[str, go.Figure]]:
    from kbench_core.figures import replication as rep_figures

    if len(result.study):
        yield "", rep_figures.study_heatmap(result.study, value="pas")


def _summed_pas(tables: Mapping[str, Any], options: Mapping[str, Any] | None) -> PasResult:
    """PAS of a :class:`~kbench_core.io.SummedRun`'s tables under ``options`` (the engine
    summed the tests under one test weighting: another needs the tests)."""
    from kbench_core import replication

    chosen = ReplicationOptions.from_mapping(options)
    if chosen.finding_weights != tables["finding_weights"]:
        raise ValueError(f"the engine summed PAS under {tables['finding_weights']} test "
                         "weights: read the tests (--engine memory) for others")
    return replication.pas_from_sums(tables["pas"], study_pooling=chosen.study_pooling,
                                     ci=chosen.ci, finding_weights=chosen.finding_weights)


def _profile_rows(run: Run) -> tuple[pd.DataFrame, int, str]:
    """The profile's rows of replication tests (``kbench_core.profile``): ECS and PAS of the
    page's tables, ranked by value (no rank bootstrap of these, so no rank interval); of a
    :class:`~kbench_core.io.SummedRun`, from its tables."""
    from kbench_core import replication

    options = ReplicationOptions()
    tables = getattr(run, "tables", None)
    sums = tables["ecs"] if tables is not None else replication.finding_sums(run.frame)
    # the overall table only (the page's study level, a row per model x study, is not read)
    ecs = _few(replication.ecs_from_sums(sums, level="overall", **options.ecs()), "n_studies")
    pas = (_summed_pas(tables, None) if tables is not None
           else pas_result(run.frame, options=options))
    return _profile_of(ecs, pas_models(pas), int(sums["model"].nunique()))


def _engine_run(src: Any, backend: Any) -> Any:
    """The replication run of a source as the engine computes it (the family's
    ``engine_run``): validated by the engine with the loader's rules
    (:func:`kbench_core.engines.validate.validate`), then ECS's sufficient table (a row per
    finding: :mod:`kbench_core.engines.replication`); PAS's and the effect scatter's (each
    test of a run of at most 20,000 valid pairs, else counts on its grid) are computed when
    first read (:class:`~kbench_core.io.LazyTables`: ``kbench metrics`` reads ECS only), no
    other row fetched. None when the file's columns are not in their natural Parquet types
    (the loader reads it)."""
    from kbench_core import engines
    from kbench_core.engines import replication as engine
    from kbench_core.engines import source, validate
    from kbench_core.io import LazyTables, SummedRun

    options = ReplicationOptions()
    table = source.open_table(backend, src)
    if not engine.supported(table):
        return None
    labels = validate.validate(table, src)  # read again by every table below
    files = tuple(f.name for f in src.files)
    ecs_sums = engine.fetch_sums(engine.finding_sums(table, files, labels))
    no_prior = engine.no_prior_count(table, labels)
    source.check_read(src, backend)

    def read(compute):
        def later():
            # as every query of the run: an engine out of memory named, the file re-checked
            with engines._named(src, getattr(backend, "name", "duckdb")):
                found = compute()
                source.check_read(src, backend)
            return found
        return later

    def pas() -> pd.DataFrame:
        return engine.fetch_sums(engine.finding_pas_sums(
            table, files, finding_weights=options.finding_weights, labels=labels))

    def scatter() -> Any:
        drawn = engine.scatter_grid(table, files, ecs_sums, weighting=options.weighting,
                                    labels=labels)
        if drawn is None:
            drawn = engine.scatter_points(table, files, ecs_sums, weighting=options.weighting,
                                          labels=labels)
        return drawn

    rows = source.parquet_rows(src)
    meta = {**src.meta, "rows": rows, "models": sorted(map(str, ecs_sums["model"].unique())),
            "columns": list(src.columns), "reduced_rows": len(ecs_sums)}
    tables = LazyTables({"ecs": ecs_sums, "weighting": options.weighting,
                         "finding_weights": options.finding_weights},
                        {"pas": read(pas), "scatter": read(scatter)})
    return SummedRun(name=src.name, kind=src.kind, frame=pd.DataFrame(), meta=meta,
                     warnings=tuple(_flag_notes(no_prior, rows)), tables=tables)


def _engine_items(table: Any, src: Any, value: str, options: Mapping[str, Any] | None,
                  ) -> tuple[Any, dict] | None:
    """The run validated by the engine, then its tests with ``abs_diff`` (the family's
    ``engine_items``; no option); None when its columns are not in their natural Parquet
    types (the loader reads it)."""
    from kbench_core.engines import replication as engine
    from kbench_core.engines import validate

    if not engine.supported(table):
        return None
    labels = validate.validate(table, src)  # read again by the per-item table
    return engine.per_item(table, labels), {}


def _profile_of(ecs: pd.DataFrame, pas: pd.DataFrame,
                n_models: int) -> tuple[pd.DataFrame, int, str]:
    from kbench_core.profile import metric_rows, point_ranks

    rows = [metric_rows(ecs, "ecs", low="ecs_low", high="ecs_high", n="n",
                  ranks=point_ranks(ecs, "ecs"),
                  items="the model's tests (ranked by value; no rank interval)")]
    if len(pas):
        rows.append(metric_rows(pas, "pas", low="pas_low", high="pas_high", n="n",
                          ranks=point_ranks(pas, "pas"),
                          items="the model's findings (ranked by value; no rank interval)"))
    return pd.concat(rows, ignore_index=True), n_models, ""


def _card(run: Run, raws: frozenset[str]) -> go.Figure | None:
    """The Models page's figure of one model (``raws``: its ids in the run): the effect
    scatter of its tests."""
    from kbench_core import replication
    from kbench_core.figures import replication as rep_figures

    mine = run.frame[run.frame["model"].astype(str).isin(raws)]
    if not len(mine):
        return None
    return rep_figures.effect_scatter(replication.scatter_points(mine), replication.ecs(mine))


def _suspect_rows(absent: Any, said: Any, columns: set[str]) -> Any:
    """:func:`_rules` as the engines' predicate: an effect without its test type."""
    if not {"human_effect", "test_type"} <= columns:
        return None
    has_effect = ~absent("human_effect") | ~absent("agent_effect")
    return has_effect & absent("test_type")


def _sample_frame(seed: int) -> pd.DataFrame:
    """The frame of the bundled sample run ``sample_data/replication.csv`` (planted effects,
    known in closed form)."""
    from kbench_core.samples.replication import replication_tests

    return replication_tests(seed=seed)


FAMILY = Family(
    kind="replication", title="Replication (per-test)", spec=REPLICATION,
    detection_order=20,  # before bias: a replication file may also carry a score column
    headline_items=("ecs", "effect_scatter"),
    item_key=("study", "finding", "test"),
    comparison=CompareDefaults((("|agent d − human d|", "abs_diff"),), "study", "study", "tests"),
    per_item=_per_item, lower_is_better=frozenset({"abs_diff"}),
    catalog=_catalog, rules=_rules, notes=_notes, sample_files=("replication.csv",),
    sample_frame=_sample_frame, suspect_rows=_suspect_rows, format_doc="docs/formats.md",
    engine_run=_engine_run,
    engine_items=_engine_items,
    profile=Profile("replication", "Replication of human studies",
                    (("ecs", "ECS (kbench)", "ECS"), ("pas", "PAS (kbench)", "PAS")),
                    "ecs", _profile_rows, configurations=True, card=_card),
    page=PageInfo("views/replication.py", "Replication", Keys.RUNS, dependent=(Keys.MODELS,),
                  icon=":material/compare_arrows:", url="replication", order=20, keys=Keys),
)
