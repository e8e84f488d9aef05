"""The Export page's ZIP holds exactly what was chosen, each file with its provenance."""

from __future__ import annotations

import io
import json
import shutil
import zipfile

import pytest

from kbench_core.bundle_export import ExportChoice, export_zip, not_made, planned_files
from kbench_core.io import load_run
from tests.conftest import in_ci

RUN = load_run("sample_data/bias.csv")


@pytest.fixture(autouse=True)
def _needs_chromium():
    if not shutil.which("chromium"):
        if in_ci():
            pytest.fail("CI: chromium is needed for figure export")
        pytest.skip("figure export needs Debian's chromium")


def test_zip_holds_the_chosen_items_in_the_chosen_formats() -> None:
    seen = []
    data = export_zip([RUN], ExportChoice(items=("fingerprint", "has_chart"),
                                          figure_formats=("svg",),
                                          table_formats=("latex", "markdown")),
                      progress=lambda fraction, name: seen.append((fraction, name)))
    archive = zipfile.ZipFile(io.BytesIO(data))
    names = sorted(archive.namelist())
    assert names == ["bias/fingerprint.md", "bias/fingerprint.tex", "bias/has_chart.svg",
                     "provenance.json"]
    manifest = json.loads(archive.read("provenance.json"))
    assert manifest["runs"] == [{"name": "bias", "sha256": RUN.content_hash}]
    assert {f["file"] for f in manifest["files"]} == set(names) - {"provenance.json"}
    assert b"kbench" in archive.read("bias/has_chart.svg")[:2000]
    assert seen[-1][0] == 1.0 and len(seen) == 3


def test_per_item_expansion_and_plan() -> None:
    plan = planned_files([RUN], ExportChoice(items=("bms_curves",)))
    assert [(name, what) for _, name, what in plan] == [("bms_curves", "figure")]
    data = export_zip([RUN], ExportChoice(items=("bms_curves",), figure_formats=("png",)))
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    biases = sorted(RUN.frame["bias"].unique())
    assert sorted(n for n in names if n.endswith(".png")) == [
        f"bias/bms_curves-{b}.png" for b in biases]


def test_models_that_answered_disjoint_biases_still_export() -> None:
    # Issue 24.12: valid data (two models, no bias in common) made the ZIP raise
    # "ValueError: no item was answered by every model" from the susceptibility ranking.
    rows = ["model,bias,condition,intensity,domain,score"]
    for model, biases in (("ma", ("anchoring_effect", "framing_effect")),
                          ("mb", ("loss_aversion", "sunk_cost_fallacy"))):
        for bias in biases:
            for domain in ("social", "risk"):
                rows += [f"{model},{bias},control,,{domain},0",
                         f"{model},{bias},treatment,strong,{domain},1",
                         f"{model},{bias},treatment,weak,{domain},0.5"]
    run = load_run(("disjoint.csv", "\n".join(rows).encode()))
    from kbench_core import kahne
    from kbench_core.families.bias import susceptibility_table

    # No bias is shared, so no model has a susceptibility over a common set, nor a rank.
    board = susceptibility_table(kahne.fingerprint(run.frame)).set_index("model")
    assert board["susceptibility"].isna().all() and board["rank"].isna().all()
    assert board["n_biases"].tolist() == [0, 0] and board["n_left_out"].tolist() == [2, 2]
    chosen = ("fingerprint", "susceptibility", "cas_bars")
    data = export_zip([run], ExportChoice(items=chosen, figure_formats=("svg",),
                                          table_formats=("csv",)))
    names = set(zipfile.ZipFile(io.BytesIO(data)).namelist())
    assert {"disjoint/fingerprint.csv", "disjoint/cas_bars.svg"} <= names
    skipped = not_made(data)
    # Each chosen item is in the ZIP or named, with its reason, as not made.
    for item in chosen:
        written = any(n.startswith(f"disjoint/{item}.") for n in names)
        listed = [s for s in skipped if s["item"] == item]
        assert written != bool(listed), (item, names, skipped)
        assert all(s["run"] == "disjoint" and s["why"] for s in listed)
