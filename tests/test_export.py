"""Exports: figures open in their format and carry provenance; tables are well-formed."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pandas as pd
import pytest

from kbench_core import export, figures, kahne, samples
from kbench_core.io import load_run
from tests.conftest import in_ci

RUN = load_run("sample_data/bias.csv")
PROV = export.provenance_of([RUN], what="test figure", options={"cap": 1.0, "biases": ("a",)})



@pytest.fixture(scope="module")
def figure():
    trials = RUN.frame[RUN.frame["bias"] == "anchoring_effect"]
    return figures.bms_curves(kahne.bms(trials), title="anchoring_effect")


def test_png_has_the_size_asked_and_provenance(exporter, figure) -> None:
    png = exporter.to_bytes(figure, "png", width=400, height=300, scale=2, provenance=PROV)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert (width, height) == (800, 600)  # CSS pixels x scale
    start = png.index(b"tEXtkbench\0") + len(b"tEXtkbench\0")
    length = int.from_bytes(png[start - len(b"tEXtkbench\0") - 4:start - len(b"tEXtkbench\0")],
                            "big")
    meta = json.loads(png[start:start + length - len(b"kbench\0")])
    assert meta["runs"] == [{"name": "bias", "sha256": RUN.content_hash}]
    assert meta["options"] == {"cap": 1.0, "biases": ["a"]}


def test_svg_parses_and_carries_provenance(exporter, figure) -> None:
    svg = exporter.to_bytes(figure, "svg", provenance=PROV)
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")
    found = root.find(".//{https://kbench.dev/provenance}provenance")
    assert found is not None and json.loads(found.text)["what"] == "test figure"
    assert b"anchoring_effect" in svg


def test_pdf_renders_with_poppler_and_keeps_its_info(exporter, figure, tmp_path) -> None:
    from pypdf import PdfReader

    pdf = exporter.to_bytes(figure, "pdf", width=672, height=360, provenance=PROV)
    info = PdfReader(io.BytesIO(pdf)).metadata
    assert json.loads(info["/kbench"])["version"] == export.Provenance().version
    path = tmp_path / "figure.pdf"
    path.write_bytes(pdf)
    if not shutil.which("pdftoppm"):
        if in_ci():
            pytest.fail("CI: poppler-utils is needed to render PDFs")
        pytest.skip("pdftoppm (poppler-utils) is not installed")
    subprocess.run(["pdftoppm", "-png", "-r", "72", "-singlefile", str(path),
                    str(tmp_path / "page")], check=True, timeout=60)
    page = (tmp_path / "page.png").read_bytes()
    width = int.from_bytes(page[16:20], "big")
    assert 500 <= width <= 700  # 672 CSS px = 7 in = 504 pt at 72 dpi, within rounding
    from tests.conftest import ROOT

    artifacts = ROOT / "test-artifacts"
    artifacts.mkdir(exist_ok=True)
    shutil.copy(tmp_path / "page.png", artifacts / "export_pdf_page.png")


def test_unknown_format_is_named(exporter, figure) -> None:
    with pytest.raises(ValueError, match="format must be one of png, svg, pdf"):
        exporter.to_bytes(figure, "jpeg")


TABLE = pd.DataFrame({"model": ["m_1", "m&2"], "bms": [0.62, 0.31],
                      "bms_low": [0.55, 0.25], "bms_high": [0.69, 0.37],
                      "note": ["50% of {x}", "a_b"]})


def test_latex_booktabs_intervals_bold_and_escaping() -> None:
    tex = export.to_latex(TABLE, best={"bms": "min"}, caption="BMS_by model",
                          provenance=PROV)
    assert r"\toprule" in tex and r"\midrule" in tex and r"\bottomrule" in tex
    assert r"m\_1 & 0.6200 [0.5500, 0.6900]" in tex
    assert r"\textbf{0.3100 [0.2500, 0.3700]}" in tex          # lower is better: 0.31 bold
    assert r"m\&2" in tex and r"50\% of \{x\}" in tex and r"a\_b" in tex
    assert r"\caption{BMS\_by model}" in tex
    body = "\n".join(line for line in tex.splitlines() if not line.startswith("%"))
    assert body.count("{") - body.count(r"\{") == body.count("}") - body.count(r"\}")
    unescaped = [line for line in body.splitlines() if "_" in line.replace(r"\_", "")]
    assert unescaped == []
    assert tex.startswith("% kbench ")
    assert "bms\\_low" not in tex  # interval columns fold into their metric


def test_markdown_and_csv_round_trip_provenance() -> None:
    md = export.to_markdown(TABLE, best={"bms": "max"})
    assert "| **0.6200 [0.5500, 0.6900]** |" in md and md.count("\n") == 4
    text = export.to_csv(TABLE, provenance=PROV)
    assert text.startswith("# kbench ")
    back = pd.read_csv(io.StringIO(text), comment="#")
    pd.testing.assert_frame_equal(back, TABLE)
    with pytest.raises(ValueError, match="format must be one of csv, latex, markdown"):
        export.table_bytes(TABLE, "xlsx")


def test_fingerprint_table_to_latex_has_one_row_per_pair() -> None:
    fp = kahne.fingerprint(samples.bias_trials()).biases
    tex = export.to_latex(fp[["bias", "model", "bms", "model_rate", "model_rate_low",
                              "model_rate_high"]], best={"bms": "min"})
    rows = [line for line in tex.splitlines() if line.endswith(r"\\")][1:]
    assert len(rows) == len(fp)

