"""The engines (SPEC 6, issue 25): memory = duckdb = spark for every family's main table on
every sample run and every real file that is a run of rows (1e-9, intervals included), the
engine's validation with the loader's messages, and the sources (file, folder, workspace)."""

from __future__ import annotations

import io as io_
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kbench_core import engines, io
from kbench_core.engines import reduce, source
from kbench_core.families import main_table
from kbench_core.problems import RunFormatError

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted((ROOT / "sample_data").glob("*.csv"))
REAL = sorted(p for d in (ROOT / "sample_data" / "real", ROOT.parent / "shared" / "data" / "real")
              if d.is_dir() for p in d.glob("*/*") if p.suffix in (".csv", ".json"))
# Options that change every family's intervals (the bootstraps), besides the defaults.
OPTIONS = {"judged": {"bootstrap": True}, "replication": {"ci": "bootstrap"},
           "bias": {"bootstrap": True}}


def _runs() -> list[Path]:
    out, seen = [], set()
    for path in [*SAMPLES, *REAL]:
        if (path.parent.name, path.name) in seen:  # sample_data/real mirrors ../shared
            continue
        seen.add((path.parent.name, path.name))
        try:
            io.load_run(path)
        except (RunFormatError, ValueError):
            continue  # not a run of rows (a licence, a README)
        out.append(path)
    return out


RUNS = _runs()


@pytest.fixture(scope="module")
def parquet(tmp_path_factory) -> dict[Path, Path]:
    """Every run written to Parquet (the frame the loader made of it), once per module."""
    folder = tmp_path_factory.mktemp("runs")
    out = {}
    for i, path in enumerate(RUNS):
        run = io.load_run(path)
        target = folder / f"{i:02d}-{path.stem}.parquet"
        run.frame.to_parquet(target)
        out[path] = target
    return out


def _tables(run: io.Run, options: dict | None = None) -> list[pd.DataFrame]:
    item = main_table(run.kind)
    return [t.reset_index(drop=True) for _, t in item.objects(run.frame, options or {},
                                                               meta=run.meta)]


def _same(a: io.Run, b: io.Run, options: dict | None = None) -> None:
    left, right = _tables(a, options), _tables(b, options)
    assert len(left) == len(right)
    for x, y in zip(left, right, strict=True):
        assert list(x.columns) == list(y.columns)
        pd.testing.assert_frame_equal(x, y, rtol=1e-9, atol=1e-9, check_dtype=False,
                                      check_categorical=False)


def test_every_run_is_covered():
    kinds = {io.load_run(p).kind for p in RUNS}
    assert {"bias", "judged", "replication", "replication_summary", "bias_summary"} <= kinds
    assert any("real" in p.parts for p in RUNS)


@pytest.mark.parametrize("path", RUNS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_duckdb_prints_the_memory_main_table(path, parquet):
    (memory,) = engines.load(parquet[path], engine="memory")
    (duck,) = engines.load(parquet[path], engine="duckdb")
    assert duck.kind == memory.kind
    assert duck.content_hash == memory.content_hash  # exports record the same provenance
    _same(memory, duck)
    if memory.kind in OPTIONS and len(memory.frame) < 10_000:
        _same(memory, duck, OPTIONS[memory.kind])


def test_bias_reduction_drops_text_and_collapses_trials(parquet):
    path = next(p for p in RUNS if p.name == "bias.csv")
    (duck,) = engines.load(parquet[path], engine="duckdb")
    assert duck.meta["reduced_rows"] < len(duck.frame) / 3
    assert not {"prompt", "response", "id", "trial"} & set(duck.frame.columns)


def test_reduction_counts_as_pandas_does(tmp_path):
    """The reduction's counts against pandas' own value counts of the read columns."""
    import ibis

    frame = pd.DataFrame({
        "model": ["a", "a", "b", "a", "b", "a"], "bias": ["x"] * 6,
        "condition": ["control", "control", "treatment", "control", "treatment", "control"],
        "intensity": [None, None, "weak", None, "weak", None], "domain": ["d"] * 6,
        "score": [0.0, 1.0, 1.0, 0.0, 1.0, np.nan], "prompt": list("pqrstu")})
    path = tmp_path / "tiny.parquet"
    frame.to_parquet(path)
    (src,) = source.sources(path)
    table = source.open_table(ibis.duckdb.connect(), src)
    got = reduce.reduction(table, "bias").to_pandas()
    cols = ["model", "bias", "condition", "intensity", "domain", "score"]
    assert list(got.columns) == [*cols, reduce.COUNT]
    want = frame[cols].value_counts(dropna=False).rename(reduce.COUNT).reset_index()
    merged = got.astype({"score": float}).merge(want, on=cols, how="outer", suffixes=("", "_pd"))
    assert len(merged) == len(want) == 4  # (a, control, 0) twice; NaN its own tuple
    np.testing.assert_array_equal(merged[reduce.COUNT], merged[f"{reduce.COUNT}_pd"])
    # first appearance order: a's control 0, a's control 1, b's treatment, a's NaN
    assert got["score"].tolist()[:3] == [0.0, 1.0, 1.0]


# ------------------------------------------------------------------------------ validation


def _message(path: Path, engine: str, **kw) -> str:
    try:
        engines.load(path, engine=engine, **kw)
    except RunFormatError as err:
        return str(err)
    return "valid"


def _bad_runs() -> dict[str, pd.DataFrame]:
    bias = io.load_run(ROOT / "sample_data" / "bias.csv").frame
    judged = pd.read_csv(ROOT / "sample_data" / "judged.csv")
    out = {}
    x = bias.copy()
    x["score"] = x["score"].astype(object)
    x.loc[5, "score"] = 7.0
    x.loc[7, "score"] = "high"
    x["score"] = x["score"].astype(str).replace("nan", None)
    out["bias-score"] = x
    x = bias.copy()
    x["condition"] = x["condition"].astype(str)
    x.loc[3, "condition"] = "placebo"
    x["model"] = x["model"].astype(str)
    x.loc[9, "model"] = None
    out["bias-labels"] = x
    x = bias.copy()
    x["intensity"] = x["intensity"].astype(object)
    x.loc[x["condition"] == "treatment", "intensity"] = None  # the family's row rule
    out["bias-rule"] = x
    out["bias-column"] = bias.drop(columns=["domain"])
    x = bias.copy()  # columns the reduction leaves out: checked over the rows
    x.loc[12, "trial"] = -1
    x["prompt"] = x["prompt"].astype(object)
    x.loc[20, "prompt"] = "p" * 1_000_001
    out["bias-unread"] = x
    x = judged.copy()
    x["is_vulnerable"] = x["is_vulnerable"].astype(str)
    x.loc[2, "is_vulnerable"] = "maybe"
    x.loc[4, "confidence"] = 1.5
    x.loc[6, "claimed_lines"] = "12;abc"
    x["n_target_match"] = x["n_target_match"].astype(float)
    x.loc[8, "n_target_match"] = 1.5
    out["judged-cells"] = x
    return out


@pytest.mark.parametrize("name", list(_bad_runs()))
def test_duckdb_rejects_a_bad_cell_with_the_loaders_message(name, tmp_path):
    path = tmp_path / f"{name}.parquet"
    _bad_runs()[name].to_parquet(path)
    memory = _message(path, "memory")
    assert memory != "valid" and f"{name}.parquet" in memory
    assert _message(path, "duckdb") == memory


def test_a_bad_cell_in_a_folder_names_its_file(tmp_path):
    bias = pd.read_csv(ROOT / "sample_data" / "bias.csv")
    folder = tmp_path / "archive"
    folder.mkdir()
    bias.iloc[:3000].to_parquet(folder / "a.parquet")
    bad = bias.iloc[3000:].reset_index(drop=True)
    bad.loc[4, "score"] = 3.0
    bad.to_parquet(folder / "b.parquet")
    message = _message(folder, "duckdb")
    assert "row b.parquet:5, field 'score': 3 is out of range" in message


# ------------------------------------------------------------------------------ sources


def test_a_folder_of_parquet_files_is_one_run(tmp_path):
    run = io.load_run(ROOT / "sample_data" / "judged.csv")
    folder = tmp_path / "judged-archive"
    folder.mkdir()
    half = len(run.frame) // 2
    run.frame.iloc[:half].to_parquet(folder / "part-0.parquet")
    run.frame.iloc[half:].to_parquet(folder / "part-1.parquet")
    assert engines.default_engine(folder) == "duckdb"
    (duck,) = engines.load(folder)
    assert duck.name == "judged-archive" and len(duck.frame) == len(run.frame)
    _same(run, duck)


def test_a_workspace_is_queried_in_place(tmp_path):
    from kbench_core.workspace import Workspace

    space = Workspace(str(tmp_path))
    for name in ("bias.csv", "replication.csv"):
        space.save(io.load_run(ROOT / "sample_data" / name))
    runs = {r.name: r for r in engines.load(tmp_path, engine="duckdb")}
    assert set(runs) == {"bias", "replication"}
    for name in ("bias", "replication"):
        _same(io.load_run(ROOT / "sample_data" / f"{name}.csv"), runs[name])


def test_engine_choices_are_checked(tmp_path):
    with pytest.raises(ValueError, match="'postgres'"):
        engines.load(ROOT / "sample_data" / "bias.csv", engine="postgres")  # type: ignore[arg-type]
    assert engines.default_engine(ROOT / "sample_data" / "bias.csv") == "memory"
    assert engines.default_engine(tmp_path / "x.parquet") == "memory"  # missing: the loader
    pd.DataFrame({"a": [1]}).to_parquet(tmp_path / "x.parquet")
    assert engines.default_engine(tmp_path / "x.parquet") == "duckdb"


# ------------------------------------------------------------------------------ spark


@pytest.mark.parametrize("path", RUNS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_spark_prints_the_memory_main_table(path, parquet, spark):
    (memory,) = engines.load(parquet[path], engine="memory")
    (sparked,) = engines.load(parquet[path], engine="spark", backend=spark)
    _same(memory, sparked)


def test_spark_rejects_a_bad_cell_with_the_loaders_message(tmp_path, spark):
    path = tmp_path / "judged-cells.parquet"
    _bad_runs()["judged-cells"].to_parquet(path)
    assert _message(path, "spark", backend=spark) == _message(path, "memory")


def test_validation_pages_past_rows_the_loader_accepts(tmp_path, monkeypatch):
    """Numbers written as text are suspect to the engine and accepted by the loader: the
    engine pages on until the loader finds the bad cell behind them."""
    from kbench_core.engines import validate

    monkeypatch.setattr(validate, "FETCHED", 5)
    bias = pd.read_csv(ROOT / "sample_data" / "bias.csv")
    bias["score"] = bias["score"].map(lambda v: None if pd.isna(v) else f"{v:.1f}")
    bias.loc[40, "score"] = "lots"
    path = tmp_path / "text-scores.parquet"
    bias.to_parquet(path)
    memory = _message(path, "memory")
    assert "row 41, field 'score'" in memory
    assert _message(path, "duckdb") == memory


def test_a_column_beyond_the_schema_that_a_metric_reads_is_kept(tmp_path):
    """A judged run's ``difficulty`` (set by BlockBench's reader, not a schema column) gives
    the tiers their per-difficulty means: the reduction must keep it."""
    run = io.load_run(ROOT / "sample_data" / "judged.csv")
    codes = run.frame["sample"].astype(str).str[-1].map(lambda c: f"t{int(c, 16) % 3 + 1}"
                                                        if c.isalnum() else "t1")
    frame = run.frame.assign(difficulty=codes.astype("category"))
    path = tmp_path / "judged-difficulty.parquet"
    frame.to_parquet(path)
    (memory,) = engines.load(path, engine="memory")
    (duck,) = engines.load(path, engine="duckdb")
    assert "difficulty" in duck.frame
    tables = _tables(memory)
    assert any("tdr_difficulty_mean" in t for t in tables)
    _same(memory, duck)


class _Builder:
    """A stand-in for ``SparkSession.builder`` that records what kbench asks of it."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple]] = []

    def __getattr__(self, name):
        def record(*args):
            self.calls.append((name, args))
            return self if name != "getOrCreate" else "session"
        return record


@pytest.mark.parametrize(("remote", "master", "want"), [
    ("sc://connect.lab:15002", None, ("remote", ("sc://connect.lab:15002",))),
    ("sc://connect.lab:15002", "spark://head:7077", ("master", ("spark://head:7077",))),
    (None, None, ("master", ("local[*]",))),
])
def test_spark_session_honours_spark_remote_and_the_master(remote, master, want, monkeypatch):
    pyspark_sql = pytest.importorskip("pyspark.sql")
    builder = _Builder()
    monkeypatch.setattr(pyspark_sql, "SparkSession", type("S", (), {"builder": builder}))
    from kbench_core.engines import spark  # no Java and no network: the builder is a stand-in

    monkeypatch.setattr(spark, "_java", lambda options: None)
    monkeypatch.setattr(spark, "_reach", lambda where, targets, seconds: None)
    spark.forget_failures()
    if remote:
        monkeypatch.setenv("SPARK_REMOTE", remote)
    else:
        monkeypatch.delenv("SPARK_REMOTE", raising=False)
    assert engines.spark_session(spark_master=master) == "session"
    assert want in builder.calls
    assert ("remote" in dict(builder.calls)) == (want[0] == "remote")


# ------------------------------------------------------------------------------ the commands


def _printed(argv: list[str], capsys) -> str:
    from kbench_core.cli import main

    capsys.readouterr()
    assert main(argv) == 0
    # the provenance header's time of export is the one line that may differ
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "<time>", capsys.readouterr().out)


@pytest.mark.parametrize("name", ["bias.csv", "judged.csv", "replication.csv",
                                  "replication_summary.csv"])
def test_metrics_prints_the_same_table_on_every_engine(name, parquet, spark, capsys):
    """What a user sees (4 significant digits, |x| < 1e-12 as 0) is identical; every digit
    agrees to 1e-9 (the sums run in another order: rows come back grouped by tuple)."""
    path = str(parquet[ROOT / "sample_data" / name])
    memory = _printed(["metrics", path, "--engine", "memory"], capsys)
    assert memory.count("\n") > 3
    duck = _printed(["metrics", path, "--engine", "duckdb"], capsys)
    default = _printed(["metrics", path], capsys)  # duckdb for a Parquet file
    assert duck == memory == default
    sparked = _printed(["metrics", path, "--engine", "spark", "--spark-master", "local[1]"],
                       capsys)
    assert sparked == memory
    full = [pd.read_csv(io_.StringIO(_printed(["metrics", path, "--engine", engine,
                                               "--precision", "full"], capsys)), comment="#")
            for engine in ("memory", "duckdb")]
    pd.testing.assert_frame_equal(full[0], full[1], rtol=1e-9, atol=1e-9)


def test_compare_keeps_the_items_it_pairs(parquet, capsys):
    path = str(parquet[ROOT / "sample_data" / "bias.csv"])
    memory = _printed(["compare", path, "--engine", "memory", "--format", "csv"], capsys)
    assert memory.count("\n") > 3
    assert _printed(["compare", path, "--engine", "duckdb", "--format", "csv"], capsys) == memory


def test_metrics_reports_a_bad_cell_as_the_loader_does(tmp_path, capsys):
    from kbench_core.cli import main

    path = tmp_path / "judged-cells.parquet"
    _bad_runs()["judged-cells"].to_parquet(path)
    messages = []
    for engine in ("memory", "duckdb"):
        with pytest.raises(SystemExit) as err:
            main(["metrics", str(path), "--engine", engine])
        messages.append(str(err.value))
    assert messages[0] == messages[1] and "row 3, field 'is_vulnerable'" in messages[0]


# ------------------------------------------------------------------------------ weighted bias


@pytest.fixture(scope="module")
def bias_runs(tmp_path_factory) -> list[Path]:
    """The bias sample and a bigger run of 69 biases with unknown scores, as Parquet."""
    from kbench_core.samples import big_bias_trials

    folder = tmp_path_factory.mktemp("bias")
    sample = folder / "bias.parquet"
    io.load_run(ROOT / "sample_data" / "bias.csv").frame.to_parquet(sample)
    big = folder / "big.parquet"
    big_bias_trials(40_000, seed=3).to_parquet(big)
    return [sample, big]


@pytest.mark.parametrize("options", [{}, {"bootstrap": True}, {"capped": False, "std": "sample",
                                                             "relative": True}])
def test_a_weighted_bias_run_gives_the_memory_fingerprint(bias_runs, options):
    """The fingerprint from the small table with its counts as weights (never the rows)
    equals the memory engine's, intervals and the BMS bootstrap included."""
    from kbench_core.kahne._common import WEIGHT

    assert WEIGHT == reduce.COUNT
    for path in bias_runs:
        (memory,) = engines.load(path, engine="memory")
        (small,) = engines.load(path, engine="duckdb", weighted=True)
        assert len(small.frame) == small.meta["reduced_rows"] < len(memory.frame)
        assert small.meta["rows"] == len(memory.frame)
        _same(memory, small, options)


def test_weights_count_as_repeated_rows_in_every_bias_metric(bias_runs):
    """Each kahne metric on a frame of distinct rows with weights against the same metric on
    the rows repeated (pandas' own repeat), intervals included."""
    from kbench_core import kahne

    frame = io.load_run(bias_runs[1]).frame
    cols = ["model", "bias", "condition", "intensity", "method", "method_kind", "domain",
            "score", "confidence"]
    small = (frame[cols].groupby(cols, observed=True, dropna=False, sort=False).size()
             .rename(reduce.COUNT).reset_index())
    repeated = small.loc[small.index.repeat(small[reduce.COUNT])].drop(columns=reduce.COUNT)
    for metric in (kahne.bms, kahne.bci, kahne.bmp, kahne.rci, kahne.cas, kahne.has,
                   kahne.domain_means):
        pd.testing.assert_frame_equal(metric(small), metric(repeated), rtol=1e-9, atol=1e-12)


def test_figures_writes_the_same_tables_on_every_engine(parquet, tmp_path, capsys):
    """``kbench figures`` through DuckDB (its tables: no browser needed) writes the files the
    memory engine writes, byte for byte but the time of export."""
    from kbench_core.cli import main

    for name, items in (("bias.csv", "fingerprint,susceptibility"), ("judged.csv", "tiers")):
        path = str(parquet[ROOT / "sample_data" / name])
        written = {}
        for engine in ("memory", "duckdb"):
            out = tmp_path / f"{engine}-{name}"
            assert main(["figures", path, "--out", str(out), "--items", items,
                         "--engine", engine]) == 0
            written[engine] = {p.name: re.sub(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", b"",
                                              p.read_bytes()) for p in out.iterdir()}
        assert written["memory"] and written["duckdb"] == written["memory"]
    capsys.readouterr()
