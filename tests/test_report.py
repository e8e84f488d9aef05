"""The HTML report (:mod:`kbench_core.report`): every text free of controls and bidi
overrides (issue 42 item 9), figures stored once and drawn lazily, long sections folded
(issue 37 item 11). The browser side is ``tests/browser/test_report_browser.py``."""

from __future__ import annotations

import io
import json
import re
import unicodedata
from html.parser import HTMLParser

import plotly.graph_objects as go
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from plotly.offline import get_plotlyjs

from kbench_core import samples
from kbench_core.families import items_for
from kbench_core.io import load_run
from kbench_core.report import report_html
from kbench_core.text import escape_controls
from tests.conftest import ROOT

# One of each kind of character that moves, reverses, hides or breaks text: bidi override,
# embedding, isolate and mark, Arabic letter mark, zero-width space and joiner, BOM, soft
# hyphen, word joiner, line and paragraph separators, C0 (ESC, BEL), DEL and C1 (NEL),
# an interlinear annotation and a tag character.
CONTROLS = ("\u202e", "\u202b", "\u2066", "\u2069", "\u200f", "\u061c", "\u200b", "\u200d",
            "\ufeff", "\u00ad", "\u2060", "\u2028", "\u2029", "\x1b", "\x07", "\x7f", "\x85",
            "\ufff9", "\U000e0041")


def _hidden(text: str) -> list[str]:
    """The characters of ``text`` that a reader would not see as written: Cc (but the
    newline and tab of the markup), Cf, Zl, Zp."""
    return sorted({f"U+{ord(ch):04X}" for ch in text
                   if unicodedata.category(ch) in ("Cf", "Zl", "Zp")
                   or (unicodedata.category(ch) == "Cc" and ch not in "\n\t")})


def _parquet_run(frame, name: str):
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), sink)
    return load_run((name, sink.getvalue()))


@pytest.fixture(scope="module")
def controlled_runs() -> list:
    """A bias and a judged run whose model, judge, bias and file names hold every control."""
    bad = "".join(CONTROLS)
    models = [f"gpt{bad}4", f"evil{CONTROLS[0]}model", f"ok{CONTROLS[6]}name"]
    bias = samples.bias_trials(models=models, n_trials=3)
    bias["bias"] = bias["bias"].astype(str) + CONTROLS[0]
    judged = samples.judged_samples(n_samples=10, models=models[:2],
                                    judges=[f"judge{CONTROLS[2]}one", f"judge{bad}two"])
    return [_parquet_run(bias, f"run{CONTROLS[0]}exe.parquet"),
            _parquet_run(judged, f"judged{bad}.parquet")]


def _without_plotly(page: str) -> str:
    script = get_plotlyjs()
    assert page.count(script) == 1  # plotly.js once, inlined: the report opens offline
    return page.replace(script, "")


def test_report_shows_no_control_or_bidi_character(controlled_runs) -> None:
    """Issue 42 item 9: a raw U+202E reached the HTML report (the source line, table cells).
    Every text the report shows (headings, source, notes, tables, figure data, contents,
    provenance) holds none of them; each shows as a visible escape instead."""
    page = _without_plotly(report_html(controlled_runs))
    assert _hidden(page) == []
    assert "gpt\\u202e" in page and "evil\\u202emodel" in page  # shown, escaped
    assert "run\\u202eexe" in page or "runexe" in page  # the run's name (stripped on load)


def test_report_tables_escape_controls_but_keep_plain_names(controlled_runs) -> None:
    page = report_html(controlled_runs[:1])
    cells = re.findall(r"<td>([^<]*)</td>", page)
    assert any(cell.startswith("gpt\\u202e\\u202b") for cell in cells)
    assert "<td>ok\\u200bname</td>" in page


class _Report(HTMLParser):
    """Placeholders (figure number, height), the folded sections they sit in, script
    elements."""

    def __init__(self) -> None:
        super().__init__()
        self.plots: list[tuple[int, int, int]] = []  # (figure, height, details depth)
        self.depth = 0
        self.more = 0
        self.scripts: list[dict] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "details":
            self.depth += 1
        if tag == "details" and attrs.get("class") == "more":
            self.more += 1
        if tag == "div" and "kb-plot" in (attrs.get("class") or ""):
            height = int(re.fullmatch(r"height:(\d+)px", attrs["style"]).group(1))
            self.plots.append((int(attrs["data-fig"]), height, self.depth))
        if tag == "script":
            self.scripts.append(attrs)

    def handle_endtag(self, tag):
        if tag == "details":
            self.depth -= 1


def _resolve(value, shared):
    """The loader's ``resolve`` (``kbench_core.report._LOADER``) in Python."""
    if isinstance(value, list):
        return [_resolve(v, shared) for v in value]
    if isinstance(value, dict):
        if list(value) == ["kbShared"]:
            return _resolve(shared[value["kbShared"]], shared)
        return {k: _resolve(v, shared) for k, v in value.items()}
    return value


def _store(page: str) -> dict:
    text = re.search(r'<script type="application/json" id="kb-figures">(.*?)</script>',
                     page, re.DOTALL).group(1)
    return json.loads(text)


def _escaped(value):
    if isinstance(value, str):
        return escape_controls(value)
    if isinstance(value, list):
        return [_escaped(v) for v in value]
    if isinstance(value, dict):
        return {escape_controls(k): _escaped(v) for k, v in value.items()}
    return value


@pytest.fixture(scope="module")
def sample_runs() -> list:
    return [load_run(path) for path in sorted((ROOT / "sample_data").glob("*.csv"))]


@pytest.fixture(scope="module")
def sample_report(sample_runs) -> str:
    return report_html(sample_runs)


def test_every_figure_is_stored_once_and_resolves_to_itself(sample_runs, sample_report) -> None:
    """Each figure of every run is a placeholder of its own height; the store gives back its
    data and layout exactly (bar kbench's layout notes); no shared value is stored twice;
    no figure is drawn by an inline call (they are drawn as they scroll into view)."""
    outline = _Report()
    outline.feed(sample_report)
    store = _store(sample_report)
    expected = [obj for run in sample_runs for item in items_for(run.kind)
                for _, obj in item.objects(run.frame, meta=run.meta)
                if isinstance(obj, go.Figure)]
    assert [number for number, _, _ in outline.plots] == list(range(len(expected)))
    assert len(store["figures"]) == len(expected) >= 20
    for (number, height, _), fig in zip(outline.plots, expected, strict=True):
        spec = json.loads(fig.to_json())
        spec["layout"].pop("meta", None)
        assert _resolve(store["figures"][number], store["shared"]) == _escaped(spec)
        assert height == int(fig.layout.height or 450)
    texts = [json.dumps(v, sort_keys=True) for v in store["shared"]]
    assert len(texts) == len(set(texts))  # each distinct value once
    # shared values are shared: the figures hold fewer bytes than written one by one
    whole = sum(len(json.dumps(json.loads(f.to_json()))) for f in expected)
    assert len(json.dumps(store)) < 0.8 * whole
    assert sample_report.count("Plotly.newPlot(") == 1  # the loader's one call


def test_report_json_cannot_end_its_script_element() -> None:
    """A name that closes the JSON script element stays data: the store holds no ``<``."""
    evil = ["</script><script>alert(1)</script>", "<!--<script>", "a & b"]
    run = _parquet_run(samples.bias_trials(models=evil, n_trials=3), "x.parquet")
    page = report_html([run])
    text = re.search(r'id="kb-figures">(.*?)</script>', page, re.DOTALL).group(1)
    assert "<" not in text and ">" not in text and "&" not in text
    assert "alert(1)" in text  # the name is there, as escaped data
    assert "<script>alert(1)" not in page


def test_each_run_opens_on_its_headline_the_rest_folded(sample_runs, sample_report) -> None:
    """A run shows its headline (ranking, summary figure); its other items are in one folded
    section that the contents still link into (the loader opens it)."""
    from kbench_core.report import HEADLINE

    outline = _Report()
    outline.feed(sample_report)
    # every sample run but the five-item replication summary has more than its headline
    assert outline.more >= len(sample_runs) - 1
    folded = [depth for _, _, depth in outline.plots]
    assert folded.count(0) <= 2 * len(sample_runs)  # at most the headline figure per run
    assert folded.count(0) >= 1 and sum(1 for d in folded if d) > len(folded) / 2
    for k, run in enumerate(sample_runs):
        head = HEADLINE[run.kind]
        section = sample_report.split(f'<h2 id="run-{k}">')[1].split("<h2 ")[0]
        before = section.split('<details class="more"')[0]
        assert all(f'id="run-{k}-{name}"' in before for name in head if
                   f'id="run-{k}-{name}"' in section)
        assert f'href="#run-{k}-' in sample_report.split("</nav>")[0]
