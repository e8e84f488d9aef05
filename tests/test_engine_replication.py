"""A replication run's ECS from its sufficient table (issue 39): each finding's moments of its
valid (human d, agent d) pairs, made by ``replication.finding_sums`` from a loaded run and by
``engines.replication.finding_sums`` in DuckDB and Spark, and finished by
``replication.ecs_from_sums``. Checked against ECS computed test by test (``weighted_ccc``,
the two-pass moments of the tests), by hand, and memory against the engines at 1e-9 on a run
with every awkward case: native effects of every test type, given d overriding them, pairs
without a d, a finding without a valid pair, padded labels, a missing domain, two files."""

from __future__ import annotations

import io as io_
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kbench_core import engines, io, replication
from kbench_core.engines import replication as engine_replication
from kbench_core.engines import source, validate
from kbench_core.schema import TEST_TYPES
from tests.engine_queries import assert_asked_once, recorded
from tests.same_objects import assert_same


def awkward_tests(seed: int = 3) -> pd.DataFrame:
    """Three models over 7 studies of 1–3 findings of 1–3 tests: native effects of every test
    type (a correlation z beyond the ±(1 − 10⁻⁶) bound, a proportion outside [0, 1]), given d
    on some tests (they override the native effect), agent effects missing, one finding with
    no valid pair, a study of the third model with none, a padded model label and a missing
    domain."""
    rng = np.random.default_rng(seed)
    rows = []
    for model in ("m1", " m2", "m3"):
        for s in range(7):
            for f in range(1 + s % 3):
                for t in range(1 + (s + f) % 3):
                    kind = TEST_TYPES[(s + f + t) % len(TEST_TYPES)]
                    human = float(rng.uniform(0.05, 0.95) if kind == "binomial"
                                  else rng.normal(0.4, 0.5))
                    agent = human + float(rng.normal(0.1, 0.3))
                    row = {"model": model, "study": f"s{s}", "finding": f"s{s}/f{f}",
                           "test": f"t{t}", "domain": None if s == 4 else f"dom{s % 2}",
                           "test_type": kind, "human_effect": human, "agent_effect": agent,
                           "human_d": np.nan, "agent_d": np.nan}
                    if rng.random() < 0.2:
                        row["human_d"], row["agent_d"] = human * 1.5, agent * 1.5
                    if rng.random() < 0.12:
                        row["agent_effect"] = np.nan
                    if s == 2 and f == 1:
                        row["agent_effect"] = row["agent_d"] = np.nan  # no valid pair
                    if model == "m3" and s == 5:
                        row["human_effect"] = row["human_d"] = np.nan  # nor in this study
                    rows.append(row)
    frame = pd.DataFrame(rows)
    # PAS: posteriors given, or from Bayes factors (with and without the human flag), n_eff
    n = len(frame)
    frame["human_pi"] = np.where(rng.random(n) < 0.5, np.round(rng.random(n), 3), np.nan)
    frame["agent_pi"] = np.where(rng.random(n) < 0.5, np.round(rng.random(n), 3), np.nan)
    frame["human_bf10"] = np.where(rng.random(n) < 0.8, np.exp(rng.normal(0, 2, n)), np.nan)
    frame["agent_bf10"] = np.where(rng.random(n) < 0.8, np.exp(rng.normal(0, 2, n)), np.nan)
    frame["human_significant"] = pd.array(
        np.where(rng.random(n) < 0.1, None, rng.random(n) < 0.6), dtype="boolean")
    frame["n_eff"] = np.where(rng.random(n) < 0.9, rng.integers(10, 200, n), np.nan)
    correlation = frame.index[frame["test_type"] == "correlation"][0]
    frame.loc[correlation, ["agent_effect", "agent_d"]] = [9.0, np.nan]  # |r| past the bound
    binomial = frame.index[frame["test_type"] == "binomial"][0]
    frame.loc[binomial, ["agent_effect", "agent_d"]] = [1.4, np.nan]  # not a proportion
    frame.loc[frame["model"] == "m3", ["human_pi", "human_bf10"]] = np.nan  # m3: no PAS
    return frame


@pytest.fixture(scope="module")
def run_file(tmp_path_factory) -> tuple[io.Run, Path]:
    path = tmp_path_factory.mktemp("replication") / "awkward.parquet"
    awkward_tests().to_parquet(path)
    return io.load_run(path), path


_HELD: list = []  # the sources whose pinned files the tables read (kept open)


def _engine_sums(backend, path: Path, **pas) -> pd.DataFrame:
    """The engine's ECS sufficient table of the file (or, with ``pas`` options, PAS's)."""
    (src,) = source.sources(path)
    _HELD.append(src)
    table = source.open_table(backend, src)
    assert engine_replication.supported(table)
    validate.validate(table, src)
    files = tuple(f.name for f in src.files)
    expr = (engine_replication.finding_pas_sums(table, files, **pas) if pas
            else engine_replication.finding_sums(table, files))
    return engine_replication.fetch_sums(expr)


def _assert_same_sums(engine: pd.DataFrame, memory: pd.DataFrame) -> None:
    keys = [c for c in ("model", "study", "finding", "domain") if c in memory]
    assert (engine[keys].astype(object).fillna("<missing>").to_numpy()
            == memory[keys].astype(object).fillna("<missing>").to_numpy()).all()
    numbers = [c for c in memory.columns if c not in keys]
    pd.testing.assert_frame_equal(engine[numbers].reset_index(drop=True).astype(float),
                                  memory[numbers].reset_index(drop=True).astype(float),
                                  rtol=1e-9, atol=1e-12)


# ------------------------------------------------------------------ the table and its finish


def test_finding_sums_worked_by_hand() -> None:
    tests = pd.DataFrame({"model": "m", "study": "s", "finding": ["f1", "f1", "f2"],
                          "test": ["a", "b", "c"], "human_d": [0.2, 0.4, 1.0],
                          "agent_d": [0.1, 0.5, np.nan]})
    sums = replication.finding_sums(tests)
    f1, f2 = sums.iloc[0], sums.iloc[1]
    # f1: x = (0.2, 0.4), y = (0.1, 0.5): means 0.3 and 0.3; M2x = 0.1² + 0.1² = 0.02,
    # M2y = 0.2² + 0.2² = 0.08, C = (−0.1)(−0.2) + (0.1)(0.2) = 0.04.
    assert (f1["n"], f1["place"]) == (2, 0)
    assert [f1[c] for c in ("mean_x", "mean_y", "m2_x", "m2_y", "c_xy")] == pytest.approx(
        [0.3, 0.3, 0.02, 0.08, 0.04])
    # f2 has no valid pair: kept (its model and study stay in the tables), no moments
    assert (f2["n"], f2["place"]) == (0, 2) and np.isnan(f2["m2_x"])
    # ECS of the model: one finding, equal weights: 2·0.02 / (0.01 + 0.04 + 0) = 0.8
    assert replication.ecs_from_sums(sums, ci=None)["ecs"].iloc[0] == pytest.approx(0.8)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), weighting=st.sampled_from(["structure", "equal"]),
       normalize=st.booleans())
def test_ecs_from_finding_sums_is_the_weighted_ccc_of_the_tests(seed, weighting, normalize):
    """Per model and per study, ECS from the findings' moments equals Lin's CCC computed test
    by test (``weighted_ccc``: two-pass moments of the tests) with each test's weight."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 60))
    tests = pd.DataFrame({
        "model": rng.choice(["a", "b"], n), "study": rng.choice(["s1", "s2", "s3", "s4"], n),
        "human_d": np.round(rng.normal(0, 1, n), int(rng.integers(1, 4))),
        "agent_d": np.round(rng.normal(0, 1, n), int(rng.integers(1, 4)))})
    tests["finding"] = tests["study"] + "/" + rng.choice(["f1", "f2", "f3"], n)
    tests["test"] = [f"t{i}" for i in range(n)]
    tests.loc[rng.random(n) < 0.15, "agent_d"] = np.nan
    sums = replication.finding_sums(tests)
    for level, keys in (("overall", ["model"]), ("study", ["model", "study"])):
        table = replication.ecs_from_sums(sums, level=level, weighting=weighting,
                                          normalize_weights=normalize, ci=None)
        for _, row in table.iterrows():
            mine = tests[(tests[keys].astype(str) == row[keys].to_numpy()).all(axis=1)]
            model = tests[tests["model"] == row["model"]]
            valid = model[model[["human_d", "agent_d"]].notna().all(axis=1)]
            w = (replication.structure_weights(valid) if weighting == "structure"
                 else np.ones(len(valid)))
            weights = pd.Series(w, index=valid.index).reindex(mine.index).fillna(0.0)
            ok = weights.to_numpy() > 0
            x, y = mine["human_d"].to_numpy(), mine["agent_d"].to_numpy()
            expected = replication.weighted_ccc(x[ok], y[ok], weights.to_numpy()[ok],
                                                normalize_weights=normalize)
            if level == "study" and ok.sum() < replication.MIN_STUDY_PAIRS:
                expected = np.nan
            assert row["n"] == ok.sum()
            assert row["ecs"] == pytest.approx(expected, abs=1e-9, nan_ok=True)
            if ok.any():
                wo = weights.to_numpy()[ok]
                assert row["n_kish"] == pytest.approx(wo.sum() ** 2 / (wo * wo).sum())


def test_bootstrap_never_draws_a_study_without_a_valid_pair() -> None:
    """A study (or, per study, a test) without a valid pair is no cluster: adding one leaves
    the bootstrap's draws as they were. Before, it was drawn as a cluster of weight 0 in the
    first group's resample, so its interval came from fewer studies than the model has."""
    frame, _ = _six_studies()
    empty = frame[frame["study"] == "s0"].assign(study="s-empty", agent_d=np.nan)
    with_empty = pd.concat([empty, frame], ignore_index=True)  # its study drawn first
    for kw in (dict(), dict(level="study")):
        before = replication.ecs(frame, ci="bootstrap", n_boot=300, **kw)
        after = replication.ecs(with_empty, ci="bootstrap", n_boot=300, **kw)
        after = after[after["n"] > 0].reset_index(drop=True)
        pd.testing.assert_frame_equal(after, before)
    # per study, the tests are the clusters: a test without a pair is no cluster either
    one = frame[frame["study"] == "s1"]
    padded = pd.concat([one.iloc[:1].assign(test="x", agent_d=np.nan), one],
                       ignore_index=True)
    pd.testing.assert_frame_equal(
        replication.ecs(padded, level="study", ci="bootstrap", n_boot=300),
        replication.ecs(one, level="study", ci="bootstrap", n_boot=300))


def _six_studies() -> tuple[pd.DataFrame, None]:
    rng = np.random.default_rng(11)
    rows = [{"model": "m", "study": f"s{s}", "finding": f"s{s}/f{t % 2}", "test": f"t{t}",
             "human_d": x, "agent_d": x + rng.normal(0, 0.3)}
            for s in range(6) for t, x in enumerate(rng.normal(0.3, 0.6, 4))]
    return pd.DataFrame(rows), None


def test_study_level_intervals_over_tests_need_the_tests() -> None:
    sums = replication.finding_sums(awkward_tests())
    for ci in ("jackknife", "bootstrap"):
        with pytest.raises(ValueError, match="resamples the tests"):
            replication.ecs_from_sums(sums, level="study", ci=ci)


# ------------------------------------------------------------------ the engines


def test_effect_to_d_in_the_engine_is_numpy_s() -> None:
    """The engine's conversion of native effects equals ``effect_to_d`` on every test type,
    at the bounds too (|r| at 1 − 10⁻⁶, a proportion at 0, 1 and past them, a huge z)."""
    import ibis

    values = [-40.0, -7.3, -1.0, -1e-8, 0.0, 1e-8, 0.3, 0.5, 0.999999, 0.9999995, 1.0, 1.4,
              7.25, 40.0, np.nan]
    kinds = [*TEST_TYPES, "unknown"]
    grid = pd.DataFrame([(v, k) for v in values for k in kinds], columns=["v", "kind"])
    table = ibis.memtable(grid)
    con = ibis.duckdb.connect()
    got = con.execute(engine_replication._native_d(table, "v", "kind", "d").select("d"))
    expected = replication.effect_to_d(grid["v"].to_numpy(), grid["kind"].to_numpy())
    np.testing.assert_allclose(got["d"].to_numpy(float), expected, rtol=1e-9, atol=1e-15)


def test_duckdb_sums_equal_the_memory_sums(run_file) -> None:
    run, path = run_file
    memory = replication.finding_sums(run.frame)
    assert (memory["n"] == 0).any() and memory["domain"].isna().any()  # the awkward cases
    _assert_same_sums(_engine_sums(engines.connect("duckdb"), path), memory)


@pytest.mark.parametrize("weights", ["equal", "n_eff"])
def test_duckdb_pas_sums_equal_the_memory_sums(run_file, weights) -> None:
    """Posteriors given or from Bayes factors (a flag missing: no prior), n_eff missing on
    some tests, a model without any posterior pair (left out)."""
    run, path = run_file
    memory = replication.finding_pas_sums(run.frame, finding_weights=weights)
    engine = _engine_sums(engines.connect("duckdb"), path, finding_weights=weights)
    _assert_same_sums(engine, memory)
    assert memory["n_no_prior"].sum() > 0 and (memory["n_usable"] < memory["n_tests"]).any()
    summed = replication.pas_from_sums(engine, finding_weights=weights)
    full = replication.pas(run.frame, finding_weights=weights)
    for level in ("finding", "study", "model"):
        pd.testing.assert_frame_equal(getattr(summed, level), getattr(full, level),
                                      rtol=1e-9, atol=1e-12)
    assert summed.notes == full.notes and len(full.notes) >= 2
    assert "m3" not in set(summed.model["model"])  # no posterior pair: no PAS
    assert summed.test.empty and "pas" in summed.test  # the tests stay in the engine


def test_pas_from_sums_worked_by_hand() -> None:
    # one finding of two tests, π_h = 1 so PAS = π_a = 0.9 and 0.6: r = 0.8 and 0.2,
    # z = atanh 0.8 = 1.0986 and atanh 0.2 = 0.2027; z̄ = 0.6507,
    # PAS = (tanh 0.6507 + 1)/2 = 0.7861
    tests = pd.DataFrame({"model": "m", "study": "s", "finding": "f", "test": ["a", "b"],
                          "human_pi": [1.0, 1.0], "agent_pi": [0.9, 0.6]})
    sums = replication.finding_pas_sums(tests)
    assert sums[["n_tests", "n_usable"]].iloc[0].tolist() == [2, 2]
    assert sums["sum_pas"].iloc[0] == pytest.approx(0.9 + 0.6)
    assert sums["sum_z"].iloc[0] == pytest.approx(np.arctanh(0.8) + np.arctanh(0.2))
    result = replication.pas_from_sums(sums, ci=None)
    z_bar = (np.arctanh(0.8) + np.arctanh(0.2)) / 2
    assert result.finding["pas"].iloc[0] == pytest.approx((np.tanh(z_bar) + 1) / 2)
    assert result.finding["pas"].iloc[0] == pytest.approx(0.7861, abs=1e-4)


def _printed(argv: list[str], capsys) -> pd.DataFrame:
    from kbench_core.cli import main

    capsys.readouterr()
    assert main(argv) == 0
    return pd.read_csv(io_.StringIO(capsys.readouterr().out), comment="#")


def test_metrics_on_duckdb_are_memory_s_without_fetching_a_test(run_file, tmp_path, capsys,
                                                                monkeypatch) -> None:
    """``kbench metrics`` of a replication run through DuckDB, one file and a folder of two:
    the ECS tables of every level equal the memory engine's at 1e-9, no test fetched, and
    neither PAS's sums nor the scatter's computed (the run's tables are read lazily)."""
    _, path = run_file
    memory = _printed(["metrics", str(path), "--engine", "memory", "--precision", "full"],
                      capsys)
    folder = tmp_path / "split"
    folder.mkdir()
    frame = awkward_tests()
    frame.iloc[:40].to_parquet(folder / "a.parquet")
    frame.iloc[40:].to_parquet(folder / "b.parquet")

    monkeypatch.setattr(engines.reduce, "typed_rows", _refused)
    for name in ("finding_pas_sums", "scatter_grid", "scatter_points"):  # ECS is all it reads
        monkeypatch.setattr(engine_replication, name, _refused)
    for where in (path, folder):
        with recorded(monkeypatch) as seen:
            duck = _printed(["metrics", str(where), "--engine", "duckdb", "--precision",
                             "full"], capsys)
        assert_asked_once(seen)  # each label column's distinct values fetched once
        pd.testing.assert_frame_equal(duck, memory, rtol=1e-9, atol=1e-12)
    assert set(memory["ci_method"].dropna()) >= {"jackknife_studies", "lin"}
    assert memory["domain"].isna().sum() < len(memory)  # the domain level is there


def _compared(argv: list[str], capsys) -> str:
    from kbench_core.cli import main

    capsys.readouterr()
    assert main(argv) == 0
    return "\n".join(line for line in capsys.readouterr().out.splitlines()
                     if not line.startswith("# created"))


@pytest.mark.parametrize("models", [[], ["m1", "m2"]])
def test_compare_on_duckdb_is_memory_s_without_fetching_a_test(models, run_file, tmp_path,
                                                                capsys, monkeypatch) -> None:
    """``kbench compare`` of a replication run through DuckDB (one file and a folder of two;
    every pair, or two models per study): |agent d − human d| paired by test in the engine
    (``engines.replication.per_item``, ``engines.items.item_means``), the printed table
    equal to the memory engine's to the last digit, no test fetched; a number column of the
    run (``--metric human_d``) too."""
    _, path = run_file
    folder = tmp_path / "split"
    folder.mkdir()
    frame = awkward_tests()
    frame.iloc[:40].to_parquet(folder / "a.parquet")
    frame.iloc[40:].to_parquet(folder / "b.parquet")
    asked = ["--models", *models] if models else []
    for where in (path, folder):
        for metric in ([], ["--metric", "human_d"]):
            argv = ["compare", str(where), *asked, *metric, "--format", "csv"]
            memory = _compared([*argv, "--engine", "memory"], capsys)
            with monkeypatch.context() as patched, recorded(monkeypatch) as seen:
                patched.setattr(engines.reduce, "typed_rows", _refused)
                duck = _compared([*argv, "--engine", "duckdb"], capsys)
            assert duck == memory, (where, metric)
            assert_asked_once(seen)
            assert "m1" in memory and "m2" in memory and len(memory.splitlines()) > 4


def _refused(*args, **kwargs):
    raise AssertionError("the tests were fetched")


@pytest.mark.parametrize("command", ["metrics", "compare"])
def test_duckdb_refuses_a_bad_cell_as_the_loader_does(command, tmp_path) -> None:
    from kbench_core.cli import main

    frame = awkward_tests()
    frame.loc[7, "test_type"] = "regression"
    path = tmp_path / "bad.parquet"
    frame.to_parquet(path)
    messages = []
    for engine in ("memory", "duckdb"):
        with pytest.raises(SystemExit) as err:
            main([command, str(path), "--engine", engine])
        messages.append(str(err.value))
    assert messages[0] == messages[1] and "test_type" in messages[0] and "row 8" in messages[0]


def test_a_file_the_engine_cannot_read_as_the_loader_is_left_to_the_loader(tmp_path, capsys,
                                                                          ) -> None:
    """Effects written as text: the family's engine run steps aside and the rows are read
    as before; options the engine's tables were not summed under (n_eff test weights) are
    refused in words, not computed from the wrong sums."""
    from kbench_core.families import items_for
    from kbench_core.families.replication import _engine_run

    frame = awkward_tests()
    path = tmp_path / "text.parquet"
    frame.astype({"human_effect": str}).to_parquet(path)
    duck = engines.connect("duckdb")
    (src,) = source.sources(path)
    assert _engine_run(src, duck) is None
    memory = _printed(["metrics", str(path), "--engine", "memory"], capsys)
    pd.testing.assert_frame_equal(_printed(["metrics", str(path)], capsys), memory)
    good = tmp_path / "good.parquet"
    frame.to_parquet(good)
    (src,) = source.sources(good)
    summed = _engine_run(src, duck)
    assert summed is not None and summed.frame.empty
    (pas,) = [i for i in items_for("replication") if i.name == "pas"]
    with pytest.raises(ValueError, match="equal test weights: read the tests"):
        list(pas.objects(summed.frame, {"finding_weights": "n_eff"}, tables=summed.tables))


def test_profile_on_duckdb_is_memory_s_without_fetching_a_test(run_file, capsys, monkeypatch,
                                                              sample_dir) -> None:
    """``kbench profile`` of a replication run through DuckDB (the default for Parquet; beside
    a bias CSV the loader reads): ECS and PAS rows equal the memory engine's at 1e-9, no test
    fetched."""
    _, path = run_file
    bias = str(sample_dir / "bias.csv")
    memory = _printed(["profile", bias, str(path), "--engine", "memory", "--precision",
                       "full"], capsys)

    def refused(*args, **kwargs):
        raise AssertionError("the tests were fetched")

    monkeypatch.setattr(engines.reduce, "typed_rows", refused)
    duck = _printed(["profile", bias, str(path), "--precision", "full"], capsys)
    pd.testing.assert_frame_equal(duck, memory, rtol=1e-9, atol=1e-12)
    mine = memory[memory["kind"] == "replication"]
    assert set(mine["metric"]) == {"ecs", "pas"} and set(memory["kind"]) >= {"bias"}


@pytest.mark.parametrize("drop", [[], ["human_significant"],
                                  ["human_significant", "human_bf10", "agent_bf10", "n_eff"],
                                  ["human_pi", "agent_pi", "human_bf10", "agent_bf10"]],
                         ids=["all", "no-flag", "posteriors-only", "no-posteriors"])
def test_profile_of_runs_without_some_columns(drop, tmp_path, capsys, monkeypatch) -> None:
    """The bundled sample (posteriors given, no flag, no Bayes factors) and the awkward run
    less some of its columns: the engine's profile is memory's (PAS absent with no
    posteriors), never an error."""
    frame = awkward_tests().drop(columns=drop)
    runs = {"awkward": frame, "sample": pd.read_csv(Path(__file__).resolve().parent.parent
                                                    / "sample_data" / "replication.csv")}
    for name, data in runs.items():
        path = tmp_path / f"{name}.parquet"
        data.to_parquet(path)
        memory = _printed(["profile", str(path), "--engine", "memory", "--precision", "full"],
                          capsys)
        duck = _printed(["profile", str(path), "--engine", "duckdb", "--precision", "full"],
                        capsys)
        pd.testing.assert_frame_equal(duck, memory, rtol=1e-9, atol=1e-12)
        if name == "awkward" and "human_pi" in drop:
            assert set(memory["metric"]) == {"ecs"}


def _big_run(n: int = 25_000) -> pd.DataFrame:
    """More valid pairs than the scatter draws (a grid then), with effects beyond the axes
    and effects on the grid's edges."""
    from kbench_core.replication.scatter import AXIS_LIMIT, DENSITY_BINS
    from kbench_core.samples import big_replication_tests

    frame = big_replication_tests(n).reset_index(drop=True)
    # beyond the axes on both sides (drawn at the edge, counted), so the axes are ±4
    frame.loc[:4, "agent_d"] = 9.5
    frame.loc[5:9, "agent_d"] = -9.5
    edges = np.linspace(-AXIS_LIMIT, AXIS_LIMIT, DENSITY_BINS + 1)
    frame.loc[10:10 + DENSITY_BINS, "human_d"] = edges  # every edge, the last one too
    return frame


@pytest.mark.parametrize("which", ["points", "grid"])
def test_every_item_of_the_engine_run_is_memory_s(which, run_file, tmp_path,
                                                  monkeypatch) -> None:
    """Every catalog item (ECS, PAS, the effect scatter, the PAS heat map) of a replication
    run computed by DuckDB from its sufficient tables (the scatter: each test of a small run,
    counts on numpy's grid of a large one, the fit lines from the findings' moments) equals
    the memory engine's: numbers at 1e-9, labels, rows and pages exactly. No test is
    fetched."""
    from kbench_core.engines.cli import load_all
    from kbench_core.families import items_for

    if which == "points":
        _, path = run_file
    else:
        path = tmp_path / "big.parquet"
        _big_run().to_parquet(path)
    (memory,) = load_all([str(path)], engine="memory")

    def refused(*args, **kwargs):
        raise AssertionError("the tests were fetched")

    monkeypatch.setattr(engines.reduce, "typed_rows", refused)
    (summed,) = load_all([str(path)], engine="duckdb", summed=True)
    assert summed.frame.empty and len(summed) == len(memory)
    assert summed.models == memory.models and summed.warnings == memory.warnings
    assert (summed.tables["scatter"] is None) is False
    assert isinstance(summed.tables["scatter"], pd.DataFrame) == (which == "points")
    for item in items_for("replication"):
        mine = list(item.objects(memory.frame, {}, meta=memory.meta))
        theirs = list(item.objects(summed.frame, {}, meta=summed.meta, tables=summed.tables))
        assert [stem for stem, _ in theirs] == [stem for stem, _ in mine], item.name
        assert mine, item.name
        for (_, left), (_, right) in zip(mine, theirs, strict=True):
            assert_same(left, right)
    if which == "grid":
        grid = summed.tables["scatter"]
        assert grid.n_clamped == 10 and grid.n_points == len(memory)
        assert (grid.lo, grid.hi) == (-4.0, 4.0)


def test_spark_run_is_memory_s(run_file, spark, monkeypatch) -> None:
    """The engine run on Spark: ECS's and PAS's sums equal to memory's, and every item, the
    scatter drawn on its grid (the point limit lowered so that the small run takes the grid's
    queries), equal to memory's (PAS under n_eff weights: DuckDB's test above, the same
    expression)."""
    from kbench_core.families import items_for
    from kbench_core.families.replication import _engine_run
    from kbench_core.figures import replication as rep_figures
    from kbench_core.replication import scatter

    run, path = run_file
    monkeypatch.setattr(scatter, "MAX_POINTS", 10)
    monkeypatch.setattr(rep_figures, "MAX_POINTS", 10)
    (src,) = source.sources(path)
    _HELD.append(src)
    summed = _engine_run(src, spark)
    # the comparison's items table, paired by test in Spark
    from kbench_core import compare

    _, items = engines.compare_source(path, "abs_diff", engine="spark", cluster="study",
                                      backend=spark)
    memory = compare.item_values(compare.per_item_values(run.frame, "replication"),
                                 "abs_diff", cluster="study")
    pd.testing.assert_frame_equal(compare.item_values(items, "abs_diff", cluster="study"),
                                  memory, rtol=1e-9, atol=1e-12)
    _assert_same_sums(summed.tables["ecs"], replication.finding_sums(run.frame))
    _assert_same_sums(summed.tables["pas"], replication.finding_pas_sums(run.frame))
    assert not isinstance(summed.tables["scatter"], pd.DataFrame)  # the grid
    for item in items_for("replication"):
        mine = list(item.objects(run.frame, {}))
        theirs = list(item.objects(summed.frame, {}, tables=summed.tables))
        assert [stem for stem, _ in theirs] == [stem for stem, _ in mine], item.name
        for (_, left), (_, right) in zip(mine, theirs, strict=True):
            assert_same(left, right)


def test_per_finding_sums_past_the_decompressed_limit_are_refused_by_name(run_file,
                                                                          monkeypatch) -> None:
    """The limit follows the path (issue 39, item 3): the per-finding sums an engine fetches
    are held to the loader's decompressed-size limit, refused in words naming them."""
    from kbench_core import problems
    from kbench_core.cli import main

    _, path = run_file
    monkeypatch.setattr(problems, "DEFAULT_MAX_DECOMPRESSED", 2_000)
    with pytest.raises(SystemExit) as err:
        main(["metrics", str(path), "--engine", "duckdb"])
    said = str(err.value)
    assert "the engine's per-finding sums of this run pass" in said, said
    assert "its findings are too many" in said
    monkeypatch.setattr(problems, "DEFAULT_MAX_DECOMPRESSED", 1024**3)
    assert main(["metrics", str(path), "--engine", "duckdb"]) == 0
