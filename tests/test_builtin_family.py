"""A new *built-in* family with no shared file edited (issue 41, "Done when").

``tests/toy_family.py`` is put among the modules of ``kbench_core/families/`` — its files in a
folder on the package's path (the discovery the built-in families go through, in this
process), and, once, in a copy of the package tree run as its own process — and nothing else
changes. The registry finds it with the built-in families, and every command (validate,
metrics, figures, report, compare, profile), the engine path (a Parquet file through DuckDB),
the samples and the page-key checks take it up: the tests that list the families read the
registry, none names a kind by hand."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from kbench_core import families, samples
from kbench_core.cli import main
from kbench_core.families import Family
from kbench_core.io import load_run

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
KIND = "toy_mcq"
MODULE = f"{families.__name__}.{KIND}"


def _own_files(folder: Path) -> None:
    """The family's module among the package's (its format doc and page stay where its
    ``format_doc`` and ``PageInfo`` name them, relative to the repository, as a built-in
    family's ``docs/formats.md`` and ``views/`` page do)."""
    shutil.copy(HERE / "toy_family.py", folder / f"{KIND}.py")


@pytest.fixture
def builtin_toy(tmp_path_factory: pytest.TempPathFactory,
                monkeypatch: pytest.MonkeyPatch) -> Iterator[Family]:
    """The toy family as a module of ``kbench_core.families``, the registry found afresh (the
    built-in families as they were afterwards)."""
    folder = tmp_path_factory.mktemp("families")
    _own_files(folder)
    monkeypatch.setattr(families, "__path__", [*families.__path__, str(folder)])
    monkeypatch.setattr(families, "_REGISTRY", {})
    monkeypatch.setattr(families, "_BUILTIN", {})
    monkeypatch.setattr(families, "_LOADED", False)
    try:
        yield families.get(KIND)
    finally:
        sys.modules.pop(MODULE, None)
        if hasattr(families, KIND):
            delattr(families, KIND)


@pytest.fixture
def toy_files(builtin_toy: Family, tmp_path: Path) -> tuple[Path, Path]:
    """The family's sample run as CSV (the loader) and as Parquet (an engine's)."""
    csv = builtin_toy.write_sample(tmp_path, 0)[0]
    parquet = tmp_path / "toy_mcq_run.parquet"
    pd.read_csv(csv).to_parquet(parquet, index=False)
    return csv, parquet


def _table(out: str) -> pd.DataFrame:
    """A CSV table ``kbench`` printed, its provenance comment lines left out."""
    lines = [line for line in out.splitlines() if not line.startswith("#")]
    return pd.read_csv(io.StringIO("\n".join(lines)))


def test_it_is_found_among_the_builtin_families(builtin_toy: Family) -> None:
    assert sys.modules[MODULE].FAMILY is builtin_toy  # the module of the package
    assert KIND in families.BUILTIN  # found, not listed
    assert families.kinds()[:5] == ["judged", "replication", "replication_summary", "bias",
                                    "bias_summary"]  # detection order: Family.detection_order
    assert families.kinds()[-1] == KIND
    with pytest.raises(ValueError, match="built-in"):
        families.unregister(KIND)


def test_every_command_and_the_engine_path(toy_files: tuple[Path, Path], tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    csv, parquet = toy_files
    assert load_run(csv).kind == KIND
    for path in (csv, parquet):  # the loader, then DuckDB (the default engine of Parquet)
        assert main(["validate", str(path)]) == 0
        assert KIND in capsys.readouterr().out
    metrics = {}
    for path, engine in ((csv, "memory"), (parquet, "duckdb")):
        assert main(["metrics", str(path), "--format", "csv", "--engine", engine]) == 0
        metrics[engine] = _table(capsys.readouterr().out)
    assert list(metrics["memory"].columns[:4]) == ["model", "successes", "n", "accuracy"]
    pd.testing.assert_frame_equal(metrics["duckdb"], metrics["memory"])
    for path in (csv, parquet):
        out = tmp_path / f"figures-{path.suffix[1:]}"
        assert main(["figures", str(path), "--out", str(out), "--format", "svg"]) == 0
        assert {f"{path.stem}_accuracy.csv", f"{path.stem}_calibration.csv"} <= {
            p.name for p in out.rglob("*") if p.is_file()}
        report = tmp_path / f"report-{path.suffix[1:]}.html"
        assert main(["report", str(path), "--out", str(report)]) == 0
        assert "Accuracy per model" in report.read_text(encoding="utf-8")
        capsys.readouterr()
        assert main(["compare", str(path), "--format", "csv"]) == 0
        compared = capsys.readouterr().out
        assert "synthetic-strong" in compared and "synthetic-weak" in compared
    # the profile: the toy's rows beside a built-in family's, its headline the family's own
    judged = ROOT / "sample_data" / "judged.csv"
    tables = {}
    for path, engine in ((csv, "memory"), (parquet, "duckdb")):  # Parquet: DuckDB's
        assert main(["profile", str(path), str(judged), "--format", "csv"]) == 0
        table = _table(capsys.readouterr().out)
        tables[engine] = table[table["family"] == "toy multiple choice"].reset_index(drop=True)
    toy = tables["memory"]
    assert sorted(toy["model"]) == ["synthetic-strong", "synthetic-weak"]
    assert set(toy["metric"]) == {"accuracy"}
    from tests.toy_family import accuracy, sample_frame

    expected = accuracy(sample_frame(0)).set_index("model")["accuracy"]
    assert toy.set_index("model")["value"].to_dict() == pytest.approx(expected.to_dict(),
                                                                     abs=1e-4)  # 4 digits
    assert toy.set_index("model")["rank"].to_dict() == {"synthetic-strong": 1.0,
                                                       "synthetic-weak": 2.0}
    named = ["run", "source"]  # the file's name
    pd.testing.assert_frame_equal(tables["duckdb"].drop(columns=named),
                                  tables["memory"].drop(columns=named))


def test_the_samples_and_the_page_keys_take_it_up(builtin_toy: Family, tmp_path: Path) -> None:
    from tests import test_families, test_samples

    assert f"{KIND}.csv" in samples.SAMPLE_FILES
    written = {p.name: p for p in samples.write_samples(tmp_path)}
    assert load_run(written[f"{KIND}.csv"]).kind == KIND
    frames = test_samples.generated()
    assert KIND in frames
    test_samples.check_against_schema(frames[KIND], builtin_toy.spec)
    test_families.test_each_page_widget_key_is_written_once()


def test_a_copy_of_the_package_tree_with_the_family_added(tmp_path: Path) -> None:
    """The literal case: a copy of ``kbench_core`` with the family's module dropped into its
    ``families/`` folder, run as its own process (``python -m``-style, from the copy)."""
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "kbench_core", tree / "kbench_core",
                    ignore=shutil.ignore_patterns("__pycache__"))
    _own_files(tree / "kbench_core" / "families")
    script = f"""
import sys, pandas as pd
from kbench_core import families
from kbench_core.cli import main
assert families.__file__.startswith({str(tree)!r}), families.__file__
assert {KIND!r} in families.BUILTIN, families.BUILTIN
csv = families.get({KIND!r}).write_sample({str(tmp_path)!r}, 0)[0]
parquet = {str(tmp_path / "run.parquet")!r}
pd.read_csv(csv).to_parquet(parquet, index=False)
for path in (str(csv), parquet):
    for args in (["validate", path], ["metrics", path, "--format", "csv"],
                 ["compare", path, "--format", "csv"],
                 ["profile", path, "--format", "csv"],
                 ["report", path, "--out", {str(tmp_path / "report.html")!r}]):
        assert main(args) == 0, args
print("done")
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=tree, capture_output=True,
                          text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tree),
                               "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.rstrip().endswith("done")
    assert "synthetic-strong" in done.stdout


def test_a_family_that_computes_its_tables_in_the_engine(
        toy_files: tuple[Path, Path], builtin_toy: Family, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``Family.engine_tables`` (issue 39): ``kbench metrics`` on an engine prints what the
    family computed there (here the successes and counts summed by DuckDB, the Wilson
    intervals finished from them), no row fetched, equal to the loader's table; a family that
    returns None (its columns need the loader) is read as before."""
    import dataclasses

    from kbench_core import engines
    from kbench_core.engines import cli as engine_cli
    from kbench_core.engines import source
    from tests.toy_family import accuracy

    csv, parquet = toy_files
    asked = []

    def summed(src, backend, options):
        asked.append(src.kind)
        table = source.open_table(backend, src)
        sums = table.group_by("model").aggregate(
            successes=table["correct"].cast("int64").sum(), n=table.count()).to_pandas()
        rows = sums.loc[sums.index.repeat(sums["n"])].reset_index(drop=True)
        # as many true as the sums say: accuracy reads only each model's successes and n
        rows["correct"] = rows.groupby("model").cumcount() < rows["successes"]
        return [("all", accuracy(rows[["model", "correct"]]))], {"summed": True}

    monkeypatch.setitem(families._REGISTRY, KIND,
                        dataclasses.replace(builtin_toy, engine_tables=summed))
    monkeypatch.setattr(engines.settings, "JUDGED_CELLS_ROWS", 0)

    def refused(*args, **kwargs):
        raise AssertionError("the rows were reduced or fetched")

    printed = {}
    for path, engine in ((csv, "memory"), (parquet, "duckdb")):
        with monkeypatch.context() as patch:
            if engine == "duckdb":  # the loading every other run goes through
                patch.setattr(engine_cli, "load", refused)
            assert main(["metrics", str(path), "--format", "csv", "--engine", engine]) == 0
        printed[engine] = _table(capsys.readouterr().out)
    assert asked == [KIND]
    pd.testing.assert_frame_equal(printed["duckdb"], printed["memory"])
    monkeypatch.setitem(families._REGISTRY, KIND, dataclasses.replace(
        builtin_toy, engine_tables=lambda *a: asked.append("none") or None))
    assert main(["metrics", str(parquet), "--format", "csv", "--engine", "duckdb"]) == 0
    assert asked == [KIND, "none"]
    pd.testing.assert_frame_equal(_table(capsys.readouterr().out), printed["memory"])
