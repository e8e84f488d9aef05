"""The "fixed versions" table of a judged run computed in the engine (issue 39,
``engines.judged_fixed``): the counts per (group × sample) cell summed by one group-by and
finished by ``vuln.fixed.fixed_claims_from_sums``, equal to the memory table
(``families.judged.fixed_versions``: ``vuln.fixed_claims`` of ``agreement.consensus`` and of
``agreement.judge_rows``) at 1e-9, intervals included, on DuckDB and Spark; and the finish
worked by hand."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from statsmodels.stats.proportion import proportion_confint

from kbench_core import engines, io, vuln
from kbench_core.engines import judged as engine_judged
from kbench_core.engines import judged_fixed, source
from kbench_core.families.judged import fixed_versions
from kbench_core.vuln.fixed import FixedCells, fixed_claims_from_sums


def fixed_run(n_samples: int = 24, seed: int = 3, *, judges: tuple[str, ...] = (
        "j1", "j2", "j3", "human"), models: tuple[str, ...] = ("det-a", "det-b", "det-c"),
        prompts: tuple[str, ...] = ("direct", "naturalistic"), absent: float = 0.12,
        failed: float = 0.12, unknown: float = 0.2) -> pd.DataFrame:
    """A judged run with fixed contracts: judges left out of some items, failed judgements
    (verdict and found missing, with their reason), fixed contracts whose
    ``claims_fixed_target`` is missing, a detector (``det-c``) that answers only vulnerable
    contracts (no fixed contract, no row in the table), and
    samples shared by the prompt types (clusters of several answers)."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(n_samples):
        vulnerable = bool(rng.random() < 0.5)
        for model in models:
            if model == "det-c" and not vulnerable:
                continue  # det-c answers vulnerable contracts only: no fixed contract
            for prompt in prompts:
                claims = bool(rng.random() < 0.4)
                for judge in judges:
                    if rng.random() < absent:
                        continue
                    bad = bool(rng.random() < failed)
                    claim = (None if vulnerable or rng.random() < unknown
                             else (claims if rng.random() < 0.7 else not claims))
                    rows.append({
                        "sample": f"c{s:03d}", "model": model, "judge": judge,
                        "prompt_type": prompt, "is_vulnerable": vulnerable,
                        "said_vulnerable": None if bad else bool(rng.random() < 0.6),
                        "target_found": None if bad else bool(vulnerable
                                                              and rng.random() < 0.5),
                        "claims_fixed_target": claim,
                        "failed_judgement": "judge error" if bad else None})
    frame = pd.DataFrame(rows)
    for name in ("said_vulnerable", "target_found", "claims_fixed_target"):
        frame[name] = frame[name].astype("boolean")
    return frame


_HELD: list = []  # the sources whose pinned files the tables read (kept open)
_DRAWN = itertools.count()  # a new file per drawn example (a held source's file never changes)


def _table(backend, path: Path):
    (src,) = source.sources(path)
    _HELD.append(src)
    return source.open_table(backend, src)


def _written(frame: pd.DataFrame, path: Path) -> tuple[pd.DataFrame, Path]:
    frame.to_parquet(path)
    return io.load_run(path).frame, path


def _same(engine: pd.DataFrame, memory: pd.DataFrame) -> None:
    assert list(engine.columns) == list(memory.columns)
    assert len(engine) == len(memory)
    if not len(memory):
        return
    for name in memory.columns:
        if memory[name].dtype == object or isinstance(memory[name].dtype, pd.CategoricalDtype):
            memory = memory.assign(**{name: memory[name].astype(object).map(
                lambda v: None if v is None or v != v else str(v))})
            engine = engine.assign(**{name: engine[name].astype(object)})
    pd.testing.assert_frame_equal(engine, memory, rtol=1e-9, atol=1e-9, check_dtype=False)


@pytest.fixture(scope="module")
def run_file(tmp_path_factory) -> tuple[pd.DataFrame, Path]:
    return _written(fixed_run(), tmp_path_factory.mktemp("fixed") / "fixed.parquet")


CHOICES = [
    {},
    {"failed_as": "not_found"},
    {"min_votes": 1},
    {"judges": ["j1", "j3"], "failed_as": "not_found"},
    {"judges": ["j1", "j2", "j3"], "min_votes": 3, "failed_as": "missing"},
]


@pytest.mark.parametrize("choice", CHOICES, ids=lambda c: "-".join(
    f"{k}={v}" for k, v in c.items()) or "default")
def test_duckdb_fixed_versions_are_memory_s(choice, run_file) -> None:
    frame, path = run_file
    table = _table(engines.connect("duckdb"), path)
    memory = fixed_versions(frame, consensus=choice)
    assert list(memory["judge"].unique()) == ["majority", "j1", "j2", "j3", "human"]
    assert "det-c" not in set(memory["model"].astype(str))  # no fixed contract: no row
    _same(judged_fixed.fixed_versions(table, choice), memory)


@pytest.mark.parametrize("choice", [{}, {"failed_as": "not_found"}, {"min_votes": 1}])
def test_duckdb_fixed_claims_by_prompt_type(choice, run_file) -> None:
    frame, path = run_file
    table = _table(engines.connect("duckdb"), path)
    from kbench_core.agreement import consensus, judge_rows

    by = ("model", "prompt_type")
    chosen = engine_judged.answers(table, **choice)
    _same(judged_fixed.fixed_claims(chosen, by=by),
          vuln.fixed_claims(consensus(frame, **choice), by=by))
    one = engine_judged.answers(table, judge="j2", failed_as=choice.get("failed_as", "missing"))
    _same(judged_fixed.fixed_claims(one, by=by),
          vuln.fixed_claims(judge_rows(frame, "j2", failed_as=choice.get(
              "failed_as", "missing")), by=by, judge="j2"))


def test_the_majority_votes_claims_fixed_target_as_memory(run_file) -> None:
    from kbench_core.agreement import consensus

    frame, path = run_file
    table = _table(engines.connect("duckdb"), path)
    for choice in CHOICES:
        fetched = engine_judged.fetch_answers(engine_judged.answers(table, **choice))
        memory = consensus(frame, **choice)
        key = ["sample", "model", "prompt_type"]
        left = fetched.astype({k: str for k in key}).set_index(key).sort_index()
        right = memory.astype({k: str for k in key}).set_index(key).sort_index()
        assert left["claims_fixed_target"].astype("boolean").equals(
            right["claims_fixed_target"].astype("boolean"))


def test_one_judge_only(tmp_path) -> None:
    frame, path = _written(fixed_run(judges=("j1",), seed=5), tmp_path / "one.parquet")
    table = _table(engines.connect("duckdb"), path)
    for choice in ({}, {"failed_as": "not_found"}):
        memory = fixed_versions(frame, consensus=choice)
        assert list(memory["judge"].unique()) == ["j1"]
        _same(judged_fixed.fixed_versions(table, choice), memory)


def test_one_llm_judge_and_a_human(tmp_path) -> None:
    frame, path = _written(fixed_run(judges=("j1", "human"), seed=6), tmp_path / "two.parquet")
    table = _table(engines.connect("duckdb"), path)
    memory = fixed_versions(frame, consensus={"failed_as": "not_found"})
    assert list(memory["judge"].unique()) == ["j1", "human"]  # no majority of one judge
    _same(judged_fixed.fixed_versions(table, {"failed_as": "not_found"}), memory)


def test_no_claims_column_or_no_fixed_contract_is_empty(tmp_path) -> None:
    frame, path = _written(fixed_run(seed=8).drop(columns="claims_fixed_target"),
                           tmp_path / "none.parquet")
    table = _table(engines.connect("duckdb"), path)
    memory = fixed_versions(frame)
    _same(judged_fixed.fixed_versions(table), memory)
    assert judged_fixed.fixed_versions(table).empty
    # every contract vulnerable: the column is there, no fixed contract
    every = fixed_run(seed=9)
    every["is_vulnerable"] = True
    every["claims_fixed_target"] = pd.array([None] * len(every), dtype="boolean")
    frame, path = _written(every, tmp_path / "vulnerable.parquet")
    table = _table(engines.connect("duckdb"), path)
    assert engine_judged.supported(table)
    memory = fixed_versions(frame)
    assert memory.empty
    _same(judged_fixed.fixed_versions(table), memory)


def test_a_claims_column_with_no_value_is_read(tmp_path) -> None:
    """A ``claims_fixed_target`` written with no value at all (Parquet's null type, which
    DuckDB reads as integers) still lets the engine read the run (every fixed contract's
    claim unknown)."""
    run = fixed_run(seed=10).astype({"claims_fixed_target": object})
    run["claims_fixed_target"] = None
    frame, path = _written(run, tmp_path / "null.parquet")
    table = _table(engines.connect("duckdb"), path)
    assert engine_judged.supported(table)
    memory = fixed_versions(frame)
    assert len(memory) and (memory["n_fixed"] == 0).all()
    _same(judged_fixed.fixed_versions(table), memory)


def test_a_run_in_two_files(tmp_path) -> None:
    """A run split over two Parquet files (rows interleaved, so an item's first row may be in
    either), read in the memory engine's file order (``files``)."""
    from kbench_core.engines.memory import load_in_memory

    run = fixed_run(seed=11)
    folder = tmp_path / "parts"
    folder.mkdir()
    run.iloc[::2].to_parquet(folder / "part-b.parquet")
    run.iloc[1::2].to_parquet(folder / "part-a.parquet")
    (src,) = source.sources(folder)
    _HELD.append(src)
    table = source.open_table(engines.connect("duckdb"), src)
    files = tuple(f.name for f in src.files)
    (loaded,) = load_in_memory(folder)
    for choice in ({}, {"failed_as": "not_found"}):
        _same(judged_fixed.fixed_versions(table, choice, files),
              fixed_versions(loaded.frame, consensus=choice))


def test_a_missing_column_is_named(run_file) -> None:
    _, path = run_file
    chosen = engine_judged.answers(_table(engines.connect("duckdb"), path), judge="j1")
    with pytest.raises(ValueError, match=r"needs the column.*difficulty"):
        judged_fixed.fixed_claims(chosen, by=("model", "difficulty"))


@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), n_samples=st.integers(1, 12),
       absent=st.sampled_from([0.0, 0.3]), failed=st.sampled_from([0.0, 0.3]),
       unknown=st.sampled_from([0.0, 0.5, 1.0]),
       prompts=st.sampled_from([("p",), ("p", "q", "r")]),
       choice=st.sampled_from(CHOICES[:4]))
def test_engine_equals_memory_property(tmp_path, seed, n_samples, absent, failed, unknown,
                                       prompts, choice) -> None:
    frame = fixed_run(n_samples, seed, absent=absent, failed=failed, unknown=unknown,
                      prompts=prompts)
    frame, path = _written(frame, tmp_path / f"run{next(_DRAWN)}.parquet")
    table = _table(engines.connect("duckdb"), path)
    try:
        memory = fixed_versions(frame, consensus=choice)
    except ValueError:  # a voter left out of every row: both refuse
        with pytest.raises(ValueError):
            judged_fixed.fixed_versions(table, choice)
        return
    _same(judged_fixed.fixed_versions(table, choice), memory)


# ------------------------------------------------------------------ the finish, by hand


def test_the_finish_worked_by_hand() -> None:
    """One detector, three fixed contracts (samples a, b, c) and two vulnerable ones (d, e),
    one answer each: fixed_known = 1 + 1 + 1 = 3, fixed_claims = 1 + 0 + 1 = 2, so the rate is
    2/3 with statsmodels' Wilson interval on 2 of 3 (one answer per sample: no design
    effect); TDR 1/2; a fixed contract with no readable claim (sample f) counts only in
    n_fixed_unknown."""
    cells = FixedCells(
        keys=pd.DataFrame({"model": ["m"]}), group=np.zeros(6, dtype=np.int64),
        sums={"n_rows": np.ones(6), "fixed_known": np.array([1, 1, 1, 0, 0, 0.]),
              "fixed_claims": np.array([1, 0, 1, 0, 0, 0.]),
              "fixed_unknown": np.array([0, 0, 0, 0, 0, 1.]),
              "vulnerable": np.array([0, 0, 0, 1, 1, 0.]),
              "found": np.array([0, 0, 0, 1, 0, 0.])},
        singletons=True)
    row = fixed_claims_from_sums(cells, judge="j").iloc[0]
    assert (row["model"], row["judge"]) == ("m", "j")
    assert (row["n_fixed"], row["fixed_claims"], row["n_fixed_unknown"]) == (3, 2, 1)
    assert row["fixed_claim_rate"] == pytest.approx(2 / 3, abs=1e-12)
    assert (row["fixed_claim_rate_low"], row["fixed_claim_rate_high"]) == pytest.approx(
        proportion_confint(2, 3, method="wilson"), abs=1e-12)
    assert (row["n_vulnerable"], row["targets_found"], row["tdr"]) == (2, 1, 0.5)
    assert (row["tdr_low"], row["tdr_high"]) == pytest.approx(
        proportion_confint(1, 2, method="wilson"), abs=1e-12)


def test_the_finish_clusters_by_sample_by_hand() -> None:
    """Two samples of two answers each, alike within a sample (both claimed in a, neither
    in b): the rate is 2/4 = 0.5. The jackknife leaves out a (0/2 left) and b (2/2 left):
    mean 0.5, V_J = (2 - 1)/2 · (0.5² + 0.5²) = 0.25, against p(1 - p)/U = 0.25/4 for
    independent answers, so deff = 4 and the interval is Wilson's on 2/4 = 0.5 successes of
    the effective n 4/4 = 1 (the samples agree with themselves: two answers are worth one)."""
    cells = FixedCells(
        keys=pd.DataFrame({"model": ["m"]}), group=np.zeros(2, dtype=np.int64),
        sums={"n_rows": np.array([2., 2.]), "fixed_known": np.array([2., 2.]),
              "fixed_claims": np.array([2., 0.]), "fixed_unknown": np.zeros(2),
              "vulnerable": np.zeros(2), "found": np.zeros(2)},
        singletons=False)
    row = fixed_claims_from_sums(cells, judge="j").iloc[0]
    assert (row["n_fixed"], row["fixed_claims"], row["fixed_claim_rate"]) == (4, 2, 0.5)
    z = 1.959963984540054
    n, p = 1.0, 0.5  # the effective n and rate
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert (row["fixed_claim_rate_low"], row["fixed_claim_rate_high"]) == pytest.approx(
        (centre - half, centre + half), abs=1e-12)
    assert np.isnan(row["tdr"]) and row["n_vulnerable"] == 0
