"""Cohen's κ between judges computed in the engine (``engines.judged_kappa``, issue 39): the
engine returns the joint table of the judges' codes, numpy finishes κ, and the frame equals
memory's ``agreement.pairwise_kappa(agreement.labels_as_judged(...))`` at 1e-9 on DuckDB (and
Spark), on runs with failed judgements, judges without a row, an item one judge labelled,
a human judge, a judge that always says the same; and the counted grid equals the items'."""

from __future__ import annotations

import itertools
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbench_core import agreement, engines, io
from kbench_core.agreement._labels import _Label, _layout
from kbench_core.agreement.kappa import _kappa_frame
from kbench_core.engines import judged_kappa, source

_HELD: list = []  # the sources whose pinned files the tables read (kept open)
_NUMBER = itertools.count()  # a new file name per hypothesis example


def judged_run(n_judges: int = 2, *, n_samples: int = 25, human: bool = True, seed: int = 0,
               p_absent: float = 0.15, p_failed: float = 0.12,
               constant: str | None = None, lonely: bool = True) -> pd.DataFrame:
    """``n_judges`` LLM judges (``j0``, ``j1``, ...) and perhaps ``human`` on 2 detectors × 2
    prompt types: rows left out (``p_absent``), failed judgements with null labels
    (``p_failed``), a judge ``constant`` that always says "not found", and (``lonely``) an
    item only ``j0`` labelled and one only ``human`` has a row for."""
    rng = np.random.default_rng(seed)
    names = [f"j{i}" for i in range(n_judges)] + (["human"] if human else [])
    rows = []
    for s in range(n_samples):
        vulnerable = bool(rng.random() < 0.6)
        for model in ("det-a", "det-b"):
            for prompt in ("direct", " naturalistic"):  # a padded label: the same item
                said = bool(rng.random() < 0.6)
                truth = bool(vulnerable and rng.random() < 0.5)
                for judge in names:
                    if rng.random() < p_absent:
                        continue
                    found = truth if rng.random() < 0.75 else not truth
                    if judge == constant:
                        found = False
                    failed = rng.random() < p_failed
                    rows.append({"sample": f"c{s:03d}", "model": model, "judge": judge,
                                 "prompt_type": prompt, "is_vulnerable": vulnerable,
                                 "said_vulnerable": None if failed and rng.random() < 0.5
                                 else said,
                                 "target_found": None if failed else found,
                                 "failed_judgement": "judge error" if failed else None})
    if lonely:
        rows.append({"sample": "lonely", "model": "det-a", "judge": "j0",
                     "prompt_type": "direct", "is_vulnerable": True, "said_vulnerable": True,
                     "target_found": True, "failed_judgement": None})
        if human:
            rows.append({"sample": "expert-only", "model": "det-a", "judge": "human",
                         "prompt_type": "direct", "is_vulnerable": True,
                         "said_vulnerable": True, "target_found": True,
                         "failed_judgement": None})
    frame = pd.DataFrame(rows)
    for name in ("said_vulnerable", "target_found"):
        frame[name] = frame[name].astype("boolean")
    return frame


def _opened(frame: pd.DataFrame, path: Path, backend) -> tuple[pd.DataFrame, object]:
    """The run as memory loads it and as the engine opens it."""
    frame.to_parquet(path)
    (src,) = source.sources(path)
    _HELD.append(src)
    return io.load_run(path).frame, source.open_table(backend, src)


def _memory(frame: pd.DataFrame, label: str, failed_as: str) -> pd.DataFrame:
    data, _ = agreement.labels_as_judged(frame, label, failed_as)
    return agreement.pairwise_kappa(data, label)


def _same(engine: pd.DataFrame, memory: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(engine, memory, rtol=1e-9, atol=1e-9)


@pytest.fixture(scope="module")
def duckdb():
    return engines.connect("duckdb")


RUNS = {
    "two-judges": dict(n_judges=2),
    "four-judges": dict(n_judges=4, seed=3),
    "four-judges-no-human": dict(n_judges=4, human=False, seed=5),
    "many-failures": dict(n_judges=3, seed=11, p_absent=0.35, p_failed=0.3),
    "a-constant-judge": dict(n_judges=3, seed=2, constant="j1"),
    "no-failure": dict(n_judges=2, seed=4, p_absent=0.0, p_failed=0.0, lonely=False),
}


@pytest.mark.parametrize("failed_as", ["missing", "not_found"])
@pytest.mark.parametrize("label", ["target_found", "said_vulnerable"])
@pytest.mark.parametrize("run", RUNS.values(), ids=RUNS.keys())
def test_duckdb_kappa_is_memory_s(run, label, failed_as, duckdb, tmp_path):
    frame, table = _opened(judged_run(**run), tmp_path / "run.parquet", duckdb)
    engine = judged_kappa.pairwise_kappa(table, label, failed_as=failed_as)
    memory = _memory(frame, label, failed_as)
    _same(engine, memory)
    n_llm = run["n_judges"]
    assert len(engine) == n_llm * (n_llm - 1) // 2


def test_the_edge_cases_are_there(duckdb, tmp_path):
    """The runs above hold what they claim: a NaN κ (the constant judge against one whose
    items also all say no, or n = 0), items one judge labelled, failures that not_found
    fills (n_dropped 0 then, every LLM judge on every item)."""
    frame, table = _opened(judged_run(3, seed=2, constant="j1"), tmp_path / "r.parquet",
                           duckdb)
    missing = judged_kappa.pairwise_kappa(table)
    assert (missing["n_dropped"] > 0).all()
    filled = judged_kappa.pairwise_kappa(table, failed_as="not_found")
    assert (filled["n_dropped"] == 0).all()
    # not_found counts the item only the human has a row for too
    assert (filled["n"] > missing["n"]).all()
    # a judge that is always "no" against one that never labels anything "yes": NaN
    frame, table = _opened(judged_run(2, seed=1, constant="j0", human=False, lonely=False)
                           .assign(target_found=lambda f: f["target_found"] & False),
                           tmp_path / "nan.parquet", duckdb)
    engine = judged_kappa.pairwise_kappa(table)
    assert np.isnan(engine["kappa"]).all() and np.isnan(engine["kappa_low"]).all()
    _same(engine, _memory(frame, "target_found", "missing"))


def test_a_judge_with_no_value_at_all(duckdb, tmp_path):
    """A judge whose every judgement failed: its pairs have n = 0 (NaN) when failures are
    left out, and are all "not found" (κ NaN against a constant) otherwise."""
    run = judged_run(3, seed=8)
    run.loc[run["judge"] == "j2", ["target_found", "failed_judgement"]] = [pd.NA, "error"]
    frame, table = _opened(run, tmp_path / "run.parquet", duckdb)
    for failed_as in ("missing", "not_found"):
        engine = judged_kappa.pairwise_kappa(table, failed_as=failed_as)
        _same(engine, _memory(frame, "target_found", failed_as))
    assert judged_kappa.pairwise_kappa(table).query("judge_b == 'j2'")["n"].eq(0).all()


def test_only_the_joint_table_comes_back(duckdb, tmp_path):
    frame, table = _opened(judged_run(4, seed=3, n_samples=60), tmp_path / "run.parquet",
                           duckdb)
    names, grid, count = judged_kappa.code_patterns(table)
    assert names == ["j0", "j1", "j2", "j3"]
    assert len(grid) == len(count) <= 3 ** 4
    assert len(np.unique(grid, axis=0)) == len(grid)
    # every item some LLM judge has a row for, once
    assert count.sum() == _layout(frame, human=False).n_items > 200


def test_fewer_than_two_llm_judges_raise_as_memory_does(duckdb, tmp_path):
    frame, table = _opened(judged_run(1, seed=2), tmp_path / "run.parquet", duckdb)
    with pytest.raises(ValueError) as memory:
        _memory(frame, "target_found", "missing")
    with pytest.raises(ValueError) as engine:
        judged_kappa.pairwise_kappa(table)
    assert str(engine.value) == str(memory.value)


def test_other_labels_raise(duckdb, tmp_path):
    _, table = _opened(judged_run(2), tmp_path / "run.parquet", duckdb)
    with pytest.raises(ValueError, match="yes/no labels"):
        judged_kappa.pairwise_kappa(table, "type_match")
    with pytest.raises(ValueError, match="yes/no labels"):
        judged_kappa.pairwise_kappa(table, "is_vulnerable")


def test_a_repeated_judgement_raises(duckdb, tmp_path):
    run = judged_run(2, seed=6)
    run = pd.concat([run, run[run["judge"] == "j1"].head(1)], ignore_index=True)
    path = tmp_path / "run.parquet"
    run.to_parquet(path)
    (src,) = source.sources(path)
    _HELD.append(src)
    table = source.open_table(duckdb, src)
    with pytest.raises(ValueError, match="more than once"):
        judged_kappa.pairwise_kappa(table)


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), n_judges=st.integers(2, 4), human=st.booleans(),
       n_samples=st.integers(1, 12), p_absent=st.sampled_from([0.0, 0.3, 0.6]),
       p_failed=st.sampled_from([0.0, 0.2, 0.5]), failed_as=st.sampled_from(
           ["missing", "not_found"]))
def test_engine_kappa_equals_memory_on_random_runs(duckdb, tmp_path, seed, n_judges, human,
                                                   n_samples, p_absent, p_failed, failed_as):
    run = judged_run(n_judges, n_samples=n_samples, human=human, seed=seed,
                     p_absent=p_absent, p_failed=p_failed, lonely=seed % 2 == 0)
    present = {j for j in run["judge"].unique() if j != "human"}
    path = tmp_path / f"run-{next(_NUMBER)}.parquet"
    frame, table = _opened(run, path, duckdb)
    if len(present) < 2:
        with pytest.raises(ValueError, match="at least two judges"):
            judged_kappa.pairwise_kappa(table, failed_as=failed_as)
        return
    _same(judged_kappa.pairwise_kappa(table, failed_as=failed_as),
          _memory(frame, "target_found", failed_as))


# ------------------------------------------------ the counted grid is the items' grid

_YES_NO = _Label("target_found", False, None, None, (False, True), True, True)


def _frame(grid: np.ndarray, count: np.ndarray | None = None) -> pd.DataFrame:
    names = [f"j{i}" for i in range(grid.shape[1])]
    pairs = list(combinations(range(len(names)), 2))
    return _kappa_frame(grid, names, pairs, _YES_NO, None, "asymptotic", 1000, 0,
                        count=count)


def test_a_counted_grid_equals_its_repeated_rows():
    patterns = np.array([[0, 0, -1], [1, 1, 1], [0, 1, 0], [-1, 1, 1], [1, 0, -1],
                         [-1, -1, 0], [-1, -1, -1]])
    count = np.array([7, 12, 3, 5, 2, 4, 9])
    expanded = np.repeat(patterns, count, axis=0)
    counted = _frame(patterns, count)
    _same(counted, _frame(expanded))
    # the rows' order does not matter either
    shuffled = np.random.default_rng(0).permutation(len(expanded))
    _same(counted, _frame(expanded[shuffled]))
    assert counted["n"].tolist() == [24, 15, 20]


def test_unit_counts_change_nothing():
    grid = np.random.default_rng(1).integers(-1, 2, size=(50, 4))
    _same(_frame(grid, np.ones(len(grid), dtype=np.int64)), _frame(grid))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(-1, 1), st.integers(-1, 1), st.integers(-1, 1),
                          st.integers(1, 40)), min_size=1, max_size=12, unique_by=lambda r:
                r[:3]))
def test_counted_grids_equal_expanded_ones(rows):
    patterns = np.array([r[:3] for r in rows])
    count = np.array([r[3] for r in rows])
    _same(_frame(patterns, count), _frame(np.repeat(patterns, count, axis=0)))


def test_a_counted_grid_refuses_a_bootstrap():
    grid = np.array([[0, 1], [1, 1]])
    with pytest.raises(ValueError, match="resamples items"):
        _kappa_frame(grid, ["a", "b"], [(0, 1)], _YES_NO, None, "bootstrap", 10, 0,
                     count=np.array([3, 4]))


def _padded_judges(run: pd.DataFrame) -> pd.DataFrame:
    return run.assign(judge=run["judge"].replace({"j1": " j1 ", "human": "human "}))


def _some_blank_prompts(run: pd.DataFrame) -> pd.DataFrame:
    """One detector's second prompt type missing, the other's blank (missing once read)."""
    prompt = run["prompt_type"].astype(object)
    second = prompt != "direct"
    prompt[second & (run["model"] == "det-a")] = None
    prompt[second & (run["model"] == "det-b")] = "  "
    return run.assign(prompt_type=prompt)


def _no_prompt_type(run: pd.DataFrame) -> pd.DataFrame:
    return run[run["prompt_type"] == "direct"].drop(columns="prompt_type")


@pytest.mark.parametrize("change", [_padded_judges, _some_blank_prompts, _no_prompt_type],
                         ids=["padded-judges", "blank-prompts", "no-prompt-type"])
@pytest.mark.parametrize("failed_as", ["missing", "not_found"])
def test_awkward_keys_are_memory_s(change, failed_as, duckdb, tmp_path):
    """Judges' names padded (`` j1 `` is ``j1``, ``human `` the human), prompt types missing
    or blank (one missing item key), or no prompt type at all: the items memory makes."""
    frame, table = _opened(change(judged_run(3, seed=4)), tmp_path / "run.parquet", duckdb)
    _same(judged_kappa.pairwise_kappa(table, failed_as=failed_as),
          _memory(frame, "target_found", failed_as))
