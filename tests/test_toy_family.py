"""A new family from inside ``tests/``, with no shared file edited (issue 27, "Done when").

``tests/toy_family.py`` defines a multiple-choice-accuracy family (its columns, metrics,
catalog, sample writer, format doc section in ``tests/toy_family.md`` and page
``tests/toy_page.py``); one ``families.register`` call adds it, and validation, the command
line (validate, metrics, figures, report, compare), the Export ZIP, the app's menu and page,
the samples and the format docs pick it up. This file is the recipe of ``docs/architecture.md``,
"Checklist for a new family"."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from kbench_core import families, samples, schema
from kbench_core.bundle_export import ExportChoice, export_zip
from kbench_core.cli import main
from kbench_core.io import RunFormatError, load_run
from tests import toy_family

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def toy():
    families.register(toy_family.FAMILY)  # the one registration
    try:
        yield toy_family.FAMILY
    finally:
        families.unregister(toy_family.KIND)


@pytest.fixture
def toy_file(tmp_path: Path) -> Path:
    return toy_family.FAMILY.write_sample(tmp_path, 0)[0]


def test_without_registration_kbench_does_not_know_the_toy(tmp_path: Path) -> None:
    path = toy_family.FAMILY.write_sample(tmp_path, 0)[0]
    assert toy_family.KIND not in families.kinds()
    with pytest.raises(RunFormatError):
        load_run(path)


def test_validation_and_the_schema_lists(toy, toy_file: Path) -> None:
    run = load_run(toy_file)
    assert run.kind == toy_family.KIND and len(run.frame) == 120
    assert toy_family.KIND in schema.KINDS and schema.SPECS[toy_family.KIND] is toy.spec
    # no hand-written list of kinds refuses it when named
    assert load_run(toy_file, kind=toy_family.KIND).kind == toy_family.KIND
    # the family's own schema checks every cell
    bad = toy_file.read_text().replace(",A,", ",E,", 1)
    with pytest.raises(RunFormatError, match="choice"):
        load_run(("bad.csv", bad.encode()))
    # the metric: accuracy per model with statsmodels' Wilson interval
    table = toy_family.accuracy(run.frame).set_index("model")
    frame = toy_family.sample_frame(0)
    for model, rows in frame.groupby("model"):
        k, n = int(rows["correct"].sum()), len(rows)
        assert table.loc[model, "accuracy"] == pytest.approx(k / n)
        assert (table.loc[model, "accuracy_low"], table.loc[model, "accuracy_high"]) == (
            pytest.approx(proportion_confint(k, n, method="wilson")))


def test_the_command_line(toy, toy_file: Path, tmp_path: Path, capsys) -> None:
    assert main(["validate", str(toy_file)]) == 0
    assert toy_family.KIND in capsys.readouterr().out
    assert main(["metrics", str(toy_file), "--format", "csv"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines()
             if not line.startswith("#")]  # provenance comment lines first
    assert lines[0].replace('"', "").startswith("model,successes,n,accuracy")
    assert lines[1].strip('"').startswith("synthetic-strong")  # best first
    figures = tmp_path / "figures"
    assert main(["figures", str(toy_file), "--out", str(figures), "--format", "svg"]) == 0
    written = {p.name for p in figures.rglob("*") if p.is_file()}
    assert {"toy_mcq_accuracy.csv", "toy_mcq_calibration.csv"} <= written
    if shutil.which("chromium"):
        assert {"toy_mcq_accuracy_chart.svg", "toy_mcq_reliability.svg"} <= written
    report = tmp_path / "report.html"
    assert main(["report", str(toy_file), "--out", str(report)]) == 0
    assert "Accuracy per model" in report.read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["compare", str(toy_file), "--format", "csv"]) == 0
    compared = capsys.readouterr().out
    assert "synthetic-strong" in compared and "synthetic-weak" in compared


def test_the_export_zip(toy, toy_file: Path) -> None:
    run = load_run(toy_file)
    data = export_zip([run], ExportChoice(items=("accuracy", "calibration"),
                                          table_formats=("csv",)))
    archive = zipfile.ZipFile(io.BytesIO(data))
    assert sorted(archive.namelist()) == ["provenance.json", "toy_mcq/accuracy.csv",
                                          "toy_mcq/calibration.csv"]
    assert json.loads(archive.read("provenance.json"))["not_made"] == []


def test_samples_write_its_file(toy, tmp_path: Path) -> None:
    assert toy_family.SAMPLE in samples.SAMPLE_FILES
    written = samples.write_samples(tmp_path)
    assert toy_family.SAMPLE in [p.name for p in written]
    assert load_run(tmp_path / toy_family.SAMPLE).kind == toy_family.KIND
    # the built-in files are what they were: the bundled bytes
    for path in written:
        if path.name != toy_family.SAMPLE:
            assert path.read_bytes() == (ROOT / "sample_data" / path.name).read_bytes()


def test_the_format_docs(toy) -> None:
    section = families.format_section(toy_family.KIND)
    assert section.startswith(f"## `{toy_family.KIND}`")
    for column in toy.spec.columns:
        assert f"| `{column.name}` |" in section


def test_the_app_menu_and_page(toy, toy_file: Path, monkeypatch) -> None:
    from streamlit.testing.v1 import AppTest

    from kbench_app import state

    monkeypatch.setenv("KBENCH_APP_ARGS", f"--no-samples {toy_file}")
    state._cached_load.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    runs = at.session_state[state.REGISTRY].runs
    assert [run.kind for run in runs.values()] == [toy_family.KIND]
    assert toy.page.path in [page.path for page in families.pages()]
    at.switch_page(toy.page.path).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Toy multiple choice"
    assert at.multiselect(key=toy_family.MODELS_KEY).value == ["synthetic-strong",
                                                              "synthetic-weak"]
    shown = at.dataframe[0].value
    assert list(shown["model"]) == ["synthetic-strong", "synthetic-weak"]
    np.testing.assert_allclose(shown["accuracy"], toy_family.accuracy(
        toy_family.sample_frame(0))["accuracy"])
    at.multiselect(key=toy_family.MODELS_KEY).set_value(["synthetic-weak"]).run()
    assert list(at.dataframe[0].value["model"]) == ["synthetic-weak"]


def test_unregistering_leaves_the_builtin_families(toy) -> None:
    assert families.kinds()[-1] == toy_family.KIND
    families.unregister(toy_family.KIND)
    assert toy_family.KIND not in families.kinds()
    assert toy_family.SAMPLE not in samples.SAMPLE_FILES
    families.register(toy_family.FAMILY)  # for the fixture's teardown
