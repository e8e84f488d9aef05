"""A judged run's answers and tiers computed in the engine (issue 39): the majority consensus
and one judge's rows by a group-by on the item key (``engines.judged``), equal to the memory
engine's (``agreement.consensus``, ``agreement.judge_rows``, then ``vuln.tiers``) at 1e-9 on
DuckDB and Spark, on a run with every awkward case: failed judgements, judges without a row
for an item, ties, a human judge, padded labels, line lists written several ways."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kbench_core import engines, io, vuln
from kbench_core.agreement import consensus, judge_rows
from kbench_core.engines import judged as engine_judged
from kbench_core.engines import source
from tests.engine_queries import assert_asked_once, recorded

ROOT = Path(__file__).resolve().parent.parent
TYPE_MATCHES = ["exact", "semantic", "partial", "wrong", "not_mentioned"]


def awkward_run(n_samples: int = 30, seed: int = 7) -> pd.DataFrame:
    """Three LLM judges and a human on 2 detectors × 2 prompt types: rows left out, failed
    judgements (verdict or found missing), ties (two judges present, one yes one no), mixed
    type matches, scores only where found, padded labels, line lists as ``12, 13``."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(n_samples):
        vulnerable = bool(rng.random() < 0.6)
        severity = rng.choice(["critical", "high", "medium", "low", None])
        difficulty = f"t{s % 3 + 1}"
        true_lines = rng.choice(["10;11", "20", "30;31;32", None])
        for model in ("det-a", "det-b"):
            for prompt in ("direct", " naturalistic"):  # a padded label
                said = bool(rng.random() < 0.6)
                conf = float(np.round(rng.random(), 2))
                for judge in ("j1", "j2", "j3", "human"):
                    if rng.random() < 0.15:
                        continue  # no row of this judge for the item
                    found = bool(vulnerable and rng.random() < 0.5)
                    failed = rng.random() < 0.12
                    claimed = rng.choice(["10;11", "10, 11", "20", "99", None])
                    rows.append({
                        "sample": f"c{s:03d}", "model": model, "judge": judge,
                        "prompt_type": prompt, "is_vulnerable": vulnerable,
                        "severity": severity, "difficulty": difficulty,
                        "said_vulnerable": None if failed and rng.random() < 0.5 else said,
                        "confidence": conf if rng.random() < 0.9 else None,
                        "target_found": None if failed else found,
                        "partial_found": bool(found and rng.random() < 0.3),
                        "type_match": (rng.choice(TYPE_MATCHES) if found else
                                       rng.choice(["not_mentioned", None])),
                        "rcir": float(np.round(rng.random(), 1)) if found else None,
                        "ava": float(np.round(rng.random(), 1)) if found else None,
                        "fsv": float(np.round(rng.random(), 1)) if found else None,
                        "n_target_match": int(found), "n_partial_match": int(rng.integers(2)),
                        "n_bonus_valid": int(rng.integers(2)),
                        "n_hallucinated": int(rng.integers(3)),
                        "n_design_choice": int(rng.integers(2)),
                        "claimed_lines": claimed, "true_lines": true_lines,
                        "failed_judgement": "judge error" if failed else None})
    frame = pd.DataFrame(rows)
    for name in ("said_vulnerable", "target_found", "partial_found"):
        frame[name] = frame[name].astype("boolean")
    return frame


def fixed_run() -> pd.DataFrame:
    """:func:`awkward_run` with fixed contracts: a safe sample's answers say whether the
    detector still claims the fixed bug (some unreadable), a vulnerable one's say nothing."""
    frame = awkward_run()
    rng = np.random.default_rng(11)
    claims = pd.array(rng.random(len(frame)) < 0.4, dtype="boolean")
    claims[rng.random(len(frame)) < 0.1] = pd.NA
    claims[frame["is_vulnerable"].to_numpy(dtype=bool)] = pd.NA
    return frame.assign(claims_fixed_target=claims)


@pytest.fixture(scope="module")
def run_file(tmp_path_factory) -> tuple[io.Run, Path]:
    path = tmp_path_factory.mktemp("judged") / "awkward.parquet"
    awkward_run().to_parquet(path)
    return io.load_run(path), path


@pytest.fixture(scope="module")
def sample_file(tmp_path_factory) -> tuple[io.Run, Path]:
    run = io.load_run(ROOT / "sample_data" / "judged.csv")
    path = tmp_path_factory.mktemp("sample") / "judged.parquet"
    run.frame.to_parquet(path)
    return run, path


_HELD: list = []  # the sources whose pinned files the tables read (kept open)


def _without_some(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` less det-b's rows of three vulnerable samples: the detectors' TDRs then rest
    on different answers."""
    lost = frame.loc[frame["is_vulnerable"] == True, "sample"].unique()[:3]  # noqa: E712
    return frame[~((frame["model"] == "det-b") & frame["sample"].isin(lost))]


def _table(backend, path: Path):
    (src,) = source.sources(path)
    _HELD.append(src)
    return source.open_table(backend, src)


CHOICES = [
    dict(judge=None, failed_as="missing"),
    dict(judge=None, failed_as="not_found"),
    dict(judge=None, judges=["j1", "j3"], failed_as="missing"),
    dict(judge=None, min_votes=1, failed_as="missing"),
    dict(judge=None, judges=["j1", "j2", "j3"], min_votes=3, failed_as="not_found"),
    dict(judge="j2", failed_as="missing"),
    dict(judge="j2", failed_as="not_found"),
    dict(judge="human", failed_as="not_found"),
    # items whose two voters both failed: 0 votes, not a missing count
    dict(judge=None, judges=["j1", "j3"], min_votes=1, failed_as="not_found"),
]


def _memory_answers(frame: pd.DataFrame, choice: dict) -> pd.DataFrame:
    choice = dict(choice)
    judge = choice.pop("judge")
    if judge is None:
        return consensus(frame, **choice)
    return judge_rows(frame, judge, failed_as=choice["failed_as"])


def _same_tiers(engine_rows: pd.DataFrame, memory_rows: pd.DataFrame, **options) -> None:
    for by in (("model",), ("model", "prompt_type"), ("model", "difficulty")):
        if by[-1] not in memory_rows:
            continue
        left = vuln.tiers(engine_rows, by=by, **options)
        right = vuln.tiers(memory_rows, by=by, **options)
        pd.testing.assert_frame_equal(left, right, rtol=1e-9, atol=1e-9, check_dtype=False,
                                      check_categorical=False)


@pytest.mark.parametrize("choice", CHOICES, ids=lambda c: "-".join(
    f"{k}={v}" for k, v in c.items()))
def test_duckdb_answers_give_the_memory_tiers(choice, run_file):
    run, path = run_file
    table = _table(engines.connect("duckdb"), path)
    kwargs = {k: v for k, v in choice.items() if k != "judge"}
    chosen = engine_judged.answers(table, judge=choice["judge"], **kwargs)
    fetched = engine_judged.fetch_answers(chosen)
    memory = _memory_answers(run.frame, choice)
    assert len(fetched) == len(memory)
    _same_tiers(fetched, memory)
    _same_tiers(fetched, memory, partial_credit=0.5, severity_weights={"critical": 3},
                ci="bootstrap", n_boot=50, binning="quantile", zero_division=np.nan)


def test_the_sample_run_on_duckdb(sample_file):
    run, path = sample_file
    table = _table(engines.connect("duckdb"), path)
    for choice in CHOICES[:2] + CHOICES[5:7]:
        kwargs = {k: v for k, v in choice.items() if k != "judge"}
        judge = choice["judge"] and "judge-two"
        fetched = engine_judged.fetch_answers(
            engine_judged.answers(table, judge=judge, **kwargs))
        _same_tiers(fetched, _memory_answers(run.frame, {**choice, "judge": judge}),
                    ci="bootstrap", n_boot=50)


def test_the_answers_hold_only_what_the_tiers_read(run_file):
    _, path = run_file
    table = _table(engines.connect("duckdb"), path)
    columns = engine_judged.answers(table).columns
    assert "failed_judgement" not in columns and "n_design_choice" in columns
    assert engine_judged.supported(table)


def test_an_unknown_judge_is_named(run_file):
    _, path = run_file
    table = _table(engines.connect("duckdb"), path)
    with pytest.raises(ValueError, match="judge 'nobody' is not in the frame"):
        engine_judged.answers(table, judge="nobody")
    with pytest.raises(ValueError, match="no judge 'nobody'"):
        engine_judged.answers(table, judges=["nobody"])


# The majority under one rule and one judge: the answers' SQL is the same under every
# choice, each held to memory on DuckDB above (the default majority too: 33 s on Spark).
@pytest.mark.parametrize("choice", [CHOICES[1], CHOICES[6]],
                         ids=["majority-not-found", "j2-not-found"])
def test_spark_answers_give_the_memory_tiers(choice, run_file, spark):
    run, path = run_file
    table = _table(spark, path)
    kwargs = {k: v for k, v in choice.items() if k != "judge"}
    fetched = engine_judged.fetch_answers(
        engine_judged.answers(table, judge=choice["judge"], **kwargs))
    _same_tiers(fetched, _memory_answers(run.frame, choice), ci="bootstrap", n_boot=50)


# ----------------------------------------------------- the tiers from the engine's cells

OPTIONS = [
    {},
    dict(ci="bootstrap", n_boot=60),
    dict(partial_credit=0.5, severity_weights={"critical": 3, "high": 2}, n_bins=7,
         zero_division=np.nan, no_target_reasoning="renormalise"),
    dict(binning="quantile", n_bins=5, ci="bootstrap", n_boot=40,
         sui_weights={"f2": 1.0, "calibration": 0.5}),
]


def _same_cells(cells, memory_rows: pd.DataFrame, options: dict, by_list=None) -> None:
    for by in by_list or (("model",), ("model", "prompt_type"), ("model", "difficulty")):
        if by[-1] not in memory_rows:
            continue
        left = vuln.tiers(cells, by=by, **options)
        right = vuln.tiers(memory_rows, by=by, **options)
        pd.testing.assert_frame_equal(left, right, rtol=1e-9, atol=1e-9, check_dtype=False,
                                      check_categorical=False)


# Each choice of answers with each option set once and twice with the bootstrap: the answers
# themselves are held to memory under every choice above, so the whole cross product (16
# cases, 90 s) repeated the same checks.
CELL_CASES = [(CHOICES[0], OPTIONS[0]), (CHOICES[1], OPTIONS[1]), (CHOICES[4], OPTIONS[2]),
              (CHOICES[6], OPTIONS[3]), (CHOICES[4], OPTIONS[3]), (CHOICES[6], OPTIONS[1])]


@pytest.mark.parametrize(("choice", "options"), CELL_CASES, ids=[
    "majority-default", "majority-not-found-bootstrap", "three-of-three-weighted",
    "j2-quantile-bootstrap", "three-of-three-quantile-bootstrap", "j2-bootstrap"])
def test_duckdb_cells_give_the_memory_tiers(choice, options, run_file):
    run, path = run_file
    table = _table(engines.connect("duckdb"), path)
    kwargs = {k: v for k, v in choice.items() if k != "judge"}
    cells = engine_judged.EngineCells(engine_judged.answers(table, judge=choice["judge"],
                                                            **kwargs))
    _same_cells(cells, _memory_answers(run.frame, choice), options)


def test_a_frame_through_its_cells_gives_its_tiers(run_file):
    """The memory engine's way through the same finish: the cells of a frame's answers."""
    run, _ = run_file
    rows = consensus(run.frame)
    for options in OPTIONS:
        _same_cells(vuln.cells.FrameCells(rows), rows, options)


def test_only_cells_come_back(run_file, monkeypatch):
    """No answer is fetched for the tiers (only for equal-mass bins' bootstrap): every
    table the engine returns is at most one row per group × sample (× bin)."""
    run, path = run_file
    table = _table(engines.connect("duckdb"), path)
    cells = engine_judged.EngineCells(engine_judged.answers(table))
    answers = len(consensus(run.frame))
    seen = []
    import ibis.expr.types as ir

    original = ir.Table.to_pyarrow

    def counted(self, *args, **kwargs):
        out = original(self, *args, **kwargs)
        seen.append(out.num_rows)
        return out

    from kbench_core.engines import judged_cells

    bounded = judged_cells.bounded

    def counted_bounded(*args, **kwargs):  # the cells' and bins' fetches
        out = bounded(*args, **kwargs)
        seen.append(out.num_rows)
        return out

    monkeypatch.setattr(ir.Table, "to_pyarrow", counted)
    monkeypatch.setattr(judged_cells, "bounded", counted_bounded)
    vuln.tiers(cells, ci="bootstrap", n_boot=20)
    n_cells = cells.cells(("model",)).n_cells
    assert seen and max(seen) <= n_cells * 10 < answers * 10
    assert cells.cells(("model",)).n_cells < answers


def test_read_sums_by_hand():
    """The sums a quantity is made of (vuln.cells.derived), as the tiers' definitions read:
    valid credit = target + partial credit x partial + bonus matches; the credited finds
    without severity = found - (1 - credit) x partial, with it per severity level."""
    from kbench_core.vuln.cells import read_sums

    assert read_sums(("valid_credit",), 0.5, None, True) == (
        "n_target_match", "n_partial_match", "n_bonus_valid")
    assert read_sums(("credit_weight",), 0.5, None, True) == ("found", "partial")
    assert read_sums(("vul_weight", "n"), 1.0, None, False) == ("n", "vulnerable")
    weighted = read_sums(("credit_weight",), 0.5, {"critical": 3}, True)
    assert weighted == tuple(f"{what}@{i}" for i in range(5) for what in ("found", "partial"))
    # without a severity column the weights have nothing to weigh
    assert read_sums(("credit_weight",), 0.5, {"critical": 3}, False) == ("found", "partial")
    # in the table's order (the means' sums: invalid first)
    assert read_sums(("rcir_sum", "invalid_sum"), 1.0, None, True) == ("invalid_sum",
                                                                       "rcir_sum")


@pytest.mark.parametrize("options", [OPTIONS[1], {**OPTIONS[2], **OPTIONS[1]}],
                         ids=["bootstrap", "weighted-bootstrap"])
def test_the_bootstrap_fetches_only_the_sums_it_draws(options, run_file, monkeypatch):
    """Issue 39: with ``ci="bootstrap"`` the cells come back per sample (the bootstrap draws
    them), but only with the sums its quantities are made of (read_sums: a third of them
    without severity weights, which read each severity's);
    every other number is the engine's per-group statistics; the table is memory's."""
    from kbench_core.vuln.cells import read_sums, sum_names
    from kbench_core.vuln.tiers import _DRAWN

    run, path = run_file
    table = _table(engines.connect("duckdb"), path)
    cells = engine_judged.EngineCells(engine_judged.answers(table))
    fetched = []
    original = engine_judged.EngineCells.cells

    def recorded_cells(self, by, sums=None):
        out = original(self, by, sums)
        fetched.append(set(out.sums))
        return out

    monkeypatch.setattr(engine_judged.EngineCells, "cells", recorded_cells)
    left = vuln.tiers(cells, **options)
    monkeypatch.undo()
    right = vuln.tiers(consensus(run.frame), **options)
    severity = "severity" in run.frame
    wanted = set(read_sums(_DRAWN, options.get("partial_credit", 1.0),
                           options.get("severity_weights"), severity))
    assert fetched and all(f == wanted for f in fetched)
    every = len(sum_names(severity=severity))
    assert len(wanted) < (every if "severity_weights" in options else every / 2)
    pd.testing.assert_frame_equal(left, right, rtol=1e-9, atol=1e-9, check_dtype=False,
                                  check_categorical=False)


@pytest.mark.parametrize("options", [OPTIONS[0], OPTIONS[2]], ids=["default", "weighted"])
def test_without_the_bootstrap_no_cell_comes_back(options, run_file, monkeypatch):
    """Issue 39: the tiers' totals, design effects and means' parts are group-bys of the
    cells inside the engine (``engines.judged_stats``), and the calibration bins' totals
    are summed per (group, bin): no per-sample cell is fetched, every table is a row per
    group (or group x bin), and the numbers are memory's."""
    run, path = run_file
    table = _table(engines.connect("duckdb"), path)
    cells = engine_judged.EngineCells(engine_judged.answers(table))
    import ibis.expr.types as ir

    from kbench_core.engines import judged_cells

    def refused(*args, **kwargs):
        raise AssertionError("the cells were fetched")

    seen = []
    fetch, execute = ir.Table.to_pyarrow, ir.Table.execute

    def fetched(self, *args, **kwargs):
        out = fetch(self, *args, **kwargs)
        seen.append(out.num_rows)
        return out

    def executed(self, *args, **kwargs):
        out = execute(self, *args, **kwargs)
        seen.append(len(out))
        return out

    bounded, columns = judged_cells.bounded, []

    def named(*args, **kwargs):  # the calibration cells' fetch
        out = bounded(*args, **kwargs)
        columns.append(out.column_names)
        return out

    monkeypatch.setattr(judged_cells.EngineCells, "cells", refused)
    monkeypatch.setattr(ir.Table, "to_pyarrow", fetched)
    monkeypatch.setattr(ir.Table, "execute", executed)
    monkeypatch.setattr(judged_cells, "bounded", named)
    by = ("model", "prompt_type")
    left = vuln.tiers(cells, by=by, **options)
    monkeypatch.undo()
    rows = consensus(run.frame)
    right = vuln.tiers(rows, by=by, **options)
    # a row per group, or per group x difficulty (the difficulty means' tiers)
    split = len(vuln.tiers(rows, by=(*by, "difficulty")))
    assert seen and max(seen) <= split < run.frame["sample"].nunique()
    # the calibration bins per (group, bin): no sample among their keys
    assert columns and not [c for c in columns if "sample" in c]
    pd.testing.assert_frame_equal(left, right, rtol=1e-9, atol=1e-9, check_dtype=False,
                                  check_categorical=False)


def test_one_group_of_every_answer_on_duckdb(run_file):
    """``by=()``: the whole run as one group, its statistics in the engine as memory's."""
    run, path = run_file
    table = _table(engines.connect("duckdb"), path)
    cells = engine_judged.EngineCells(engine_judged.answers(table))
    rows = consensus(run.frame)
    for options in (OPTIONS[0], OPTIONS[2]):
        pd.testing.assert_frame_equal(vuln.tiers(cells, by=(), **options),
                                      vuln.tiers(rows, by=(), **options), rtol=1e-9,
                                      atol=1e-9, check_dtype=False)


def test_the_sample_run_cells_on_duckdb(sample_file):
    run, path = sample_file
    table = _table(engines.connect("duckdb"), path)
    cells = engine_judged.EngineCells(engine_judged.answers(table))
    _same_cells(cells, consensus(run.frame), dict(ci="bootstrap", n_boot=50))


def test_spark_cells_give_the_memory_tiers(run_file, spark):
    """Equal-mass bins and the cluster bootstrap on Spark (the bootstrap's draws and bins are
    the engine-neutral code DuckDB runs above; one grouping keeps Spark's minute down)."""
    run, path = run_file
    table = _table(spark, path)
    cells = engine_judged.EngineCells(engine_judged.answers(table, failed_as="not_found"))
    _same_cells(cells, consensus(run.frame, failed_as="not_found"), OPTIONS[3],
                by_list=(("model", "difficulty"),))


def test_a_column_with_no_value_is_summed_on_spark(run_file, tmp_path, spark):
    """A line list or label with no value at all is Parquet's null type, which Spark reads
    as integers (as DuckDB does: tests/test_failed_judgements.py): still a supported table
    (no fetch), its tiers memory's."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    run, _ = run_file
    table = pa.Table.from_pandas(run.frame.drop(columns=["true_lines", "type_match"]),
                                 preserve_index=False)
    table = table.append_column("true_lines", pa.nulls(len(table)))
    table = table.append_column("type_match", pa.nulls(len(table)))
    path = tmp_path / "empty-columns.parquet"
    pq.write_table(table, path)
    assert pq.read_schema(path).field("true_lines").type == pa.null()
    opened = _table(spark, path)
    assert engine_judged.supported(opened)
    memory = io.load_run(path).frame
    cells = engine_judged.EngineCells(engine_judged.answers(opened, failed_as="not_found"))
    _same_cells(cells, consensus(memory, failed_as="not_found"), {}, by_list=(("model",),))


# ------------------------------------------------------------------------ kbench metrics


def _printed(argv: list[str], capsys) -> pd.DataFrame:
    import io as io_

    from kbench_core.cli import main

    capsys.readouterr()
    assert main(argv) == 0
    return pd.read_csv(io_.StringIO(capsys.readouterr().out), comment="#")


@pytest.mark.parametrize(("extra", "parts"), [
    ([], 1), (["--failed-as", "not-found", "--judges", "j1,j3", "--min-votes", "1"], 1),
    (["--judge", "j2"], 1), ([], 2)],
    ids=["majority-and-judges", "chosen-voters", "one-judge", "in-two-parts"])
def test_metrics_on_duckdb_prints_the_memory_table_from_cells(extra, parts, run_file, capsys,
                                                              monkeypatch):
    run, path = run_file
    # KBENCH_DUCKDB_PART_ROWS: each view's answers and sums made in ``parts`` parts
    monkeypatch.setattr(engines.settings, "DUCKDB_PART_ROWS", len(run.frame) // parts + 1)
    memory = _printed(["metrics", str(path), "--engine", "memory", "--precision", "full",
                       *extra], capsys)

    def refused(*args, **kwargs):
        raise AssertionError("the answers were fetched")

    monkeypatch.setattr(engines.reduce, "typed_rows", refused)
    monkeypatch.setattr(engines.settings, "JUDGED_CELLS_ROWS", 0)  # cells at any size
    monkeypatch.setattr(engines.settings, "JUDGED_RUN_ROWS", 0)
    with recorded(monkeypatch) as seen:
        duck = _printed(["metrics", str(path), "--precision", "full", *extra], capsys)
    assert_asked_once(seen)  # each label column's distinct values fetched once, and so on
    pd.testing.assert_frame_equal(memory, duck, rtol=1e-9, atol=1e-9)
    assert len(duck) >= 2


def _compared(argv: list[str], capsys) -> tuple[str, str]:
    from kbench_core.cli import main

    capsys.readouterr()
    assert main(argv) == 0
    out = capsys.readouterr()
    return "\n".join(line for line in out.out.splitlines()
                     if not line.startswith("# created")), out.err


@pytest.mark.parametrize("extra", [
    [], ["--metric", "correct", "--failed-as", "not-found", "--judges", "j1,j3",
         "--min-votes", "1"],
    ["--judge", "j2", "--failed-as", "not-found", "--models", "det-a", "det-b"],
    ["--judge", "human", "--metric", "confidence"], ["--metric", "target_found"]],
    ids=["majority", "chosen-voters", "one-judge-two-models", "human-number", "renamed"])
def test_compare_on_duckdb_is_memory_s_without_fetching_an_answer(extra, run_file, capsys,
                                                                  monkeypatch):
    """``kbench compare`` of a judged run through DuckDB: the chosen judge's answers made
    in the engine (``engines.judged.answers``), ``correct`` / ``target_found_vulnerable``
    written there (``engines.judged.per_item``) and paired by sample and prompt type
    (``engines.items.item_means``); the printed table, the judge named on stderr and the
    majority's rule in the provenance equal to the memory engine's, no answer fetched."""
    _, path = run_file
    argv = ["compare", str(path), "--format", "csv", *extra]
    memory = _compared([*argv, "--engine", "memory"], capsys)
    with monkeypatch.context() as patched, recorded(monkeypatch) as seen:
        patched.setattr(engines.reduce, "typed_rows", _refused)
        duck = _compared([*argv, "--engine", "duckdb"], capsys)
    assert duck == memory
    assert_asked_once(seen)
    assert "det-a" in memory[0] and "# judge: " in memory[1]


def _refused(*args, **kwargs):
    raise AssertionError("the answers were fetched")


def test_compare_on_duckdb_names_a_judge_the_run_lacks_as_memory_does(run_file) -> None:
    from kbench_core.cli import main

    _, path = run_file
    messages = []
    for engine in ("memory", "duckdb"):
        with pytest.raises(SystemExit) as err:
            main(["compare", str(path), "--engine", engine, "--judges", "j1,nobody"])
        messages.append(str(err.value))
    assert messages[0] == messages[1] and "nobody" in messages[0]


def test_spark_profile_is_memory_s(run_file, spark, monkeypatch) -> None:
    from kbench_core.families.judged import _engine_run, _profile_rows

    run, path = run_file
    monkeypatch.setattr(engines.settings, "JUDGED_CELLS_ROWS", 0)
    monkeypatch.setattr(engines.settings, "JUDGED_RUN_ROWS", 0)
    (src,) = source.sources(path)
    summed = _engine_run(src, spark)
    for left, right in zip(_profile_rows(summed), _profile_rows(run), strict=True):
        if isinstance(left, pd.DataFrame):
            pd.testing.assert_frame_equal(left, right, rtol=1e-9, atol=1e-12)
        else:
            assert left == right


def test_spark_compare_items_are_memory_s(run_file, spark) -> None:
    """The items × models table of ``correct`` under the majority of j1 and j3, made in
    Spark, equal to the one memory makes from the consensus."""
    from kbench_core import compare

    run, path = run_file
    choice = dict(judges=["j1", "j3"], min_votes=1, failed_as="not_found")
    made, items = engines.compare_source(path, "correct", engine="spark", cluster="sample",
                                         backend=spark, options=choice)
    rows = compare.per_item_values(consensus(run.frame, **choice), "judged")
    memory = compare.item_values(rows, "correct", cluster="sample")
    pd.testing.assert_frame_equal(compare.item_values(items, "correct", cluster="sample"),
                                  memory, rtol=1e-9, atol=1e-12)
    assert made.meta["compared_as"]["consensus_judges"] == ["j1", "j3"]


@pytest.mark.parametrize("judges", [None, ["j2"], ["human"]],
                         ids=["majority", "one-llm-judge", "human-only"])
def test_profile_on_duckdb_is_memory_s_without_fetching_an_answer(judges, run_file, tmp_path,
                                                                   capsys, monkeypatch):
    """``kbench profile`` of a judged run through DuckDB, from the cells and per-sample sums
    the engine makes (``Family.engine_run``): TDR and SUI, their intervals, ranks and rank
    intervals, the items' words (samples counted, "detectors differ") equal to the memory
    engine's at 1e-9, for the majority of three judges, one LLM judge, and a human only."""
    path = tmp_path / "some.parquet"
    frame = awkward_run()
    frame = frame[frame["judge"].isin(judges)] if judges is not None else _without_some(frame)
    frame.to_parquet(path)
    argv = ["profile", str(path), "--precision", "full"]
    memory = _printed([*argv, "--engine", "memory"], capsys)
    monkeypatch.setattr(engines.settings, "JUDGED_CELLS_ROWS", 0)  # the engine at any size
    monkeypatch.setattr(engines.settings, "JUDGED_RUN_ROWS", 0)
    # the majority's answers made in two parts of the samples (KBENCH_DUCKDB_PART_ROWS)
    monkeypatch.setattr(engines.settings, "DUCKDB_PART_ROWS", len(frame) // 2 + 1)
    made = []
    from kbench_core.engines import judged_cells

    def kept(*args, **kwargs):
        out = in_parts(*args, **kwargs)
        made.append(len(args[0]))
        return out

    in_parts = judged_cells._kept_in_parts
    monkeypatch.setattr(judged_cells, "_kept_in_parts", kept)
    with monkeypatch.context() as patched:
        patched.setattr(engines.reduce, "typed_rows", _refused)
        duck = _printed([*argv, "--engine", "duckdb"], capsys)
    pd.testing.assert_frame_equal(duck, memory, rtol=1e-9, atol=1e-12)
    assert made == ([2] if judges is None else [])
    assert set(memory["metric"]) == {"tdr", "sui"} and memory["rank_low"].notna().any()
    if judges is None:
        assert memory["items"].str.contains("detectors differ").any()


def test_profile_sums_are_the_rows_cluster_sums(tmp_path) -> None:
    """``engines.judged.profile_sums`` against ``profile.cluster_sums`` of the consensus rows
    (every sample, counted or not, in text order), and "differ" when a detector lacks a
    counted answer."""
    from kbench_core.profile import cluster_sums
    from kbench_core.vuln.profile import _flags

    path = tmp_path / "some.parquet"
    frame = _without_some(awkward_run())
    frame.to_parquet(path)
    table = _table(engines.connect("duckdb"), path)
    rows = consensus(io.load_run(path).frame)
    models = sorted(map(str, rows["model"].unique()))
    num, den, differ = engine_judged.profile_sums(engine_judged.answers(table).expr, models,
                                                  cluster="sample",
                                                  item_key=("sample", "prompt_type"))
    truth, said, found = (_flags(rows[c]) for c in ("is_vulnerable", "said_vulnerable",
                                                    "target_found"))
    counted = (truth == 1) & np.isfinite(said) & np.isfinite(found)
    want_num, want_den = cluster_sums(rows, np.where(counted, found, 0.0),
                                      counted.astype(float), pd.Index(models), cluster="sample")
    np.testing.assert_array_equal(num, want_num)
    np.testing.assert_array_equal(den, want_den)
    assert num.shape == (rows["sample"].nunique(), 2) and (den == 0).any() and differ
    awkward_run().to_parquet(tmp_path / "all.parquet")
    everyone = _table(engines.connect("duckdb"), tmp_path / "all.parquet")
    assert not engine_judged.profile_sums(engine_judged.answers(everyone).expr, models,
                                          cluster="sample", item_key=("sample", "prompt_type")
                                          )[2]


def test_metrics_on_duckdb_refuses_a_bad_cell_as_the_loader_does(tmp_path, capsys,
                                                                 monkeypatch):
    from kbench_core.cli import main

    monkeypatch.setattr(engines.settings, "JUDGED_CELLS_ROWS", 0)  # cells at any size
    monkeypatch.setattr(engines.settings, "JUDGED_RUN_ROWS", 0)

    frame = awkward_run(n_samples=4)
    frame.loc[3, "confidence"] = 1.5
    path = tmp_path / "bad.parquet"
    frame.to_parquet(path)
    messages = []
    for engine in ("memory", "duckdb"):
        with pytest.raises(SystemExit) as err:
            main(["metrics", str(path), "--engine", engine])
        messages.append(str(err.value))
    assert messages[0] == messages[1] and "confidence" in messages[0]


def test_metrics_on_duckdb_out_of_memory_names_the_setting(run_file, monkeypatch):
    """The engine running out of memory while it sums the cells (``metrics``, ``profile``) is
    named with the setting to change (engines.EngineMemoryError) and the way around it,
    never an unexpected error."""
    from kbench_core.cli import main

    _, path = run_file

    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(engine_judged, "answers", exhausted)
    monkeypatch.setattr(engines.settings, "JUDGED_CELLS_ROWS", 0)  # cells at any size
    monkeypatch.setattr(engines.settings, "JUDGED_RUN_ROWS", 0)
    rows = len(io.load_run(path).frame)
    for command in ("metrics", "profile"):
        with pytest.raises(SystemExit) as err:
            main([command, str(path), "--engine", "duckdb"])
        said = str(err.value)
        assert "ran out of memory" in said and "KBENCH_DUCKDB_MEMORY" in said, command
        setting = "KBENCH_JUDGED_CELLS_ROWS" if command == "metrics" else "KBENCH_JUDGED_RUN_ROWS"
        assert f"{setting}={rows + 1}" in said, command  # or fetch the rows


def test_out_of_memory_in_a_later_part_is_named_and_leaves_no_table(run_file, monkeypatch):
    """DuckDB out of memory while it writes the second part of a view's answers: ``kbench
    metrics`` names the setting to change, as for the first query, and the parts' table
    written so far is dropped."""
    import duckdb
    import ibis.backends.duckdb as duck

    from kbench_core.cli import main

    run, path = run_file
    monkeypatch.setattr(engines.settings, "JUDGED_CELLS_ROWS", 0)
    monkeypatch.setattr(engines.settings, "DUCKDB_PART_ROWS", len(run.frame) // 2 + 1)
    left = []

    def exhausted(self, name, *args, **kwargs):
        left.append((self, name))
        raise duckdb.OutOfMemoryException("Out of Memory Error: could not allocate block")

    monkeypatch.setattr(duck.Backend, "insert", exhausted)
    with pytest.raises(SystemExit) as err:
        main(["metrics", str(path), "--engine", "duckdb"])
    said = str(err.value)
    assert "ran out of memory" in said and "KBENCH_DUCKDB_MEMORY" in said
    assert "KBENCH_JUDGED_CELLS_ROWS" in said
    ((backend, name),) = left
    assert name not in backend.list_tables()


def test_a_small_judged_run_is_fetched_not_summed(run_file, capsys, monkeypatch):
    """Below ``KBENCH_JUDGED_CELLS_ROWS`` rows (engines.settings) kbench metrics fetches the
    answers (faster at 1M rows than the cells) and prints the same table."""
    _, path = run_file

    def refused(*args, **kwargs):
        raise AssertionError("the cells were summed")

    monkeypatch.setattr(engines.settings, "JUDGED_CELLS_ROWS", 0)
    monkeypatch.setattr(engines.settings, "JUDGED_RUN_ROWS", 0)
    cells = _printed(["metrics", str(path), "--precision", "full"], capsys)
    monkeypatch.undo()
    monkeypatch.setattr(engine_judged, "EngineCells", refused)
    fetched = _printed(["metrics", str(path), "--precision", "full"], capsys)
    pd.testing.assert_frame_equal(cells, fetched, rtol=1e-9, atol=1e-9)


def test_spark_run_kept_in_the_engine_is_memory_s(tmp_path, spark, monkeypatch) -> None:
    """The run kept in Spark: the fixed versions (the majority's and each judge's) and κ
    under both rules equal memory's. The tiers, reliability diagrams and the judges' spread
    read the cells and bins the Spark tests above hold to memory (every item: DuckDB's test,
    tests/test_engine_judged_run.py); the engine's κ and fixed versions have no Spark test
    of their own (one Spark session per module): this one reads them."""
    from kbench_core.families import items_for
    from kbench_core.families.judged import _engine_run
    from tests.same_objects import assert_same

    run_path = tmp_path / "fixed.parquet"
    fixed_run().to_parquet(run_path)
    memory = io.load_run(run_path)
    monkeypatch.setattr(engines.settings, "JUDGED_CELLS_ROWS", 0)
    monkeypatch.setattr(engines.settings, "JUDGED_RUN_ROWS", 0)
    (src,) = source.sources(run_path)
    _HELD.append(src)
    summed = _engine_run(src, spark)
    for name, options in [("fixed_versions", {"failed_as": "not_found"}),
                          ("kappa_heatmap", {"failed_as": "not_found"}),
                          ("kappa_heatmap", {"failed_as": "missing"})]:
        (item,) = [i for i in items_for("judged") if i.name == name]
        mine = list(item.objects(memory.frame, options))
        theirs = list(item.objects(summed.frame, options, tables=summed.tables))
        assert [stem for stem, _ in theirs] == [stem for stem, _ in mine] and mine, name
        for (_, left), (_, right) in zip(mine, theirs, strict=True):
            assert_same(left, right, check_dtype=False, check_categorical=False)


_VOTE = st.one_of(st.none(), st.just(float("nan")),
                  st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 5).flatmap(
    lambda n: st.lists(st.lists(_VOTE, min_size=n, max_size=n), min_size=1, max_size=6)))
def test_the_engine_median_of_the_voters_values_is_pandas(rows) -> None:
    """The majority's number (``engines.judged._median``, across one column per voter) is
    pandas' row median: missing and NaN skipped, the middle value or the mean of the two
    middle ones, missing when no voter gave one; any number of voters, to the last bit."""
    import ibis
    import pyarrow as pa

    n = len(rows[0])
    frame = pd.DataFrame(rows, columns=[f"v{i}" for i in range(n)], dtype=float)
    # NaN kept apart from missing, as a Parquet file holds them
    votes = pa.table({**{f"v{i}": pa.array([r[i] for r in rows], pa.float64(),
                                           from_pandas=False) for i in range(n)},
                      "row": np.arange(len(rows))})
    assert votes.column("v0").null_count == sum(r[0] is None for r in rows)
    table = ibis.duckdb.connect().create_table("votes", votes)
    got = (table.select("row", m=engine_judged._median([table[f"v{i}"] for i in range(n)]))
           .order_by("row").to_pandas()["m"])
    want = frame.median(axis=1, skipna=True)
    np.testing.assert_array_equal(got.to_numpy(dtype=float), want.to_numpy(dtype=float))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 5).flatmap(lambda n: st.tuples(
    st.lists(st.lists(st.one_of(st.none(), st.sampled_from(["exact", "partial", "É", ""])),
                      min_size=n, max_size=n), min_size=1, max_size=6),
    st.integers(1, n))))
def test_the_engine_vote_across_the_voters_columns_is_the_plain_rule(case) -> None:
    """The majority's categorical label (``engines.judged._vote``, across one column per
    voter): the value at least ``needed`` voters give when no other value has as many votes,
    else missing; a missing vote counts for nothing. Checked against the rule counted
    plainly, any number of voters."""
    import collections

    import ibis
    import pyarrow as pa

    rows, needed = case
    n = len(rows[0])
    table = ibis.duckdb.connect().create_table("votes", pa.table({
        **{f"v{i}": pa.array([r[i] for r in rows], pa.string()) for i in range(n)},
        "row": np.arange(len(rows))}))
    got = (table.select("row", m=engine_judged._vote([table[f"v{i}"] for i in range(n)],
                                                      needed))
           .order_by("row").to_pyarrow().column("m").to_pylist())

    def plain(votes):
        counted = collections.Counter(v for v in votes if v is not None)
        if not counted:
            return None
        top = max(counted.values())
        best = [v for v, c in counted.items() if c == top]
        return best[0] if top >= needed and len(best) == 1 else None

    assert got == [plain(r) for r in rows]


_KEY = st.one_of(st.none(), st.just(float("nan")), st.sampled_from(
    ["b", "a", "É", "é", "z", "ab", " a", "10", "9", "a\x00", ""]))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_KEY, _KEY), max_size=25), st.sampled_from([object, "str"]))
def test_cell_codes_are_the_sorted_text_order_missing_last(pairs, dtype) -> None:
    """The cells' codes (``_text_codes``, ``_codes_of``, ``_sample_codes``: vectorised) are
    what a plain reading of their rule gives: the distinct texts sorted as Python sorts them,
    a missing value last (None or NaN); a key tuple's code its group's in the lookup."""
    from kbench_core.engines import judged_cells as cells

    def text(v):
        return cells._NULL_KEY if v is None or v != v else str(v)

    frame = pd.DataFrame({"m": pd.Series([p[0] for p in pairs], dtype=dtype),
                          "p": pd.Series([p[1] for p in pairs], dtype=dtype)})
    values = [p[0] for p in pairs]
    distinct = sorted({str(v) for v in values if v is not None and v == v})
    codes, names = cells._text_codes(frame["m"])
    assert list(names) == [*distinct, None]
    assert codes.tolist() == [distinct.index(str(v)) if v is not None and v == v
                              else len(distinct) for v in values]
    for by in (("m",), ("m", "p")):
        rows = [tuple(text(frame[c].iloc[i]) for c in by) for i in range(len(frame))]
        lookup = {key: 3 * g + 1 for g, key in enumerate(sorted(set(rows)))}
        assert cells._codes_of(frame, by, lookup).tolist() == [lookup[r] for r in rows]
    present = frame["m"].dropna()
    assert cells._sample_codes(present, distinct).tolist() == [
        distinct.index(str(v)) for v in present]
    with pytest.raises(KeyError):
        cells._sample_codes(pd.Series(["not a sample"]), distinct)


# ---------------------------------------------------------------- in parts of the samples


@pytest.mark.parametrize(("choice", "options"), [CELL_CASES[1], CELL_CASES[3], CELL_CASES[2]],
                         ids=["majority-not-found-bootstrap", "j2-quantile-bootstrap",
                              "three-of-three-weighted"])
def test_duckdb_cells_in_parts_give_the_memory_tiers(choice, options, run_file, monkeypatch):
    """A large run's answers and sums are made in parts of its samples on DuckDB
    (``KBENCH_DUCKDB_PART_ROWS``): three parts here give the memory engine's tiers, the
    bootstrap and equal-mass bins included; the parts' table is dropped when forgotten."""
    run, path = run_file
    backend = engines.connect("duckdb")
    table = _table(backend, path)
    kwargs = {k: v for k, v in choice.items() if k != "judge"}
    monkeypatch.setattr(engines.settings, "DUCKDB_PART_ROWS", len(run.frame) // 3 + 1)
    cells = engine_judged.EngineCells(
        engine_judged.answers(table, judge=choice["judge"], **kwargs), rows=len(run.frame))
    assert cells._parts == 3
    _same_cells(cells, _memory_answers(run.frame, choice), options)
    assert [t for t in backend.list_tables() if t.startswith("kbench_parts_")]
    cells.forget()
    assert not [t for t in backend.list_tables() if t.startswith("kbench_parts_")]


def test_a_small_run_or_spark_is_one_part(run_file, monkeypatch) -> None:
    from kbench_core.engines.judged_cells import parts_of

    _, path = run_file
    table = _table(engines.connect("duckdb"), path)
    monkeypatch.setattr(engines.settings, "DUCKDB_PART_ROWS", 100)
    assert [parts_of(table, n) for n in (0, 100, 101, 250, 1000)] == [1, 1, 2, 3, 10]
    assert parts_of(ibis_memtable(), 10_000) == 1  # no DuckDB to bound (Spark spills its own)


def ibis_memtable():
    import ibis

    return ibis.memtable({"sample": ["a"]})


_SAMPLE = st.one_of(st.none(), st.text(max_size=6))


@settings(max_examples=30, deadline=None)
@given(st.lists(_SAMPLE, max_size=30), st.integers(1, 5))
def test_the_parts_of_the_samples_split_every_row_once_by_its_sample(samples, n) -> None:
    """``sample_part``: each row is in exactly one of the ``n`` parts, and every row of one
    sample (a missing one too) in the same part."""
    import ibis
    import pyarrow as pa

    rows = pa.table({"sample": pa.array(samples, pa.string()),
                     "row": np.arange(len(samples))})
    table = ibis.duckdb.connect().create_table("rows", rows)
    seen: dict[int, int] = {}
    for i in range(n):
        got = engine_judged.sample_part(table, i, n).to_pyarrow()
        for row in got.column("row").to_pylist():
            assert row not in seen
            seen[row] = i
    assert sorted(seen) == list(range(len(samples)))
    part_of: dict = {}
    for row, i in seen.items():
        assert part_of.setdefault(samples[row], i) == i


# ------------------------------------------------------------- counts as 32-bit integers


def test_the_engine_s_counts_are_32_bit_and_a_big_cell_does_not_wrap(tmp_path) -> None:
    """An engine's cells hold their counts as 32-bit integers (half the memory of a big
    run's cells) and give the memory engine's tiers, intervals included, where a count's
    square passes 2^31: det-a's 50,000 answers are all of one sample, so its design effects
    are the full correlation Σ n_c² / n; det-b's 70,000 samples make the rates' design
    effects be taken one rate at a time (a matrix of cells × rates is kept small), so a
    rate's counts meet alone. Multiplied as stored, they wrapped (det-a's accuracy interval
    0.21–0.79 where memory's is 0.06–0.95)."""
    rng = np.random.default_rng(5)
    n_big, n_small = 50_000, 70_000
    n = n_big + n_small
    vulnerable, said = rng.random(n) < 0.5, rng.random(n) < 0.7
    found = vulnerable & said & (rng.random(n) < 0.6)
    frame = pd.DataFrame({
        "sample": np.r_[np.repeat("big", n_big), [f"s{i}" for i in range(n_small)]],
        "model": np.r_[np.repeat("det-a", n_big), np.repeat("det-b", n_small)],
        "judge": "j1", "prompt_type": [f"p{i}" for i in range(n)],
        "is_vulnerable": vulnerable, "said_vulnerable": said,
        "confidence": np.round(rng.random(n), 2), "target_found": found,
        "type_match": np.where(found, "exact", "not_mentioned"),
        "rcir": np.where(found, 0.5, np.nan), "n_target_match": found.astype(int),
        "n_hallucinated": rng.integers(0, 3, n)})
    path = tmp_path / "big-cell.parquet"
    frame.to_parquet(path)
    run = io.load_run(path)
    table = _table(engines.connect("duckdb"), path)
    cells = engine_judged.EngineCells(engine_judged.answers(table, judge="j1"))
    summed = cells.cells(("model",))
    assert summed.sums["n"].dtype == np.int32 and summed.sums["n"].max() == n_big
    assert summed.sums["rcir_sum"].dtype == np.float64
    _same_cells(cells, judge_rows(run.frame, "j1", failed_as="missing"), {},
                by_list=[("model",)])

