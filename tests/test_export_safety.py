"""Exports that cannot inject (issue 19): names holding control, bidi and markup characters go
through every export format (CSV, LaTeX, Markdown, provenance comments and JSON, the HTML report,
plotly figures, file names) and come back out as the same text, never as a formula, a live
LaTeX line, HTML or a link."""

from __future__ import annotations

import csv
import html
import io
import json
import re
import zipfile

import pandas as pd
import plotly.graph_objects as go
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kbench_core import export, samples
from kbench_core.bundle_export import ExportChoice, export_zip
from kbench_core.export import Provenance
from kbench_core.families import items_for
from kbench_core.io import load_run
from kbench_core.report import report_html
from kbench_core.text import (
    FileNamer,
    escape_controls,
    json_quote,
    neutralise_cell,
    plot_text,
    restore_cell,
    unescape_controls,
)

PIECES = ["<a href='https://evil.example'>Click to verify</a>", "<b style='font-size:60px'>",
          "<br>", "\n", "\r\n", "\r", "\x1b[31m", "\x07", "\u202e", "\u2066", "\u200b",
          "\u2028", "\x85", "-->", "--!>", "--", "=HYPERLINK(\"https://evil\")", "+1", "-1",
          "@SUM(A1)", "\t", "'", '"', ",", ";", "\\input{/etc/passwd}", "%", "&amp;", "|",
          "[x](javascript:alert(1))", "![i](https://evil.example/p.png)", "*", "_", "`", "#",
          "<!--", "$", "^^M", "~", "{", "}", "gpt-4"]
hostile = st.lists(st.sampled_from(PIECES) | st.text(max_size=3), min_size=1,
                   max_size=5).map("".join).filter(lambda s: s.strip() != "")
LINK = re.compile(r"<a\b|<b\b|<br\b|<span\b|<i\b|<sup\b|<sub\b|<em\b", re.IGNORECASE)


def _table(names: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"model": names, "value": [0.5 - i for i in range(len(names))],
                         "value_low": 0.1, "value_high": 0.9})


def _provenance(name: str) -> Provenance:
    return Provenance(runs=((name, "ab" * 32),), options={"models": [name, "-x"]}, what=name)


def _run_name_from(line: str) -> str:
    """The run name of a provenance comment line ``run NAME sha256:...``."""
    body = line.split("run ", 1)[1].rsplit(" sha256:", 1)[0]
    return json.loads(body) if body.startswith('"') else body


# ------------------------------------------------------------------ tables and provenance


@settings(max_examples=150, deadline=None)
@given(names=st.lists(hostile, min_size=1, max_size=4, unique=True))
def test_csv_cells_are_neutralised_and_read_back(names: list[str]) -> None:
    names = [n.replace("\x00", "") or "x" for n in names]
    text = export.to_csv(_table(names), provenance=_provenance(names[0]))
    # every line a spreadsheet sees is a comment or starts no formula
    reader = csv.reader(io.StringIO(text))
    for row in reader:
        for cell in row:
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")) or _is_number(cell), cell
    comments = text.split("\n")[:4]
    assert all(ln.startswith("# ") and "\r" not in ln for ln in comments)
    assert text.split("\n")[4] == '"model","value","value_low","value_high"'
    assert _run_name_from(comments[2]) == names[0]
    back = pd.read_csv(io.StringIO(text), comment="#", keep_default_na=False,
                       dtype={"model": str})
    # bidi controls are written as visible escapes (a U+202E would show the row reversed in a
    # spreadsheet: issue 29), everything else comes back exactly
    bidi = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    shown = ["".join(f"\\u{ord(ch):04x}" if ch in bidi else ch for ch in n) for n in names]
    assert [restore_cell(v) for v in back["model"]] == shown
    assert not any(ch in bidi for ch in text)
    assert list(back["value"]) == [0.5 - i for i in range(len(names))]


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


@settings(max_examples=150, deadline=None)
@given(names=st.lists(hostile, min_size=1, max_size=4, unique=True))
def test_latex_cells_and_comments_stay_in_place(names: list[str]) -> None:
    tex = export.to_latex(_table(names), provenance=_provenance(names[0]), caption=names[0])
    lines = tex.split("\n")
    comments = [ln for ln in lines if ln.startswith("%")]
    assert len(comments) == 4 and _run_name_from(comments[2]) == names[0]
    body = [ln for ln in lines if ln and not ln.startswith("%")]
    # the table is exactly the expected lines: no live \input, no blank line in the tabular
    assert body[0] == r"\begin{table}[t]" and body[-1] == r"\end{table}"
    rows = [ln for ln in body if ln.endswith(r" \\")]
    assert len(rows) == len(names) + 1
    live = "\n".join(body).replace(r"\textbackslash{}", "")
    assert r"\input" not in live  # a name's backslash is always \textbackslash{}
    assert not any(ch in tex for ch in "\r\x1b\x07\u2028\x85")
    for name, row in zip(names, rows[1:], strict=True):
        cell = row.split(" & ")[0]
        expected = escape_controls(re.sub("\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029\t]", " ",
                                          name))
        assert _latex_unescape(cell) == expected


def _latex_unescape(text: str) -> str:
    table = {r"\textbackslash{}": "\\", r"\&": "&", r"\%": "%", r"\$": "$", r"\#": "#",
             r"\_": "_", r"\{": "{", r"\}": "}", r"\textasciitilde{}": "~",
             r"\textasciicircum{}": "^"}
    pattern = re.compile("|".join(re.escape(k) for k in sorted(table, key=len, reverse=True)))
    return pattern.sub(lambda m: table[m.group()], text)


@settings(max_examples=150, deadline=None)
@given(names=st.lists(hostile, min_size=1, max_size=4, unique=True))
def test_markdown_cells_are_escaped_and_the_comment_holds(names: list[str]) -> None:
    md = export.to_markdown(_table(names), provenance=_provenance(names[0]))
    first, *rest = md.split("\n")
    assert first.startswith("<!-- ") and first.endswith(" -->")
    inner = first[5:-4]
    assert "--" not in inner  # so neither "-->" nor "--!>" ends the comment early
    assert len([ln for ln in rest if ln.startswith("|")]) == len(names) + 2
    assert "<" not in "\n".join(rest) and not any(ch in md for ch in "\r\x1b\u2028")
    for name, line in zip(names, rest[2:], strict=False):
        cell = re.split(r"(?<!\\)\|", line)[1].strip()
        shown = re.sub(r"\\([\\`*_~|\[])", r"\1", html.unescape(cell))
        expected = escape_controls(re.sub("\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029\t]", " ",
                                          name)).strip()
        assert shown == expected


@settings(max_examples=200, deadline=None)
@given(name=hostile)
def test_provenance_json_and_escapes_give_the_name_back(name: str) -> None:
    prov = _provenance(name)
    assert json.loads(prov.to_json())["runs"][0]["name"] == name
    assert json.loads(json_quote(name)) == name
    assert unescape_controls(escape_controls(name, reversible=True)) == name
    assert restore_cell(neutralise_cell(name)) == name
    # in figures, controls and bidi overrides show as visible escapes (issue 29), the rest
    # exactly as written
    assert html.unescape(plot_text(name)) == escape_controls(name)
    for line in prov.lines():
        assert line.isprintable() or not any(
            ch in line for ch in "\n\r\x1b\x07\u202e\u2066\u200b\u2028\x85")
        assert "--" not in line and "," not in line.replace(", ", "") and ";" not in line


# ------------------------------------------------------------------ figures and the report


def _hostile_runs() -> list:
    """One run of each kind whose models (and judges) are named with markup."""
    evil = ["<a href='https://evil.example'>Click to verify</a>",
            "<b style='font-size:60px'>big</b>", "two<br>lines", "a & b <i>c</i>"]
    frames = {
        "bias": samples.bias_trials(models=evil[:3], n_trials=4),
        "replication": samples.replication_tests(models=evil[:3], n_studies=3),
        "replication_summary": samples.replication_summary(configs=evil[:3], n_studies=3),
        "judged": samples.judged_samples(n_samples=12, models=evil[:2],
                                         judges=[evil[2], evil[3]]),
    }
    runs = []
    for kind, frame in frames.items():
        sink = io.BytesIO()
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), sink)
        runs.append(load_run((f"<a href='https://evil.example'>{kind}</a>.parquet",
                              sink.getvalue())))
    return runs


@pytest.fixture(scope="module")
def hostile_runs() -> list:
    return _hostile_runs()


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    if hasattr(value, "tolist"):
        return _strings(value.tolist())
    return []


def test_no_figure_renders_markup_from_data(hostile_runs) -> None:
    checked = 0
    for run in hostile_runs:
        for item in items_for(run.kind):
            for _, obj in item.objects(run.frame):
                if not isinstance(obj, go.Figure):
                    continue
                checked += 1
                data = obj.to_plotly_json()
                for text in _strings(data["data"]) + _strings(data["layout"]):
                    assert "evil.example'>" not in text, (item.name, text)
                    assert "<b style" not in text and "two<br>lines" not in text, text
                    assert "<i>c" not in text, text
                shown = json.dumps(data, default=str)
                assert "&lt;a href=" in shown or "&lt;b style" in shown or "two&lt;br&gt;" \
                    in shown, item.name
    assert checked >= 10


def test_report_escapes_names_and_labels(hostile_runs) -> None:
    page = report_html(hostile_runs[:1])
    text = re.sub(r"<script.*?</script>", "", page, flags=re.DOTALL)
    assert "<a href='https://evil" not in text and "<b style" not in text
    assert "&lt;a href=&#x27;https://evil.example&#x27;&gt;" in text
    comment = page.split("\n", 1)[0]
    assert comment.startswith("<!-- ") and comment.count("-->") == 1


# ------------------------------------------------------------------ file names


def test_file_names_are_unique_short_and_stable() -> None:
    namer = FileNamer()
    names = [namer.name(x, suffix=".csv") for x in ("x/y", "x y", "x_y", "X_Y")]
    assert len({n.casefold() for n in names}) == 4
    assert names[0] == "x_y.csv" and re.fullmatch(r"x_y-[0-9a-f]{8}\.csv", names[1])
    assert namer.name("x y", suffix=".csv") == names[1]  # the same label, the same name
    long = namer.name("i" * 300 + "\u00e9" * 300, suffix=".pdf")
    assert len(long.encode()) <= 140 and re.search(r"-[0-9a-f]{8}\.pdf$", long)
    assert FileNamer().name("../../etc/passwd") == "etc_passwd"
    assert FileNamer().name("\u202egpt\x1b") == "gpt"


def test_export_zip_never_holds_a_member_twice() -> None:
    frame = samples.bias_trials(models=["m"], n_trials=4)
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), sink)
    runs = [load_run((f"{name}.parquet", sink.getvalue())) for name in ("x/y", "x y", "x_y")]
    runs = [r.__class__(name=n, kind=r.kind, frame=r.frame, meta=r.meta)
            for r, n in zip(runs, ("x/y", "x y", "x_y"), strict=True)]
    data = export_zip(runs, ExportChoice(items=("fingerprint",), figure_formats=(),
                                         table_formats=("csv", "markdown")))
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = archive.namelist()
        listing = json.loads(archive.read("provenance.json"))["files"]
    assert len(names) == len(set(names)) == 7  # 3 runs x 2 tables + provenance.json
    assert {entry["run"] for entry in listing} == {"x/y", "x y", "x_y"}


# ------------------------------------------------------------------ NUL and full-width formulas


@pytest.mark.parametrize("name", ["\x00=HYPERLINK(\"https://evil\")", "\uff1dcmd|' /C calc'!A0",
                                  "\uff0b1", "\uff0d1", "\uff20SUM(A1)"])
def test_nul_and_full_width_formula_starts_are_neutralised(name) -> None:
    assert neutralise_cell(name) == "'" + name and restore_cell(neutralise_cell(name)) == name
    text = export.to_csv(_table([name, "ok\x00inside"]))
    assert "\x00" not in text  # never a raw NUL in a cell
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[1][0] == "'" + name.replace("\x00", "\\x00")
    assert rows[2][0] == "ok\\x00inside"


def test_a_category_with_nul_and_its_escape_keeps_both_rows() -> None:
    frame = _table(["a\x00", "a\\x00"])
    frame["model"] = frame["model"].astype("category")
    rows = list(csv.reader(io.StringIO(export.to_csv(frame))))
    assert [r[0] for r in rows[1:]] == ["a\\x00", "a\\x00"]


_CELLS = st.one_of(
    st.sampled_from(["=1+1", "+x", "-y", "@z", "\tt", "\rr", "a\x00b", "\u202eevil", "'=q",
                     "plain", "", " ", "＝full"]),
    st.text(max_size=6), st.none(), st.just(float("nan")), st.booleans(),
    st.integers(-3, 3), st.floats(allow_nan=False, allow_infinity=False, width=16),
    st.just(["=1", 2]))


@settings(max_examples=150, deadline=None)
@given(cells=st.lists(_CELLS, max_size=30), as_string=st.booleans())
def test_neutralised_is_csv_cell_on_every_cell(cells, as_string) -> None:
    """``export.neutralised`` (each distinct value once) writes what ``csv_cell`` writes cell
    by cell, in object and string columns: 1, 1.0 and True (one key to ``factorize``) stay
    themselves, missing cells stay missing, an object column's type is what mapping infers
    and a text column stays text."""
    from kbench_core.text import csv_cell

    if as_string:
        cells = [c if isinstance(c, str) else None for c in cells]
        column = pd.Series(cells, dtype="str")
    else:
        column = pd.Series(cells, dtype=object)
    got = export.neutralised(pd.DataFrame({"c": column}))["c"]
    want = column.map(csv_cell)
    # text stays text (mapping an all-missing text column gave pandas' null type)
    assert got.dtype == (column.dtype if as_string else want.dtype)
    for left, right in zip(got.tolist(), want.tolist(), strict=True):
        if right is None or (isinstance(right, float) and right != right) or right is pd.NA:
            assert left is None or left is pd.NA or (isinstance(left, float) and left != left)
        else:
            assert type(left) is type(right) and left == right
