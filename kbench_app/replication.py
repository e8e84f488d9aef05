"""The Replication page's widget keys and table presentation (labels, help, formats).

Every number shown comes from :mod:`kbench_core.replication` and
:mod:`kbench_core.families.replication` (the same functions and options as the exports); this
module only lays the tables out: intervals as text beside their numbers, integers as integers,
4 significant digits, the first column pinned (:func:`kbench_app.ui.table_config`).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from kbench_app.ui import interval_text, shown, table_config
from kbench_core import replication

# The page's widget keys, written once in the family's module (its page entries, and
# replication_summary's, name theirs from them)
from kbench_core.families.replication import Keys, ReplicationOptions
from kbench_core.select import labels_in

__all__ = ["CI_METHOD_LABELS", "Keys", "cost_view", "ecs_note", "ecs_view", "finding_view",
           "findings_view", "pas_grid_view", "pas_unavailable", "pas_view", "summary_view"]


_HELP = {
    "ecs": "Lin's concordance correlation of agent d on human d (1 = identical effects)",
    "ecs_ci": "95% interval, by the method in the Interval column: the jackknife over "
              "studies where studies hold several tests (analytic), else Lin's z-transform; "
              "or the cluster bootstrap over studies (bootstrap)",
    "ci_method": "How the interval was computed: jackknife over studies (tests of a study "
                 "share it, so they are not independent), Lin's z-transform (independent "
                 "tests), or the bootstrap over studies (tests within a study per study)",
    "n": "Tests with both effect sizes",
    "n_kish": "Kish's effective n, (Σw)²/Σw², of the tests' weights: what Lin's interval "
              "rests on (= n under equal weights)",
    "n_studies": "Studies those tests come from",
    "pas": "Probability that human and agent are in the same state; 0.5 = chance",
    "pas_ci": "95% interval: t over the model's studies (analytic) or the bootstrap over its "
              "studies, then findings within each drawn study (bootstrap)",
    "n_dropped": "Tests left out of PAS: no usable posterior (e.g. a Bayes factor without its "
                 "human_significant flag) or, under n_eff weights, no n_eff",
    "few_items": "Fewer than 30 studies behind the value: it is uncertain (see the interval)",
}
HELP_WEIGHTING = ("structure: every study, and every finding in it, weighs the same; equal: "
                  "every test weighs 1 (the published per-study ECS).")
HELP_NORMALIZE = ("Off reproduces HumanStudy-Bench's code: weighted sums, so the "
                  "mean-difference penalty shrinks as weights grow.")
HELP_CI = ("analytic: for ECS the delete-one-study jackknife on Fisher's z where studies hold "
           "several tests, else Lin's z-transform (Kish's effective n under structure "
           "weights); t over studies for PAS; bootstrap: studies resampled within each "
           "model, for PAS then findings within each drawn study (1000 resamples, cached).")
HELP_FINDING_WEIGHTS = ("equal: the default and the released code; n_eff: the metric "
                        "document's prose (offered when the run has an n_eff column; tests "
                        "without one are left out).")
HELP_POOLING = ("fisher: Fisher-z pooling (the default and the released code); mean: the "
                "prose of HumanStudy-Bench's metric document, a simple mean.")
SCATTER_CAPTION = ("Click a legend entry to show only it, double-click to hide it. Marker size "
                   "= the test's ECS weight; the dashed line is y = x, the solid one the "
                   "weighted fit.")
PAS_CAPTION = ("PAS = probability that human and agent are in the same state (effect or no "
               "effect), pooled on Fisher's z within findings and studies, then averaged over "
               "studies; 0.5 = chance. A finding whose every test was left out has no PAS and "
               "is left out of its study.")
CI_METHOD_LABELS = {"jackknife_studies": "jackknife over studies",
                    "jackknife_tests": "jackknife over tests", "lin": "Lin (z-transform)",
                    "bootstrap_studies": "bootstrap over studies",
                    "bootstrap_tests": "bootstrap over tests", "": ""}
_FEW = st.column_config.CheckboxColumn("Few studies", help=_HELP["few_items"])


def _number(label: str, column: str, fmt: str = "%.4g", help: str | None = None) -> object:
    return st.column_config.NumberColumn(label, help=help or _HELP.get(column), format=fmt)


def _count(label: str, column: str) -> object:
    return st.column_config.NumberColumn(label, help=_HELP.get(column), format="localized")


def _with_few(view: pd.DataFrame, table: pd.DataFrame, config: dict[str, object]) -> None:
    """Add the few-items mark when any row has it (a column of only blanks says nothing)."""
    if "few_items" in table and table["few_items"].any():
        view["few_items"] = table["few_items"].to_numpy(dtype=bool)
        config["few_items"] = _FEW


def pas_unavailable(tests: pd.DataFrame) -> str:
    """Why a selection without posteriors has no PAS, in words that are true for it."""
    bf = "human_bf10" in tests and bool(tests["human_bf10"].notna().any())
    if bf and ("human_significant" not in tests or tests["human_significant"].isna().all()):
        return ("PAS is unavailable: the tests give human Bayes factors but no "
                "human_significant flag, so there are no prior odds to turn them into "
                "posteriors. Add the flag (true/false) to each test to get PAS.")
    if bf or ("human_pi" in tests and bool(tests["human_pi"].notna().any())):
        return ("PAS is unavailable: no test has both a human and an agent posterior (or "
                "Bayes factor).")
    return ("PAS is unavailable: this selection gives effect sizes but no posteriors or "
            "Bayes factors.")


def ecs_note(options: ReplicationOptions) -> str:
    """The caption under the ECS tables: what ECS is, and what the chosen interval rests on."""
    note = ("ECS = Lin's concordance correlation of agent on human Cohen's d (1 = identical "
            "effects, 0 = no agreement); n = tests with both effects. A study needs at least 3 "
            "tests for its own ECS.")
    if options.ci == "analytic" and not options.normalize_weights:
        note += (" Lin's interval does not apply to the released code's unnormalised "
                 "statistic: choose bootstrap intervals to get one.")
    elif options.ci == "analytic":
        note += (" Tests of one study are not independent, so where studies hold several "
                 "tests the interval is the jackknife over studies (Lin's interval, which "
                 "treats the tests as independent, is too narrow there); the Interval column "
                 "names the method of each row.")
    return note


def chosen_tests(tests: pd.DataFrame, *, models: tuple[str, ...]) -> pd.DataFrame:
    """The prepared tests of the chosen models."""
    return tests[labels_in(tests["model"], models)]


def ecs_view(table: pd.DataFrame, published: pd.Series | None = None,
             ) -> tuple[pd.DataFrame, dict[str, object]]:
    """An ECS table for display: the value, its interval as text, n, effective n, studies and
    (overall and per domain) the few-studies mark. ``published`` (model → the published
    configuration ECS, :func:`kbench_core.replication.published_ecs`): on the overall table,
    where a model has one, it is shown as "ECS (published)" beside kbench's value, which is
    then labelled "ECS (recomputed by kbench)" — never under the paper's name."""
    keys = [c for c in ("model", "domain", "study") if c in table]
    view = table[keys].astype(str)
    beside = (published is not None and keys == ["model"]
              and bool(view["model"].map(published).notna().any()))
    if beside:
        view["ecs_published"] = view["model"].map(published).astype(float).to_numpy()
    view["ecs"] = table["ecs"]
    view["ecs_ci"] = interval_text(table["ecs_low"], table["ecs_high"])
    if "ci_method" in table:
        view["ci_method"] = table["ci_method"].map(CI_METHOD_LABELS).fillna("")
    # per study the studies column would say 1 on every row
    for column in ("n", "n_kish") + (() if "study" in table else ("n_studies",)):
        view[column] = table[column]
    config: dict[str, object] = {c: c.capitalize() for c in keys}
    ecs_label = replication.SUMMARY_LABELS["ecs_recomputed"] if beside else "ECS"
    config.update(ecs=_number(ecs_label, "ecs"),
                  ecs_published=_number(
                      replication.SUMMARY_LABELS["ecs_published"], "ecs",
                      help="The configuration-level ECS as the benchmark published it (read "
                           "from the run's config_ecs column or a loaded results file); "
                           "kbench's own value is beside it, under its own name"),
                  ecs_ci=st.column_config.TextColumn(f"{ecs_label} 95% CI",
                                                     help=_HELP["ecs_ci"]),
                  ci_method=st.column_config.TextColumn("Interval", help=_HELP["ci_method"]),
                  n=_count("n", "n"), n_studies=_count("Studies", "n_studies"),
                  n_kish=_number("Effective n", "n_kish", "%.1f"))
    _with_few(view, table, config)
    view = shown(view)
    return view, table_config(view, config)


def pas_view(models: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, object]]:
    """The model PAS table (:func:`kbench_core.families.replication.pas_models`) for display,
    with its interval, counts and the few-studies mark."""
    view = models[["model", "pas"]].astype({"model": str})
    view["pas_ci"] = interval_text(models["pas_low"], models["pas_high"])
    for column in ("n", "n_findings", "n_tests", "n_dropped"):
        view[column] = models[column]
    config: dict[str, object] = {
        "model": "Model", "pas": _number("PAS", "pas"),
        "pas_ci": st.column_config.TextColumn("95% CI", help=_HELP["pas_ci"]),
        "n": _count("Studies", "n"), "n_findings": _count("Findings", "n_findings"),
        "n_tests": _count("Tests", "n_tests"), "n_dropped": _count("Tests left out",
                                                                   "n_dropped")}
    _with_few(view, models, config)
    view = shown(view)
    return view, table_config(view, config)


def pas_grid_view(grid: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, object]]:
    """The study × model PAS grid (:func:`kbench_core.families.replication.pas_study_grid`)
    for display: study pinned, PAS to 4 significant digits, findings as an integer."""
    view = shown(grid)
    config: dict[str, object] = {"study": "Study", "domain": "Domain",
                                 "findings": st.column_config.NumberColumn(
                                     "Findings", format="localized",
                                     help="Findings with a PAS in the study (the most of "
                                          "any model)")}
    return view, table_config(view, config, pin="study")


def finding_view(finding: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, object]]:
    """The finding-level PAS table for display."""
    view = shown(finding)
    config = {"model": "Model", "study": "Study", "finding": "Finding", "domain": "Domain",
              "pas": _number("PAS", "pas"),
              "n": st.column_config.NumberColumn(
                  "Tests", format="localized",
                  help="Tests pooled (0: every test of the finding was left out, so it has no "
                       "PAS and is left out of its study)"),
              "n_dropped": _count("Tests left out", "n_dropped")}
    return view, table_config(view, config)


def summary_view(board: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, object]]:
    """The summary leaderboard (:func:`kbench_core.replication.summary_leaderboard`) for
    display: the rank with its interval beside it, the published configuration values under
    their published names, the means of the per-study values under theirs (with intervals and
    counts), tokens and cost."""
    view = pd.DataFrame({"rank": board["rank"], "rank_text": board["rank_text"],
                         "model": board["model"]})
    by = board.loc[board["ranked_by"] != "", "ranked_by"]
    by_label = replication.SUMMARY_LABELS.get(str(by.iloc[0]), "score") if len(by) else "score"
    config: dict[str, object] = {
        "rank": st.column_config.NumberColumn("Rank", format="%g", pinned=True,
                                              help=f"By {by_label}, 1 = best"),
        "rank_text": st.column_config.TextColumn(
            "Rank [95%]", help="The interval bootstraps the studies (overlapping ranges mean "
                               "the run cannot order those configurations). 'few studies': "
                               "fewer than 30 studies behind the rank."),
        "model": st.column_config.TextColumn("Configuration", pinned=True),
    }
    for published in ("config_pas", "config_ecs"):
        if board[published].notna().any():
            view[published] = board[published]
            config[published] = _number(
                replication.SUMMARY_LABELS[published], published,
                help="The configuration-level value as the benchmark published it")
    for metric in ("pas", "ecs"):
        name = f"mean_study_{metric}"
        if board[f"n_{metric}"].sum() == 0:
            continue
        view[name] = board[name]
        view[f"{name}_ci"] = interval_text(board[f"{name}_low"], board[f"{name}_high"])
        view[f"n_{metric}"] = board[f"n_{metric}"]
        label = replication.SUMMARY_LABELS[name]
        config[name] = st.column_config.NumberColumn(
            label, format="%.4g", help=f"{label}: computed by kbench from the published study "
                                       "values (not a published number)")
        config[f"{name}_ci"] = st.column_config.TextColumn(
            f"{label} 95% CI", help="t interval over the studies")
        config[f"n_{metric}"] = _count(f"Studies ({metric.upper()})", f"n_{metric}")
    for extra, label in (("tokens", "Tokens"), ("cost", "Cost (US$)")):
        if extra in board:
            view[extra] = board[extra]
            config[extra] = label
    view = shown(view)
    return view, table_config(view, config)


def cost_view(studies: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, object]]:
    """The published cost per configuration (rows) and study (columns), in US dollars."""
    costs = studies.pivot_table(index="model", columns="study", values="cost", observed=True)
    costs.columns = [str(c) for c in costs.columns]
    view = costs.reset_index().astype({"model": str})
    config: dict[str, object] = {c: st.column_config.NumberColumn(c, format="dollar")
                                 for c in costs.columns}
    config["model"] = "Configuration"
    return view, table_config(view, config)


def findings_view(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, object]]:
    """The published finding scores, one row per configuration × study × finding."""
    findings = replication.finding_rows(frame)
    view = shown(findings[[c for c in ("model", "study", "finding", "finding_score", "n_tests")
                           if c in findings]].reset_index(drop=True))
    config = {"model": "Configuration", "study": "Study", "finding": "Finding",
              "finding_score": _number("Finding score (published)", "finding_score"),
              "n_tests": _count("Tests", "n_tests")}
    return view, table_config(view, config)
