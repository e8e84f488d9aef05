"""``kbench compare`` and ``kbench profile`` on the engine path (issue 39, item 1): the same
output as the memory engine (1e-9; what a user sees identical) on DuckDB and Spark, computed
from the run's sufficient table or the items × models table the engine makes, never from a
frame of every row; an engine out of memory named with the setting to change."""

from __future__ import annotations

import io as io_
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kbench_core import compare, engines
from kbench_core.engines import items, source
from kbench_core.samples import big_bias_trials

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def bias_file(tmp_path_factory) -> Path:
    """A bias run of 69 biases × 10 models with awkward cells the loader reads as one label
    or number: padded labels, scores and trials written as text, missing trials and
    scores, a model name that is a number."""
    frame = big_bias_trials(40_000, seed=3).astype(object)
    rng = np.random.default_rng(0)
    pad = rng.random(len(frame)) < 0.1
    frame.loc[pad, "bias"] = " " + frame.loc[pad, "bias"].astype(str) + "\t"
    frame.loc[pad, "model"] = frame.loc[pad, "model"].astype(str) + " "
    frame["score"] = [None if v != v or rng.random() < 0.03 else f" {v} "
                      if rng.random() < 0.2 else str(v) for v in frame["score"]]
    frame["trial"] = [None if i % 97 == 0 else f"{t}" for i, t in enumerate(frame["trial"])]
    frame.loc[frame["model"].astype(str).str.strip() == "synthetic-model-09", "model"] = "7"
    path = tmp_path_factory.mktemp("cmp") / "bias-awkward.parquet"
    frame.to_parquet(path)
    return path


def _printed(argv: list[str], capsys) -> str:
    from kbench_core.cli import main

    capsys.readouterr()
    assert main(argv) == 0
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "<time>", capsys.readouterr().out)


COMPARES = [[], ["--metric", "score"], ["--metric", "confidence"],
            ["--models", "synthetic-model-00", "7"],
            ["--models", "synthetic-model-00", "7", "--metric", "score"],
            ["--metric", "score", "--correction", "fdr_bh"]]


@pytest.mark.parametrize("args", COMPARES, ids=lambda a: " ".join(a) or "default")
def test_compare_prints_the_memory_table_on_duckdb(args, bias_file, capsys):
    path = str(bias_file)
    memory = _printed(["compare", path, *args, "--engine", "memory", "--format", "csv"],
                      capsys)
    assert memory.count("\n") > 5
    duck = _printed(["compare", path, *args, "--engine", "duckdb", "--format", "csv"], capsys)
    assert duck == memory
    full = [_printed(["compare", path, *args, "--engine", e, "--format", "markdown"], capsys)
            for e in ("memory", "duckdb")]
    assert full[0] == full[1]


def test_compare_reads_no_frame_of_every_row(bias_file, monkeypatch, capsys):
    """The engine path never repeats the tuples into trials nor fetches the rows."""
    from kbench_core.engines import reduce

    def refused(*args, **kwargs):
        raise AssertionError("a frame of every row was made")

    monkeypatch.setattr(reduce, "repeated", refused)
    monkeypatch.setattr(reduce, "typed_rows", refused)
    for args in ([], ["--metric", "score"]):
        _printed(["compare", str(bias_file), *args, "--engine", "duckdb"], capsys)


def test_the_engines_items_table_is_the_memory_one(bias_file):
    """:func:`items.item_means` against :func:`compare.item_values` of the loaded run's
    per-item frame: the same items (their labels), models and means."""
    import ibis

    (run,) = engines.load(bias_file, engine="memory")
    frame = compare.per_item_values(run.frame, "bias")
    want = compare.item_values(frame, "score", cluster="bias").dropna(how="all")
    (src,) = source.sources(bias_file)
    got = items.item_means(source.open_table(ibis.duckdb.connect(), src), src, "score",
                           cluster="bias")
    table = compare.item_values(got, "score", cluster="bias").dropna(how="all")
    assert list(table.columns) == list(want.columns)
    assert table.index.equals(want.index)
    np.testing.assert_allclose(table.to_numpy(), want.to_numpy(), rtol=1e-12, equal_nan=True)
    assert got.n_items < run.meta["rows"] / 4  # items, not rows


def test_every_comparison_takes_the_items_table(bias_file):
    """compare_pair, compare_models, paired_difference, group_differences and
    rank_intervals on the engine's table equal their value on the frame (1e-9)."""
    import ibis

    (run,) = engines.load(bias_file, engine="memory")
    frame = compare.per_item_values(run.frame, "bias")
    (src,) = source.sources(bias_file)
    table = items.item_means(source.open_table(ibis.duckdb.connect(), src), src, "score",
                             cluster="bias")
    for x, y in zip(_results(table), _results(frame), strict=True):
        pd.testing.assert_frame_equal(x, y, rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="holds 'score'"):
        compare.compare_models(table, "confidence", cluster="bias")


def _results(of) -> list[pd.DataFrame]:
    pair = compare.compare_pair(of, "score", "synthetic-model-00", "7", group="bias",
                                cluster="bias")
    estimate = compare.paired_difference(of, "score", "synthetic-model-01",
                                         "synthetic-model-02")
    return [compare.compare_models(of, "score", cluster="bias"),
            compare.rank_intervals(of, "score", cluster="bias"),
            pair.groups, pd.DataFrame([vars(pair.estimate)]),
            pd.DataFrame([vars(estimate)]),
            pd.DataFrame({"sd": [pair.sd_diff], "deff": [pair.design_effect]})]


@pytest.mark.parametrize("name", ["bias.csv", "judged.csv", "replication.csv"])
def test_profile_prints_the_memory_table_on_every_engine(name, tmp_path, spark, capsys):
    from kbench_core import io

    path = tmp_path / f"{Path(name).stem}.parquet"
    io.load_run(ROOT / "sample_data" / name).frame.to_parquet(path)
    outputs = {engine: _printed(["profile", str(path), "--engine", engine, "--precision",
                                 "full"], capsys) for engine in ("memory", "duckdb")}
    outputs["spark"] = _printed(["profile", str(path), "--engine", "spark", "--spark-master",
                                 "local[1]", "--precision", "full"], capsys)
    tables = [pd.read_csv(io_.StringIO(o), comment="#") for o in outputs.values()]
    assert len(tables[0]) > 2
    for other in tables[1:]:
        pd.testing.assert_frame_equal(tables[0], other, rtol=1e-9, atol=1e-9)
    shown = {e: _printed(["profile", str(path), "--engine", e], capsys)
             for e in ("memory", "duckdb")}
    assert shown["memory"] == shown["duckdb"]


def test_profile_of_a_bias_run_is_its_weighted_table(bias_file, monkeypatch, capsys):
    from kbench_core.engines import reduce

    def refused(*args, **kwargs):
        raise AssertionError("a frame of every row was made")

    memory = _printed(["profile", str(bias_file), "--engine", "memory"], capsys)
    monkeypatch.setattr(reduce, "repeated", refused)
    assert _printed(["profile", str(bias_file)], capsys) == memory  # duckdb: the default


def test_compare_on_spark_prints_the_memory_table(bias_file, spark, capsys):
    path = str(bias_file)
    for args in ([], ["--metric", "score"]):
        memory = _printed(["compare", path, *args, "--engine", "memory", "--format", "csv"],
                          capsys)
        sparked = _printed(["compare", path, *args, "--engine", "spark", "--spark-master",
                            "local[1]", "--format", "csv"], capsys)
        assert sparked == memory


# ------------------------------------------------------------------------- out of memory


def test_duckdb_out_of_memory_names_the_setting(bias_file, monkeypatch):
    from kbench_core.cli import main

    monkeypatch.setattr(engines, "DUCKDB_MEMORY", "1MB")
    with pytest.raises(SystemExit) as err:
        main(["metrics", str(bias_file), "--engine", "duckdb"])
    message = str(err.value)
    assert "DuckDB ran out of memory" in message and "KBENCH_DUCKDB_MEMORY" in message
    assert "unexpected" not in message and "bias-awkward.parquet" in message


@pytest.mark.parametrize("text", ["java.lang.OutOfMemoryError: Java heap space",
                                  "An error occurred while calling o52.collectToPython.\n: "
                                  "java.lang.OutOfMemoryError: GC overhead limit exceeded"])
def test_a_java_heap_failure_names_the_setting(text):
    named = engines.out_of_memory(RuntimeError(text), "spark", "run.parquet")
    assert isinstance(named, engines.EngineMemoryError)
    assert "KBENCH_SPARK_MEMORY" in str(named) and "spark.executor.memory" in str(named)
    assert engines.out_of_memory(RuntimeError("no such column"), "spark", "x") is None


def test_spark_memory_setting_reaches_the_session(monkeypatch):
    from kbench_core.engines import settings, spark

    assert ("spark.driver.memory", "3g") not in spark._options("local[*]")
    monkeypatch.setattr(settings, "SPARK_MEMORY", "3g")
    assert ("spark.driver.memory", "3g") in spark._options("local[*]")
