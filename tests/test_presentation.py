"""Round 2 of real use (issue 24): what a figure, a table and a report show a reader.

Items 5 (bold best values only among comparable rows), 6 (paper sizes of vector exports),
7 (one display name per model), 9 (figures that show what they say), 10 (words) and 11 (the
HTML report opens on its contents and headline figures).
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pandas as pd
import pytest

from kbench_core import export

# ------------------------------------------------------------------ 6: paper sizes


def _small_figure():
    import plotly.graph_objects as go

    from kbench_core.figures.base import apply_layout

    fig = go.Figure(go.Scatter(x=[1, 2, 3], y=[0.2, 0.5, 0.4], name="model-a"))
    return apply_layout(fig, "A figure for one column")


@pytest.mark.parametrize(("size", "points"), [("one-column", 252), ("two-column", 504)])
def test_vector_exports_have_the_paper_width_whatever_the_png_scale(exporter, size, points,
                                                                     tmp_path) -> None:
    """3.5 in = 252 pt (one column), 7 in = 504 pt (two columns); ``scale`` (PNG density,
    the CLI's default 2) must not double a PDF or an SVG."""
    from pypdf import PdfReader

    width_px = export.PAPER_SIZES[size][0]
    pdf = exporter.to_bytes(_small_figure(), "pdf", width=width_px, scale=2.0)
    box = PdfReader(io.BytesIO(pdf)).pages[0].mediabox
    assert float(box.width) == pytest.approx(points, abs=1)
    path = tmp_path / "f.pdf"
    path.write_bytes(pdf)
    if shutil.which("pdfinfo"):  # poppler agrees
        info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True,
                              check=True, timeout=60).stdout
        found = re.search(r"Page size:\s+([\d.]+) x ([\d.]+) pts", info)
        assert found and float(found.group(1)) == pytest.approx(points, abs=1)
    svg = exporter.to_bytes(_small_figure(), "svg", width=width_px, scale=2.0)
    root = ET.fromstring(svg)
    assert float(root.get("width")) == pytest.approx(width_px, abs=0.5)  # CSS px = 1/96 in
    png = exporter.to_bytes(_small_figure(), "png", width=width_px, scale=2.0)
    assert int.from_bytes(png[16:20], "big") == 2 * width_px  # the PNG keeps its density


# ------------------------------------------------------------------ 5: bold best values

def _judged_board() -> pd.DataFrame:
    """7 detectors × 3 judges; grok-4 (5 samples, "few samples") has the highest TDR of all,
    judge "c" is the most lenient, so a single crown over 21 rows would go to judge c."""
    models = [f"model-{k}" for k in range(6)] + ["grok-4"]
    rows = []
    for j, judge in enumerate(["a", "b", "c"]):
        for k, model in enumerate(models):
            few = model == "grok-4"
            rows.append({"model": model, "judge": judge, "n_samples": 5 if few else 120,
                         "few_items": few, "tdr": 0.99 if few else 0.30 + 0.05 * k + 0.2 * j,
                         "fpr": 0.0 if few else 0.40 - 0.03 * k + 0.01 * j})
    return pd.DataFrame(rows)


def test_bold_marks_the_best_per_judge_and_never_a_few_samples_row() -> None:
    board = _judged_board()
    tex = export.to_latex(board, best={"tdr": "max", "fpr": "min"})
    lines = [line for line in tex.splitlines() if line.endswith(r"\\") and "&" in line][1:]
    assert len(lines) == 21
    bold_tdr = [(row.model, row.judge) for row, line in zip(board.itertuples(), lines,
                                                            strict=True)
                if re.search(r"\\textbf\{0\.\d+\}", line.split("&")[4])]
    # by hand: within each judge the highest TDR of the 6 ranked detectors is model-5
    assert bold_tdr == [("model-5", "a"), ("model-5", "b"), ("model-5", "c")]
    assert not any("textbf" in line for line in lines if line.startswith("grok-4"))
    md = export.to_markdown(board, best={"tdr": "max"})
    bold = [line.split("|")[1].strip() + "/" + line.split("|")[2].strip()
            for line in md.splitlines() if "**" in line]
    assert bold == ["model-5/a", "model-5/b", "model-5/c"]


def test_bold_per_bias_in_a_fingerprint_table() -> None:
    table = pd.DataFrame({"model": ["x", "y", "x", "y"],
                          "bias": ["anchoring"] * 2 + ["framing"] * 2,
                          "bms": [0.2, 0.1, 0.9, 0.5]})
    from kbench_core.tables import best_marks

    # lowest BMS per bias: y for anchoring (0.1 < 0.2) and y for framing (0.5 < 0.9)
    assert best_marks(table, {"bms": "min"}) == {"bms": {1, 3}}
    with pytest.raises(ValueError, match="'highest'"):
        best_marks(table, {"bms": "highest"})


# ------------------------------------------------------------------ 11: the HTML report

class _Outline(HTMLParser):
    """Headings, links, plotly figures and table sizes of a report, in document order."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[str, str]] = []
        self.ids: set[str] = set()
        self.links: list[str] = []
        self._heading: str | None = None
        self._rows = 0
        self._in_nav = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "nav":
            self._in_nav = True
        if tag == "a" and self._in_nav and attrs.get("href", "").startswith("#"):
            self.links.append(attrs["href"][1:])
        if tag in ("h2", "h3"):
            self._heading = ""
        if tag == "div" and "plotly-graph-div" in (attrs.get("class") or ""):
            self.events.append(("figure", ""))
        if tag == "table":
            self._rows = 0
        if tag == "tr":
            self._rows += 1

    def handle_endtag(self, tag):
        if tag == "nav":
            self._in_nav = False
        if tag in ("h2", "h3") and self._heading is not None:
            self.events.append((tag, self._heading.strip()))
            self._heading = None
        if tag == "table":
            self.events.append(("table", str(self._rows - 1)))

    def handle_data(self, data):
        if self._heading is not None:
            self._heading += data


@pytest.fixture(scope="module")
def kahnebench_report() -> str:
    from kbench_core.io import load_run
    from kbench_core.report import report_html

    return report_html([load_run("sample_data/real/kahnebench")])


def test_report_opens_on_contents_then_headline_figures(kahnebench_report) -> None:
    outline = _Outline()
    outline.feed(kahnebench_report)
    events = outline.events
    assert events[0] == ("h2", "Contents")  # the first thing after the title
    assert outline.links and set(outline.links) <= outline.ids  # every entry leads somewhere
    assert len(outline.links) >= 6  # the run and its items
    # the 165-row model × bias table is not what the report opens on: a figure and the
    # 11-row model ranking come first, and every figure comes before the long table
    first_content = next(e for e in events if e[0] in ("figure", "table"))
    assert first_content in (("table", "11"), ("figure", ""))
    long_at = next(i for i, e in enumerate(events) if e[0] == "table" and int(e[1]) > 30)
    first_figure = next(i for i, e in enumerate(events) if e[0] == "figure")
    last_figure = max(i for i, e in enumerate(events) if e[0] == "figure")
    assert first_figure < long_at and last_figure < long_at
    assert '<details id="run-0-fingerprint">' in kahnebench_report  # folded, still there


# ------------------------------------------------------------------ 7: one display name per model

def test_display_names_drop_dates_and_keep_provider_family_version() -> None:
    from kbench_core.text import display_names

    names = display_names(["claude-sonnet-4-5-20250929", "gpt-5.2-2025-12-11", "claude-haiku-4-5",
                           "mistralai_mistral_small_creative_temp0.5_v3-human-plus-demo",
                           "gpt-4o-2024-05-13", "gpt-4o-2024-08-06", "x_ai_grok_4.1_fast"])
    assert names["claude-sonnet-4-5-20250929"] == "claude-sonnet-4-5"
    assert names["gpt-5.2-2025-12-11"] == "gpt-5.2"
    assert names["claude-haiku-4-5"] == "claude-haiku-4-5"
    assert names["mistralai_mistral_small_creative_temp0.5_v3-human-plus-demo"] == \
        "mistral-small-creative t0.5 · v3-human-plus-demo"  # the provider said once
    # two snapshots of one model would read the same: both keep their dates
    assert names["gpt-4o-2024-05-13"] == "gpt-4o-2024-05-13"
    assert names["gpt-4o-2024-08-06"] == "gpt-4o-2024-08-06"
    assert names["x_ai_grok_4.1_fast"] == "x_ai_grok_4.1_fast"


def test_humanstudy_configuration_names_read_as_model_and_method() -> None:
    """HumanStudy-Bench's 63 released configuration names: model (family, version, a
    temperature) · prompting method, the provider dropped only where the family names it,
    every name unique and far shorter than the id."""
    import json

    from kbench_core.text import display_names

    path = "sample_data/real/humanstudy-bench/simple_results.json"
    with open(path, encoding="utf-8") as handle:
        configs = list(json.load(handle)["configs"])
    names = display_names(configs)
    assert names["anthropic_claude_haiku_4.5_v1-empty"] == "claude-haiku-4.5 · v1-empty"
    assert names["mistralai_mistral_small_creative_temp0.5_v3-human-plus-demo"] == \
        "mistral-small-creative t0.5 · v3-human-plus-demo"
    assert names["mistralai_mistral_nemo_example-v4"] == "mistral-nemo · example-v4"
    assert names["qwen_qwen3_next_80b_a3b_instruct_v2-human"] == \
        "qwen3-next-80b-a3b-instruct · v2-human"
    assert names["x_ai_grok_4.1_fast_none_v4-background"] == "grok-4.1-fast-none · v4-background"
    assert names["x_ai_grok_4.1_fast_v1-empty"] == "grok-4.1-fast · v1-empty"
    assert names["openai_gpt_oss_20b_v2-human"] == "gpt-oss-20b · v2-human"
    assert names["mixed_models_v3"] == "mixed-models · v3"
    assert len(set(names.values())) == len(configs) == 63
    # a provider no family names stays; ids of other shapes keep the earlier rules
    assert display_names(["acme_widget_7b_v2-human"])["acme_widget_7b_v2-human"] == \
        "acme-widget-7b · v2-human"
    assert display_names(["synthetic-agent-v1-empty"])["synthetic-agent-v1-empty"] == \
        "synthetic-agent-v1-empty"


def test_two_ids_with_one_display_name_are_told_apart() -> None:
    from kbench_core.text import display_names

    ids = ["anthropic_claude_haiku_4.5_v1-empty", "claude_haiku_4.5_v1-empty",
           "claude-haiku-4.5 · v1-empty"]
    names = display_names(ids)
    assert len(set(names.values())) == 3  # never one name for two models
    assert names["claude-haiku-4.5 · v1-empty"] == "claude-haiku-4.5 · v1-empty"


def _shown_labels(fig) -> set[str]:
    """Every label a figure shows, read across its lines (a name wrapped at its separators
    reads as the name)."""
    labels = set()
    for name in fig.layout:
        if name.startswith(("xaxis", "yaxis")) and fig.layout[name].ticktext:
            labels |= {_unwrapped(t) for t in fig.layout[name].ticktext}
    labels |= set(_panel_names(fig))
    labels |= {a.text.split("<br>")[0] for a in fig.layout.annotations
               if a.text and not (a.name or "").startswith("panel-")}
    labels |= {_unwrapped(t.name) for t in fig.data if t.name}
    return labels


def test_every_kahnebench_figure_names_a_model_the_same_recognisable_way() -> None:
    """At one column (336 px) and in the app, each of the 11 KahneBench models reads as its
    display name, whole, wherever a figure names it: legend, tick label, panel title."""
    import plotly.graph_objects as go

    from kbench_core.families import items_for
    from kbench_core.figures.base import fit_to_width
    from kbench_core.io import load_run
    from kbench_core.text import display_names

    run = load_run("sample_data/real/kahnebench")
    models = sorted(map(str, run.frame["model"].unique()))
    shown = display_names(models)
    assert shown["gpt-5.2-2025-12-11"] == "gpt-5.2"
    def cut_of(label: str, name: str) -> bool:  # "c-hai-4-5" is a cut of "claude-haiku-4-5"
        have, full = re.split(r"[-_.]", label), re.split(r"[-_.]", name)
        return len(have) == len(full) and all(f.startswith(h) for h, f in
                                              zip(have, full, strict=True))

    seen: dict[int | None, dict[str, set[str]]] = {None: {}, 336: {}}
    for item in items_for(run.kind):
        if item.what != "figure":
            continue
        for _, fig in item.objects(run.frame, meta=run.meta):
            for width in (None, 336):
                drawn = fig if width is None else fit_to_width(go.Figure(fig), width)
                for label in _shown_labels(drawn):
                    for model in models:
                        if label == model or cut_of(label, shown[model]) or cut_of(label, model):
                            seen[width].setdefault(model, set()).add(label)
    assert set(seen[None]) == set(models)  # every model is named
    for model, labels in seen[None].items():  # in the app: the display name, whole
        assert labels == {shown[model]}, (model, labels)
    for model, labels in seen[336].items():  # one column: whole too (wrapped, never cut)
        assert labels == {shown[model]}, (model, labels)


def _unwrapped(text: str) -> str:
    """A label read across its lines: after a hyphen, underscore or slash the name goes on
    directly, after anything else a space was the break."""
    lines = text.split("<br>")
    out = lines[0]
    for line in lines[1:]:
        out += ("" if out.endswith(("-", "_", "/")) else " ") + line
    return out


def _panel_names(fig) -> list[str]:
    """The model names over the panels of a figure, read across their lines (the lines after
    the name, e.g. "CCC 0.781 ...", left out)."""
    names = []
    for a in fig.layout.annotations:
        if (a.name or "").startswith("panel-"):
            lines = [line for line in a.text.split("<br>") if not line.startswith(("CCC", "ECE"))]
            names.append(_unwrapped("<br>".join(lines)))
    return names


@pytest.mark.parametrize("width", [None, 700, 336])
def test_small_multiple_titles_show_the_whole_display_name_at_every_width(width) -> None:
    """The intensity curves of the 11 KahneBench models: each panel is titled with the
    model's display name, whole (wrapped at its separators or in a smaller font, never
    "cla-haiku-4-5"), in the app and in a one-column export."""
    import plotly.graph_objects as go

    from kbench_core import bias_reports, figures
    from kbench_core.figures.base import fit_to_width
    from kbench_core.text import display_names

    run = _kahnebench()
    table = bias_reports.intensity_table(run.frame)
    fig = figures.bms_curves(table[table["bias"] == "anchoring_effect"], y="mean")
    drawn = fig if width is None else fit_to_width(go.Figure(fig), width)
    names = display_names(sorted(map(str, run.frame["model"].unique())))
    assert sorted(_panel_names(drawn)) == sorted(names.values())
    sizes = {a.font.size for a in drawn.layout.annotations if (a.name or "").startswith("panel")}
    assert len(sizes) == 1 and min(sizes) >= 9  # one size, still legible (9 px at least)


@pytest.mark.parametrize("width", [None, 336])
def test_humanstudy_configurations_read_whole_in_the_leaderboard_and_heat_table(width) -> None:
    """The 63 configurations of HumanStudy-Bench's results: the leaderboard's and the heat
    table's row labels are the display names (claude-haiku-4.5 · v1-empty), whole, in two
    lines at most, one per configuration; the hover keeps the full id."""
    import plotly.graph_objects as go

    from kbench_core import replication
    from kbench_core.figures import replication as rep_figures
    from kbench_core.figures.base import fit_to_width
    from kbench_core.io import load_run
    from kbench_core.text import display_names

    run = load_run("sample_data/real/humanstudy-bench/simple_results.json")
    ids = sorted(map(str, run.frame["model"].unique()))
    names = display_names(ids)
    board = replication.summary_leaderboard(run.frame)
    heat = rep_figures.study_heatmap(replication.study_rows(run.frame), value="pas",
                                     unit="configuration")
    for fig in (rep_figures.summary_leaderboard(board), heat):
        drawn = fig if width is None else fit_to_width(go.Figure(fig), width)
        ticks = drawn.layout.yaxis
        shown = dict(zip(ticks.tickvals, ticks.ticktext, strict=True))
        scored = {i: t for i, t in shown.items() if "(no scores)" not in i}
        assert len(scored) >= 61
        for model_id, text in scored.items():
            assert _unwrapped(text) == names[model_id], (model_id, text)
            assert text.count("<br>") <= 1
        assert len(set(shown.values())) == len(shown)  # never one name for two
    assert names["anthropic_claude_haiku_4.5_v1-empty"] in {
        _unwrapped(t) for t in heat.layout.yaxis.ticktext}


# ------------------------------------------------------------------ 9: figures show what they say

def _kahnebench():
    from kbench_core.io import load_run

    return load_run("sample_data/real/kahnebench")


def test_has_chart_promises_intervals_only_with_intervals_and_names_each_model() -> None:
    from kbench_core import bias_reports, figures

    run = _kahnebench()
    fig = figures.has_chart(bias_reports.alignment_table(run.frame))
    assert "CI" not in fig.layout.yaxis.title.text  # the reports publish no trials
    assert "no intervals" in fig.layout.title.text
    dots = [t for t in fig.data if t.mode == "markers"]
    assert sum(len(t.x) for t in dots) == 165  # 11 models × 15 biases
    assert all(t.error_y.array is None for t in dots)
    # one series per model, named by its display name: each dot says whose it is
    from kbench_core.text import display_names

    names = display_names(sorted(map(str, run.frame["model"].unique())))
    assert sorted(t.name for t in dots) == sorted(names.values())
    looks = {(t.marker.color, t.marker.symbol) for t in dots}
    assert len(looks) == 11


def test_has_chart_with_trials_draws_its_intervals() -> None:
    from kbench_core import figures, kahne
    from kbench_core.io import load_run

    frame = load_run("sample_data/bias.csv").frame
    fig = figures.has_chart(kahne.has(frame))
    assert "95% CI" in fig.layout.yaxis.title.text
    assert all(t.error_y.array is not None for t in fig.data if t.mode == "markers")


def test_intensity_curves_of_eleven_models_are_small_multiples_without_pale_yellow() -> None:
    from kbench_core import bias_reports, figures

    table = bias_reports.intensity_table(_kahnebench().frame)
    rows = table[table["bias"] == "anchoring_effect"]
    fig = figures.bms_curves(rows, y="mean", title="anchoring")
    assert fig.layout.meta["kbench_panels"]["n"] == 11  # one panel per model
    colors = {t.line.color for t in fig.data if t.mode and "lines" in t.mode}
    assert "#F0E442" not in colors  # Okabe & Ito's yellow is unreadable as a thin line
    # each panel: its model in one strong colour, the ten others in grey behind
    highlighted = [t for t in fig.data if t.mode == "lines+markers"]
    assert len(highlighted) == 11 and {t.line.color for t in highlighted} == {"#0072B2"}
    six = figures.bms_curves(rows[rows["model"].isin(sorted(rows["model"])[:6])], y="mean")
    assert "kbench_panels" not in six.layout.meta  # up to six still share one plot


def test_effect_scatter_legend_marks_no_study_off_scale_and_repeats_no_colour() -> None:
    import numpy as np

    from kbench_core.figures import replication as rep_figures

    rng = np.random.default_rng(3)
    rows = []
    for s in range(12):
        for t in range(5):
            d_h = rng.uniform(-1, 1.5)
            # the first test of four studies lies beyond the axes (|d| > 4)
            d_a = 6.0 if (s < 4 and t == 0) else d_h + rng.normal(0, 0.2)
            rows.append({"model": "m", "study": f"study_{s:02d}", "finding": "f",
                         "test": f"t{s}-{t}", "d_h": d_h, "d_a": d_a})
    fig = rep_figures.effect_scatter(pd.DataFrame(rows))
    studies = [t for t in fig.data if t.showlegend is not False and t.mode == "markers"
               and str(t.name).startswith("study_")]
    assert len(studies) == 12
    for trace in studies:  # the legend shows a trace's first marker
        symbols = trace.marker.symbol
        first = symbols if isinstance(symbols, str) else symbols[0]
        assert "open" not in first, trace.name
    assert len({t.marker.color for t in studies}) == 12
    assert any(t.name and "beyond the axes" in t.name for t in fig.data)
    off = [t for t in fig.data if t.showlegend is False and t.mode == "markers"
           and t.marker.symbol == "triangle-up-open"]
    assert sum(len(t.x) for t in off) == 4  # the four off-scale tests, at the edge


def test_pas_heatmap_is_ranked_by_score_not_alphabet() -> None:
    from kbench_core.figures import replication as rep_figures

    table = pd.DataFrame({"model": ["a-model", "b-model", "c-model"] * 2,
                          "study": ["s1"] * 3 + ["s2"] * 3,
                          "pas": [0.2, 0.9, 0.5, 0.4, 0.7, 0.6]})
    fig = rep_figures.study_heatmap(table, value="pas")
    heat = fig.data[0]
    # mean PAS by hand: b 0.80, c 0.55, a 0.30; studies s2 0.5667 over s1 0.5333
    models, studies = list(heat.x), list(heat.y)
    if models[0].startswith("s"):
        models, studies = studies, models
    assert models == ["b-model", "c-model", "a-model"]
    assert studies == ["s2", "s1"]


def test_humanstudy_heatmap_hover_names_each_study_by_its_title() -> None:
    from kbench_core import replication
    from kbench_core.figures import replication as rep_figures
    from kbench_core.io import load_run

    run = load_run("sample_data/real/humanstudy-bench/simple_results.json")
    studies = replication.study_rows(run.frame)
    fig = rep_figures.study_heatmap(studies.head(40), value="pas")
    cells = [str(c) for row in fig.data[0].customdata for c in row]
    assert any("Measures of Anchoring in Estimation Tasks" in c for c in cells)
    assert "%{customdata}" in fig.data[0].hovertemplate


# ------------------------------------------------------------------ 10: words

INTERNAL = re.compile(r"critique|\(seed\b|\bseed's|review's|\breview B\d|\w\(s\)|"
                      r"\b1 (?:models|runs|"
                      r"files|warnings|answers)\b|no intervals and no bootstrap", re.I)


def _page_words(monkeypatch, view: str) -> list[str]:
    """Every text a page shows (Markdown, captions, boxes, headings, expander and widget
    labels, their help and options), rendered headless by AppTest on the bundled runs
    (the real KahneBench reports and HumanStudy-Bench results among them)."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from kbench_app import state

    monkeypatch.setenv("KBENCH_APP_ARGS", "")
    state._cached_load.clear()
    root = Path(__file__).resolve().parent.parent
    at = AppTest.from_file(str(root / "views" / f"{view}.py"), default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    words = []
    for kind in ("markdown", "caption", "info", "warning", "success", "error", "subheader",
                 "header", "title", "text", "expander"):
        for element in getattr(at, kind, []):
            words.append(str(getattr(element, "value", None) or getattr(element, "label", "")))
    for kind in ("selectbox", "multiselect", "radio", "toggle", "checkbox", "slider",
                 "number_input"):
        for element in getattr(at, kind, []):
            options = getattr(element, "options", None) or []
            words.append(" | ".join([str(element.label), str(element.help or ""),
                                     *map(str, options)]))
    return words


@pytest.mark.parametrize("view", ["bias", "vuln", "runs"])
def test_pages_speak_to_users_not_to_the_developers(monkeypatch, view) -> None:
    words = _page_words(monkeypatch, view)
    assert words
    found = [w[max(0, m.start() - 60):m.end() + 30] for w in words
             for m in INTERNAL.finditer(w)]
    assert not found, found


def test_count_noun_is_singular_for_one() -> None:
    from kbench_core.text import count_noun

    assert [count_noun(n, "model") for n in (0, 1, 2)] == ["0 models", "1 model", "2 models"]
    assert count_noun(1, "study") == "1 study" and count_noun(12, "study") == "12 studies"
    assert count_noun(1_234, "warning") == "1,234 warnings"


def test_validate_says_one_model(tmp_path, capsys) -> None:
    from kbench_core.cli import main

    path = tmp_path / "one.csv"
    path.write_text("model,bias,condition,intensity,domain,score\n"
                    "m1,anchoring_effect,treatment,weak,social,1\n"
                    "m1,anchoring_effect,control,,social,0\n")
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "1 model (" in out and "1 models" not in out


def test_figures_command_one_column_pdf_is_252_points_wide(exporter, tmp_path) -> None:
    """`kbench figures --size one-column` (default --scale 2): PDF 252 pt, SVG 336 px."""
    from pypdf import PdfReader

    from kbench_core.cli import main

    out = tmp_path / "figs"
    assert main(["figures", "sample_data/bias.csv", "--out", str(out), "--size", "one-column",
                 "--format", "pdf,svg", "--items", "has_chart", "--no-tables"]) == 0
    pdf = next(out.glob("*.pdf"))
    assert float(PdfReader(str(pdf)).pages[0].mediabox.width) == pytest.approx(252, abs=1)
    svg = ET.fromstring(next(out.glob("*.svg")).read_bytes())
    assert float(svg.get("width")) == pytest.approx(336, abs=0.5)


def test_per_test_runs_name_humanstudy_studies_by_their_published_titles() -> None:
    """A per-test run (HumanStudy-Bench effect data) has study ids only: the bundled study
    list of the published benchmark titles them in the hover; unknown ids stay as they are."""
    from kbench_core.figures import replication as rep_figures

    tests = pd.DataFrame({"model": "m", "study": ["study_002", "study_002", "my_study"],
                          "finding": "f", "test": ["t1", "t2", "t3"],
                          "d_h": [0.1, 0.5, 0.9], "d_a": [0.2, 0.4, 0.8]})
    assert rep_figures.study_titles(tests) == {
        "study_002": "Measures of Anchoring in Estimation Tasks"}
    fig = rep_figures.effect_scatter(tests)
    hover = {str(line).split("<br>")[1].split(" · ")[0]  # the study, on the second line
             for t in fig.data if t.text is not None for line in t.text}
    assert "study_002 (Measures of Anchoring in Estimation Tasks)" in hover
    assert "my_study" in hover
