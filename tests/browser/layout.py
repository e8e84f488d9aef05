"""The figure layout check: every catalog figure (and every figure a page adds), opened in
Chromium and measured from its SVG.

Sizes (:data:`SIZES`): one-column (336 px) and two-column (672 px) paper widths, exported as
``kbench figures --size`` exports them (through
:func:`~kbench_core.figures.base.fit_to_width`); and the app's chart widths as built: the full
main column (940 px) and the narrowest side-by-side column (462 px; small multiples declare the
width their grid needs, and the app shows them in a column at least that wide).

Plotly draws a figure to SVG in the browser (kaleido's static exports use the same plotly.js in
the same Chromium), so the geometry read here is the geometry of the exported PDF. For every
figure the check reads each visible ``<text>`` element's box (``getBBox`` mapped through
``getScreenCTM``, so turned tick labels are measured as the turned rectangles they are, not as
their axis-aligned hull) and reports:

* ``outside``: a text element extends beyond the figure;
* ``overlap``: two of the title, axis titles, tick labels, legend entries, legend title,
  annotations (panel titles, notes) and colour-bar texts overlap (separating-axis test on the two
  rectangles, more than :data:`OVERLAP_TOLERANCE_PX` deep);
* ``hidden``: a legend entry lies outside the legend's visible box (the legend scrolls);
* ``colour``: two legend entries of one figure share colour, marker symbol and line dash;
* ``overlap`` of data labels: text drawn at data points (and heatmap cell numbers) on another
  data label or on a title, tick label, legend entry or annotation;
* ``clipped``: a marker of a clipped trace crosses its plot area's edge by more than
  :data:`MARKER_TOLERANCE_PX` (drawn half, or not at all);
* ``height``: at a paper size, a figure taller than a page (:data:`MAX_HEIGHT`: 9 in = 864 px
  at 96 px per inch, for one and two columns alike).

Runs come from :func:`collect_runs`: the bundled samples, every file or folder of the real data
that :func:`kbench_core.io.load_run` can load today (new importers are picked up with no change
here), the example files of the native formats, and generated runs with 60 models or studies.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

from kbench_core import samples
from kbench_core.catalog import paged
from kbench_core.export import PAPER_SIZES
from kbench_core.families import items_for
from kbench_core.figures.base import fit_to_width
from kbench_core.io import Run, RunFormatError, load_run
from tests.conftest import ROOT

# One-column and two-column paper widths (exported: laid out for the width by fit_to_width),
# and the app's chart widths as built: the full main column and the narrowest side-by-side
# column of the pages (measured at a 1400 px window: 940 and 462 px).
SIZES: dict[str, int] = {"one-column": PAPER_SIZES["one-column"][0],
                         "two-column": PAPER_SIZES["two-column"][0],
                         "app": 940, "app-column": 462}
RAW = ("app", "app-column")  # sizes at which the figure is shown as built
DEFAULT_HEIGHT = PAPER_SIZES["screen"][1]  # what kaleido uses for a figure without a height
OVERLAP_TOLERANCE_PX = 1.0
OUTSIDE_TOLERANCE_PX = 1.0
MANY = 60  # models or studies of the generated runs
# Figures per catalog item checked on a generated run (see catalog_figures): an item that
# draws one figure per model draws 60 of one shape, with names of one length, so the first
# stands for the rest (3 of them cost CI a minute for nothing the first did not show)
PER_ITEM_GENERATED = 1
# The tallest a figure exported at a paper size may be: a page's text block is about 9 in
# high in one- and two-column templates alike (US letter with 1 in margins, A4 similar), i.e.
# 864 CSS px at 96 px per inch. Taller figures split into pages or switch to a denser form.
MAX_HEIGHT: dict[str, int] = {"one-column": 864, "two-column": 864}
MARKER_TOLERANCE_PX = 1.5  # a marker may be cut by this much at the plot area's edge
# Tick labels of two axes (side by side) closer than this read as one label: a word space
# is 3-4 px at 12 px type, so labels this close look like the digits of one number.
ADJACENT_PX = 8.0
# An axis range may reach this share of its span beyond 0 where no value is (and beyond 1 on
# shares) before its empty part counts as wasted width (room for value labels is below it).
EMPTY_RANGE_SHARE = 0.15


def real_data_dirs() -> list[Path]:
    """Folders of real benchmark output: ``$KBENCH_REAL_DATA``, ``sample_data/real`` and the
    shared checkout's ``data/real`` next to the repository, those that exist."""
    candidates = [os.environ.get("KBENCH_REAL_DATA", ""), ROOT / "sample_data" / "real",
                  ROOT.parent / "shared" / "data" / "real"]
    seen, out = set(), []
    for candidate in candidates:
        if not candidate:
            continue
        path = Path(candidate).resolve()
        if path.is_dir() and path not in seen:
            seen.add(path)
            out.append(path)
    return out


def _loadable(path: Path) -> Run | None:
    try:
        run = load_run(path)
    except (RunFormatError, OSError, ValueError):
        return None
    return run if items_for(run.kind) else None


def real_runs() -> Iterator[tuple[str, Run]]:
    """Every run the real data yields today: a benchmark folder that loads as one run, else each
    of its files that loads on its own."""
    seen: set[str] = set()  # sample_data/real is a copy of the shared data: check it once
    for base in real_data_dirs():
        for folder in sorted(p for p in base.iterdir() if p.is_dir()):
            whole = _loadable(folder)
            if whole is not None:
                if whole.content_hash not in seen:
                    seen.add(whole.content_hash)
                    yield f"real/{folder.name}", whole
                continue
            for file in sorted(p for p in folder.iterdir() if p.is_file()):
                if file.name in ("LICENSE", "README.md"):
                    continue
                run = _loadable(file)
                if run is not None and run.content_hash not in seen:
                    seen.add(run.content_hash)
                    yield f"real/{folder.name}/{file.name}", run


FORMATS = ROOT / "tests" / "data" / "formats"  # synthetic examples of the native formats


def format_example_runs() -> Iterator[tuple[str, Run]]:
    """The small native-format examples: the copy shipped in ``tests/data/formats`` (synthetic
    files, so the check runs without the shared checkout), then any others next to the real
    data (``../formats``), each content once, those that load."""
    seen: set[str] = set()
    bases = [FORMATS, *(base.parent.parent / "formats" for base in real_data_dirs())]
    for formats in bases:
        if not formats.is_dir():
            continue
        for path in sorted(formats.iterdir()):
            if path.name.startswith(("README", "LICENSE")):
                continue
            run = _loadable(path)
            if run is not None and run.content_hash not in seen:
                seen.add(run.content_hash)
                yield f"formats/{path.name}", run


def sample_runs() -> Iterator[tuple[str, Run]]:
    for path in sorted((ROOT / "sample_data").glob("*.csv")):
        yield f"sample/{path.name}", load_run(path)


def _run_of(name: str, frame) -> Run:
    folder = Path(os.environ.get("KBENCH_ARTIFACTS", ROOT / "test-artifacts")) / "layout-runs"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.parquet"
    frame.to_parquet(path)
    return load_run(path)


def generated_runs() -> Iterator[tuple[str, Run]]:
    """Runs with :data:`MANY` models, biases, studies or configurations (seeded)."""
    models = [f"synthetic-model-{i:02d}" for i in range(MANY)]
    biases = [b for group in samples._TAXONOMY.values() for b in group][:MANY]
    yield "generated/bias-60-models", _run_of("bias-60-models", samples.bias_trials(
        models=models, biases=samples.SAMPLE_BIASES[:2], n_trials=2))
    yield "generated/bias-60-biases", _run_of("bias-60-biases", samples.bias_trials(
        biases=biases, domains=samples.DOMAINS[:2], n_trials=2))
    yield "generated/replication-60-models", _run_of("replication-60-models",
                                                     samples.replication_tests(models=models))
    yield "generated/replication-60-studies", _run_of(
        "replication-60-studies", samples.replication_tests(n_studies=MANY))
    yield "generated/summary-60-configs", _run_of("summary-60-configs", samples.replication_summary(
        configs=[f"synthetic-agent-{i:02d}-persona" for i in range(MANY)], n_studies=12))
    yield "generated/summary-60-studies", _run_of("summary-60-studies", samples.replication_summary(
        n_studies=MANY))
    yield "generated/judged-60-detectors", _run_of("judged-60-detectors", samples.judged_samples(
        models=[f"synthetic-detector-{i:02d}" for i in range(MANY)], n_samples=20,
        judges=samples.JUDGES[:2]))
    yield "generated/bias-summary-60-models", _run_of(
        "bias-summary-60-models", samples.bias_reports(
            models=models, biases=samples.SAMPLE_BIASES[:3], n_trials=2))
    yield "generated/judged-fixed-60-detectors", _run_of(
        "judged-fixed-60-detectors", with_fixed_versions(samples.judged_samples(
            models=[f"synthetic-detector-{i:02d}" for i in range(MANY)], n_samples=20,
            judges=samples.JUDGES[:2])))


def with_fixed_versions(frame, seed: int = 0):
    """``frame`` (judged) with ``claims_fixed_target`` on its safe samples, as if they were the
    fixed versions of vulnerable contracts (seeded: each detector claims the fixed bug at its
    own rate), so the fixed-version figures are checked at 60 detectors."""
    import numpy as np

    rng = np.random.default_rng(seed)
    models = sorted(map(str, frame["model"].unique()))
    rate = dict(zip(models, rng.uniform(0.0, 0.9, len(models)), strict=True))
    safe = ~frame["is_vulnerable"].astype(bool).to_numpy()
    draws = rng.random(len(frame)) < frame["model"].astype(str).map(rate).to_numpy()
    claims = pd.array(np.where(safe, draws, False), dtype="boolean")
    claims[~safe] = pd.NA
    return frame.assign(claims_fixed_target=claims)


def collect_runs() -> list[tuple[str, Run]]:
    """Every run the layout check covers, named by origin (``sample/bias.csv``, ...)."""
    return [*sample_runs(), *real_runs(), *format_example_runs(), *generated_runs()]


@dataclass(frozen=True)
class Figure:
    """One catalog figure of one run: ``label`` names it in failures (``run :: stem``)."""

    label: str
    figure: go.Figure


def catalog_figures(name: str, run: Run) -> list[Figure]:
    """Every figure of the run kind's catalog, built from the run."""
    out = []
    # Generated runs: an item that draws one figure per model draws 60 of one shape; the
    # first stands for the rest (PER_ITEM_GENERATED).
    # The pages of one figure (``stem-p4``) are one figure: they share their scales, so a
    # page left out would leave the range check without the values that set the range.
    import re

    cap = PER_ITEM_GENERATED if name.startswith("generated/") else None
    for item in items_for(run.kind):
        if item.what != "figure":
            continue
        seen: list[str] = []
        for stem, obj in item.objects(run.frame, meta=run.meta):
            figure = re.sub(r"-p\d+$", "", stem)
            if figure not in seen:
                seen.append(figure)
            if cap is not None and len(seen) > cap:
                break
            out.append(Figure(f"{name} :: {stem}", obj))
    return out


def page_figures(name: str, run: Run) -> list[Figure]:
    """Figures the pages draw beyond the catalog, built as the pages build them, so they are
    held to the same layout: the comparison panel of every run kind that has one (two models'
    forest plot, the every-pair forest plot, the rank chart), prompt types, agreement per label,
    two judges' confusion, Cohen's kappa with the expert row and Krippendorff's alpha, and the
    figures a page draws with options the catalog leaves at their default (BMS curves of the
    mean score, the domain heatmap with models in rows, the effect scatter by domain and
    overlaid)."""
    from kbench_core import agreement, vuln

    frame, out = run.frame, []
    if run.kind == "judged":
        from kbench_core.figures import agreement as agreement_figures
        from kbench_core.figures import vuln as vuln_figures

        judges = vuln.judges_of(frame)
        one = frame[frame["judge"].astype(str) == judges[0]]
        if "prompt_type" in one and one["prompt_type"].notna().any():
            by_prompt = vuln.tiers(one, by=("model", "prompt_type"))
            out.append(Figure(f"{name} :: page prompt_type_chart",
                              vuln_figures.prompt_type_chart(by_prompt)))
        llm = [j for j in judges if j != "human"]
        if len(llm) >= 2:
            out.append(Figure(f"{name} :: page agreement_bars", agreement_figures.agreement_bars(
                agreement.label_agreement(frame))))
            out.append(Figure(f"{name} :: page confusion_heatmap",
                              agreement_figures.confusion_heatmap(
                                  agreement.confusion(frame, "target_found", llm[0], llm[1]),
                                  llm[0], llm[1], label="target_found")))
            human = (agreement.human_agreement(frame, "target_found") if "human" in judges
                     else None)
            out.append(Figure(f"{name} :: page kappa_heatmap human", agreement_figures
                              .kappa_heatmap(agreement.pairwise_kappa(frame, "target_found"),
                                             human=human, label="target_found")))
            if "rcir" in frame and frame["rcir"].notna().any():
                out.append(Figure(f"{name} :: page kappa_heatmap alpha", agreement_figures
                                  .kappa_heatmap(agreement.pairwise_alpha(frame, "rcir"),
                                                 value="alpha", label="rcir")))
        frame = one  # the comparison panel shows one judge's rows
    out += compare_figures_of(name, run.kind, frame)
    out += option_variants(name, run)
    # a figure taller than a page is checked as the pages kbench exports of it
    # (kbench_core.catalog.paged, what every catalog figure passes through)
    pages = []
    for figure in out:
        parts = paged(figure.figure)
        pages += [Figure(figure.label if len(parts) == 1 else f"{figure.label} p{k}", part)
                  for k, part in enumerate(parts, start=1)]
    return pages


MAX_PAIRS_MODELS = 60  # the every-pair forest plot is built up to this many models


def compare_figures_of(name: str, kind: str, frame) -> list[Figure]:
    """The comparison panel's figures for a run kind with a default comparison, built as
    ``kbench_app.compare`` builds them (its first metric)."""
    from kbench_core import compare
    from kbench_core.figures import compare as compare_figures

    if kind not in compare.COMPARISONS:
        return []
    spec = compare.COMPARISONS[kind]
    data = compare.per_item_values(frame, kind)
    models = sorted(map(str, data["model"].unique()))
    if len(models) < 2:
        return []
    label, value = spec.values[0]
    group = spec.group if spec.group in data.columns else (spec.cluster or spec.group)
    cluster = spec.cluster if spec.cluster in data.columns else None
    out = []
    a, b = models[0], models[1]
    groups = compare.group_differences(data, value, a, b, group)
    if groups["delta"].notna().any():
        out.append(Figure(f"{name} :: page forest_plot", compare_figures.forest_plot(
            groups, label=group, what=f"{a} − {b}",
            title=f"{label}, {a} − {b} by {group.replace('_', ' ')}")))
    if len(models) <= MAX_PAIRS_MODELS:
        pairs = compare.compare_models(data, value, cluster=cluster)
        shown = pairs.assign(pair=pairs["model_a"] + " − " + pairs["model_b"])
        if shown["delta"].notna().any():
            out.append(Figure(f"{name} :: page pairs_forest", compare_figures.forest_plot(
                shown, label="pair", what="A − B",
                title=f"{label}: every pair of models ({len(shown)} pairs)")))
    ranks = compare.rank_intervals(data, value, n_boot=100, cluster=cluster)
    if ranks is not None and len(ranks):
        lower = compare.is_lower_better(value)
        out.append(Figure(f"{name} :: page rank_chart", compare_figures.rank_chart(
            ranks, best="least biased" if kind.startswith("bias") else "best",
            title=f"{label}: rank with its simultaneous 95% interval "
                  f"({'lower' if lower else 'higher'} is better)")))
    return out


def option_variants(name: str, run: Run) -> list[Figure]:
    """Figures a page draws with an option its catalog item leaves at the default."""
    from kbench_core import figures

    frame, out = run.frame, []
    if run.kind == "bias":
        from kbench_core import kahne

        bias = sorted(map(str, frame["bias"].unique()))[0]
        rows = frame[frame["bias"].astype(str) == bias]
        out.append(Figure(f"{name} :: page bms_curves mean", figures.bms_curves(
            kahne.bms(rows), y="mean", title=f"{bias}: bias by trigger intensity")))
        cells = kahne.domain_means(rows)
        if len(cells):
            out.append(Figure(f"{name} :: page bci_heatmap models", figures.bci_heatmap(
                cells, rows="model", title=f"{bias}: mean treatment score by domain")))
    if run.kind == "replication":
        import numpy as np

        from kbench_core import replication
        from kbench_core.figures import replication as rep_figures

        tests = replication.prepare_tests(frame)
        valid = tests[np.isfinite(tests["d_h"]) & np.isfinite(tests["d_a"])]
        if len(valid):
            weight = replication.structure_weights(valid)
            overall = replication.ecs(tests)
            if "domain" in valid and valid["domain"].notna().any():
                out.append(Figure(f"{name} :: page effect_scatter domain",
                                  rep_figures.effect_scatter(valid.assign(weight=weight),
                                                             overall, color_by="domain")))
            out.append(Figure(f"{name} :: page effect_scatter overlaid",
                              rep_figures.effect_scatter(valid.assign(weight=weight), overall,
                                                         panels=False)))
    return out


def _prop(obj, name: str) -> str | None:
    value = getattr(obj, name, None) if obj is not None and name in obj else None
    return value if isinstance(value, str) else None


def legend_styles(fig: go.Figure) -> list[str]:
    """Two legend entries of one figure that look alike (same colour, symbol and dash):
    one message each."""
    seen: dict[tuple, str] = {}
    problems = []
    for trace in fig.data:
        if trace.showlegend is False or not trace.name:
            continue
        if trace.legendgroup and any(trace.legendgroup == k[4] for k in seen):
            continue  # one entry per legend group
        marker = getattr(trace, "marker", None)
        line = getattr(trace, "line", None)
        color = _prop(marker, "color") or _prop(line, "color")
        if color is None:
            continue  # colour from data (a colour scale): not a categorical palette
        symbol = _prop(marker, "symbol") or ""
        dash = _prop(line, "dash") or ""
        pattern = marker.pattern.shape if marker is not None and "pattern" in marker \
            and isinstance(marker.pattern.shape, str) else ""
        key = (color.lower(), symbol, dash, pattern, trace.legendgroup)
        style = key[:4]
        twin = next((n for k, n in seen.items() if k[:4] == style), None)
        if twin is not None:
            problems.append(f"colour: legend entries {twin!r} and {trace.name!r} share "
                            f"{color} {symbol or ''} {dash or ''}".rstrip())
        seen[key] = str(trace.name)
    return problems


def _numbers(values) -> list[float]:
    """The finite numbers of a trace's array (a list, numpy array or typed-array spec)."""
    import numpy as np

    if values is None or isinstance(values, str | dict):
        return []
    try:
        array = np.asarray(values, dtype=float).ravel()
    except (TypeError, ValueError):
        return []  # categories
    return array[np.isfinite(array)].tolist()


def _axis_values(spec: dict) -> dict[str, list[float]]:
    """Every value drawn on each axis (``xaxis``, ``yaxis2``, ...) of a figure's plotly JSON
    (``fig.to_plotly_json()``: plain dicts, read ~50× faster than the figure's objects):
    points, bar ends (and the bar's base, 0) and error-bar ends."""
    import numpy as np

    out: dict[str, list[float]] = {}
    for trace in spec.get("data", []):
        kind = trace.get("type", "scatter")
        if kind not in ("scatter", "scattergl", "bar") or trace.get("visible") is False:
            continue
        for letter in ("x", "y"):
            ref = trace.get(f"{letter}axis") or letter
            axis = f"{letter}axis{ref[1:]}"
            values = _numbers(trace.get(letter))
            error = trace.get(f"error_{letter}") or {}
            if values and error.get("visible") is not False and \
                    error.get("array") is not None:
                base = np.asarray(trace.get(letter), dtype=float)
                plus = np.asarray(error["array"], dtype=float)
                minus = (np.asarray(error["arrayminus"], dtype=float)
                         if error.get("arrayminus") is not None else plus)
                values += _numbers(base + plus) + _numbers(base - minus)
            if kind == "bar" and values and \
                    (trace.get("orientation") == "h") == (letter == "x"):
                values.append(0.0)
            out.setdefault(axis, []).extend(values)
    return out


Ranged = list[tuple[str, tuple[float, float], list[float]]]


def ranged_values(spec: dict) -> Ranged:
    """(axis, its fixed range, the values drawn on it) of each linear axis with a range, in
    a figure's plotly JSON."""
    layout = spec.get("layout", {})
    out = []
    for axis, values in _axis_values(spec).items():
        layout_axis = layout.get(axis) or {}
        if not values or layout_axis.get("range") is None or \
                layout_axis.get("type") in ("category", "log", "date"):
            continue
        out.append((axis, tuple(float(v) for v in layout_axis["range"]), values))
    return out


def empty_range(pages: list[Ranged]) -> list[str]:
    """Axes whose fixed range reaches past 0 where no value is (a score axis from -0.5 whose
    bars all start at 0), or past 1 on values that are shares, by more than
    :data:`EMPTY_RANGE_SHARE` of its span. Axes with one range (small multiples on shared
    scales, the two axes of a square scatter) are judged on their values together, and so are
    the ``pages`` of one figure (they share their scales; each as :func:`ranged_values`
    gives it); a range centred on 0 (differences) is a choice."""
    by_range: dict[tuple[float, float], tuple[list[str], list[float]]] = {}
    for ranged in pages:
        for axis, key, values in ranged:
            names, pooled = by_range.setdefault(key, ([], []))
            if axis not in names:
                names.append(axis)
            pooled.extend(values)
    problems = []
    for (low, high), (names, values) in by_range.items():
        span = high - low
        if not (span > 0) or abs(low + high) < 1e-9 * span:
            continue
        data_low, data_high = min(values), max(values)
        wasted = max(min(data_low, 0.0) - low, 0.0)
        if data_low >= 0 and data_high <= 1:
            wasted += max(high - 1.0, 0.0)
        if wasted > EMPTY_RANGE_SHARE * span:
            problems.append(f"range: {', '.join(names)} runs [{low:.3g}, {high:.3g}] where the "
                            f"values span [{data_low:.3g}, {data_high:.3g}]: "
                            f"{wasted / span:.0%} of its width holds nothing")
    return problems


def cut_labels(fig: go.Figure, paper: bool) -> list[str]:
    """Category tick labels shown shortened (abbreviated, or cut with "…") where they could
    be whole: turned column labels (their length costs height only), rows tall enough for a
    label in two lines, and, at a paper size (``paper``), rows that could grow to two lines
    with the figure still within a page. Thinner rows (many models, pairs of models) may
    abbreviate what most of their labels share."""
    from kbench_core.figures.labels import display_labels, two_lines_px
    from kbench_core.figures.style import EXPORT_SLACK, PAGE_PX

    meta = fig.layout.meta if isinstance(fig.layout.meta, dict) else {}
    problems = []
    for axis, spec in (meta.get("kbench_ticks") or {}).items():
        shown = fig.layout[axis].ticktext if axis in fig.layout else None
        if shown is None:
            continue
        size = fig.layout[axis].tickfont.size or spec["size"]
        row_px = spec.get("row_px") or (meta.get("kbench_row_px") if axis == "yaxis" else None)
        two = two_lines_px(size)
        room = bool(spec.get("turn")) or (row_px is not None and (
            row_px >= two or (paper and figure_height(fig) + len(spec["labels"]) * (two - row_px)
                              <= PAGE_PX - EXPORT_SLACK // 2)))
        if not room:
            continue
        whole = display_labels([str(label) for label in spec["labels"]])
        cut = [(w, t) for w, t in zip(whole, shown, strict=False)
               if str(t).replace("<br>", "") != w.replace("<br>", "")
               and str(t).replace("<br>", " ") != w]
        if cut:
            w, t = cut[0]
            problems.append(f"cut: {len(cut)} tick label(s) of {axis} shortened, e.g. "
                            f"{w!r} shown as {str(t)!r}")
    return problems


_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8">
<style>body{margin:0;background:#fff} .fig{margin:0 0 24px 0}</style>
<script src="plotly.min.js"></script></head><body></body></html>"""

# Render every figure of a batch, then measure. Returns per figure a list of problems.
_CHECK_JS = r"""
async ({figures, width, overlapTol, outsideTol, markerTol, adjacentPx}) => {
  document.body.innerHTML = '';
  const corners = (el) => {
    const b = el.getBBox(); const m = el.getScreenCTM();
    if (!m || b.width <= 0 || b.height <= 0) return null;
    const pt = (x, y) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f];
    return [pt(b.x, b.y), pt(b.x + b.width, b.y), pt(b.x + b.width, b.y + b.height),
            pt(b.x, b.y + b.height)];
  };
  const hull = (q) => {
    const xs = q.map(p => p[0]), ys = q.map(p => p[1]);
    return {x0: Math.min(...xs), x1: Math.max(...xs), y0: Math.min(...ys), y1: Math.max(...ys)};
  };
  // depth of overlap of two convex quads (separating-axis theorem); <= 0 when apart
  const depth = (a, b) => {
    let best = Infinity;
    for (const q of [a, b]) {
      for (let i = 0; i < 4; i++) {
        const p = q[i], r = q[(i + 1) % 4];
        let ax = r[1] - p[1], ay = p[0] - r[0];
        const len = Math.hypot(ax, ay); if (len === 0) continue; ax /= len; ay /= len;
        const pa = a.map(v => v[0] * ax + v[1] * ay), pb = b.map(v => v[0] * ax + v[1] * ay);
        const o = Math.min(Math.max(...pa), Math.max(...pb)) - Math.max(Math.min(...pa),
                                                                         Math.min(...pb));
        best = Math.min(best, o);
        if (best <= 0) return best;
      }
    }
    return best;
  };
  const visible = (el) => {
    for (let e = el; e && e.nodeType === 1; e = e.parentNode) {
      const s = getComputedStyle(e);
      if (s.display === 'none' || s.visibility === 'hidden' || parseFloat(s.opacity) === 0)
        return false;
    }
    return true;
  };
  // a tick label's group: 'xtick', 'ytick', and 'x2tick', 'y3tick'... for further axes
  const tickOf = (el) => {
    for (let e = el.parentNode; e && e.nodeType === 1; e = e.parentNode)
      if (/^[xy]\d*tick$/.test(e.getAttribute('class') || '')) return e;
    return null;
  };
  const kindOf = (el) => {
    if (el.closest('.hoverlayer')) return null;
    if (el.closest('.g-gtitle')) return 'title';
    if (el.closest('.legend')) {
      if (el.classList.contains('legendtitletext')) return 'legend title';
      return el.closest('.traces') ? 'legend entry' : null;
    }
    if (el.closest('.colorbar')) return 'colour bar';
    if (/^[xy]\d*title$/.test(el.getAttribute('class') || '')) return 'axis title';
    if (tickOf(el)) return 'tick label';
    if (el.closest('.annotation')) return 'annotation';
    if (el.closest('.trace, .textpoint, .heatmaplayer')) return 'data label';
    return 'text';
  };
  const MEASURED = new Set(['title', 'legend title', 'legend entry', 'colour bar', 'axis title',
                            'tick label', 'annotation']);
  const results = [];
  for (const f of figures) {
    const div = document.createElement('div');
    div.className = 'fig';
    document.body.appendChild(div);
    const fig = JSON.parse(f.json);
    fig.layout.width = f.width;
    fig.layout.height = f.height;
    const problems = [];
    try {
      await Plotly.newPlot(div, fig.data, fig.layout, {staticPlot: true});
    } catch (err) {
      results.push([`render: ${err}`]); continue;
    }
    const box = div.querySelector('.main-svg').getBoundingClientRect();
    const texts = [];
    for (const el of div.querySelectorAll('svg.main-svg text')) {
      const content = (el.textContent || '').trim();
      if (!content || !visible(el)) continue;
      const kind = kindOf(el); if (!kind) continue;
      const q = corners(el); if (!q) continue;
      const tick = tickOf(el);
      // the axis a tick label belongs to ('x2' of the group 'x2tick')
      const axis = tick ? tick.getAttribute('class').replace(/tick$/, '') : '';
      const turn = /rotate\((-?[\d.]+)/.exec(el.getAttribute('transform') || '');
      texts.push({el, kind, q, h: hull(q), axis, content,
                  turned: !!turn && Math.abs(parseFloat(turn[1])) > 1,
                  lines: el.querySelectorAll('tspan.line').length,
                  text: content.length > 40 ? content.slice(0, 39) + '…' : content});
    }
    const name = (t) => `${t.kind} '${t.text}'`;
    for (const t of texts) {
      const out = Math.max(box.left - t.h.x0, t.h.x1 - box.right, box.top - t.h.y0,
                           t.h.y1 - box.bottom);
      if (out > outsideTol && t.kind !== 'legend entry')
        problems.push(`outside: ${name(t)} extends ${out.toFixed(0)} px beyond the figure`);
    }
    const legendBox = div.querySelector('.legend rect.bg');
    if (legendBox) {
      const lb = legendBox.getBoundingClientRect();
      for (const t of texts.filter(t => t.kind === 'legend entry')) {
        const out = Math.max(lb.left - t.h.x0, t.h.x1 - lb.right, lb.top - t.h.y0,
                             t.h.y1 - lb.bottom,
                             box.left - t.h.x0, t.h.x1 - box.right, box.top - t.h.y0,
                             t.h.y1 - box.bottom);
        if (out > outsideTol) problems.push(`hidden: ${name(t)} is outside the visible legend`);
      }
    }
    // tick labels of two axes so close that they read as one ('1' of a score axis and '0'
    // of the cost axis beside it read '10')
    const ticks = texts.filter(t => t.kind === 'tick label');
    for (let i = 0; i < ticks.length; i++) {
      for (let j = i + 1; j < ticks.length; j++) {
        const a = ticks[i], b = ticks[j];
        if (a.axis === b.axis) continue;
        const dx = Math.max(a.h.x0 - b.h.x1, b.h.x0 - a.h.x1);
        const dy = Math.max(a.h.y0 - b.h.y1, b.h.y0 - a.h.y1);
        if ((dy < 0 && dx >= -overlapTol && dx < adjacentPx) ||
            (dx < 0 && dy >= -overlapTol && dy < adjacentPx / 2))
          problems.push(`adjacent: ${name(a)} (${a.axis}) and ${name(b)} (${b.axis}) ` +
                        `${Math.max(dx, dy).toFixed(0)} px apart: they read as one`);
      }
    }
    // a turned tick label in several lines: its second line stands beside it, under the
    // neighbouring column, and reads as that column's label
    for (const t of ticks)
      if (t.turned && t.lines > 1)
        problems.push(`turned: ${name(t)} is turned and in ${t.lines} lines: a line reads ` +
                      `as the label of the next column`);
    // a static figure cannot be hovered: what it says must not depend on hovering
    if (f.paper)
      for (const t of texts)
        if (/\bhover/i.test(t.content))
          problems.push(`hover: ${name(t)} refers to hovering, which a printed figure lacks`);
    const measured = texts.filter(t => MEASURED.has(t.kind));
    for (let i = 0; i < measured.length; i++) {
      for (let j = i + 1; j < measured.length; j++) {
        const a = measured[i], b = measured[j];
        if (a.h.x1 < b.h.x0 || b.h.x1 < a.h.x0 || a.h.y1 < b.h.y0 || b.h.y1 < a.h.y0) continue;
        if (a.el.contains(b.el) || b.el.contains(a.el)) continue;
        const d = depth(a.q, b.q);
        if (d > overlapTol)
          problems.push(`overlap: ${name(a)} and ${name(b)} (${d.toFixed(0)} px)`);
      }
    }
    // data labels (text drawn at data points, heatmap cell numbers) on each other or on
    // the labelled parts of the figure
    const labels = texts.filter(t => t.kind === 'data label');
    for (let i = 0; i < labels.length; i++) {
      const a = labels[i];
      for (const b of [...labels.slice(i + 1), ...measured]) {
        if (a.h.x1 < b.h.x0 || b.h.x1 < a.h.x0 || a.h.y1 < b.h.y0 || b.h.y1 < a.h.y0) continue;
        const d = depth(a.q, b.q);
        if (d > overlapTol)
          problems.push(`overlap: ${name(a)} and ${name(b)} (${d.toFixed(0)} px)`);
      }
    }
    // the figure's height against a page (paper sizes only)
    if (f.maxHeight && box.height > f.maxHeight + 0.5)
      problems.push(`height: ${box.height.toFixed(0)} px tall, more than a page ` +
                    `(${f.maxHeight} px)`);
    // markers cut by their plot area: a clipped trace whose point crosses the area's edge
    const plots = (div._fullLayout && div._fullLayout._plots) || {};
    let cutMarkers = 0, cutExample = '';
    for (const sp of div.querySelectorAll('.cartesianlayer g.subplot')) {
      const id = [...sp.classList].find(c => c !== 'subplot');
      const pl = plots[id]; if (!pl || !pl.xaxis || !pl.yaxis) continue;
      const xa = pl.xaxis, ya = pl.yaxis;
      const area = {x0: box.left + xa._offset, x1: box.left + xa._offset + xa._length,
                    y0: box.top + ya._offset, y1: box.top + ya._offset + ya._length};
      for (const pt of sp.querySelectorAll('.scatterlayer .trace .points path.point')) {
        let clipped = false;
        for (let e = pt.parentNode; e && e !== sp; e = e.parentNode)
          if (e.getAttribute && (e.getAttribute('clip-path') || '').includes('url')) {
            clipped = true; break;
          }
        if (!clipped || !visible(pt)) continue;
        const r = pt.getBoundingClientRect(); if (r.width === 0 && r.height === 0) continue;
        const cut = Math.max(area.x0 - r.left, r.right - area.x1, area.y0 - r.top,
                             r.bottom - area.y1);
        if (cut > markerTol) {
          cutMarkers += 1;
          if (!cutExample) {
            const tr = pt.closest('.trace');
            const d = tr && tr.__data__ && tr.__data__[0] && tr.__data__[0].trace;
            cutExample = `${d && d.name ? `'${d.name}'` : 'a trace'} (${cut.toFixed(0)} px)`;
          }
        }
      }
    }
    if (cutMarkers)
      problems.push(`clipped: ${cutMarkers} marker(s) cut by the plot area's edge, e.g. ` +
                    cutExample);
    results.push(problems);
    if (!f.keep) Plotly.purge(div);
    if (!f.keep) div.remove();
  }
  return results;
}
"""


def plotly_js_dir(folder: Path) -> Path:
    """A folder holding the page and the plotly.js of the installed ``plotly`` package (the
    one kaleido exports with), written once."""
    from plotly.offline import get_plotlyjs

    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "plotly.min.js"
    if not script.exists():
        script.write_text(get_plotlyjs(), encoding="utf-8")
    (folder / "layout.html").write_text(_PAGE, encoding="utf-8")
    return folder / "layout.html"


def min_width(fig: go.Figure) -> int:
    """The narrowest width a figure as built declares it holds at (small multiples: their
    columns × the panel width); the app shows such figures in columns at least that wide."""
    meta = fig.layout.meta
    return int(meta.get("kbench_min_width", 0)) if isinstance(meta, dict) else 0


def figure_height(fig: go.Figure) -> int:
    return int(fig.layout.height or DEFAULT_HEIGHT)


def check_batch(page, figures: list[Figure], width: int, *, keep: bool = False,
                ) -> dict[str, list[str]]:
    """Problems of each figure rendered ``width`` px wide at its own height (as ``kbench
    figures --size`` exports it, through :func:`~kbench_core.figures.base.fit_to_width`; at
    the app's width as built). ``page`` shows :func:`plotly_js_dir`'s page."""
    raw = width in (SIZES[s] for s in RAW)
    size = next((s for s, w in SIZES.items() if w == width), None)
    fitted = [f.figure if raw else fit_to_width(f.figure, width) for f in figures]
    specs = [fig.to_plotly_json() for fig in fitted]  # the page's JSON and the ranges' values
    payload = [{"json": pio.to_json(spec, validate=False), "height": figure_height(fig),
                "keep": keep, "maxHeight": MAX_HEIGHT.get(size or "", 0), "paper": not raw,
                "width": max(width, min_width(fig)) if raw else width}
               for fig, spec in zip(fitted, specs, strict=True)]
    results = page.evaluate(_CHECK_JS, {"figures": payload, "width": width,
                                        "overlapTol": OVERLAP_TOLERANCE_PX,
                                        "outsideTol": OUTSIDE_TOLERANCE_PX,
                                        "markerTol": MARKER_TOLERANCE_PX,
                                        "adjacentPx": ADJACENT_PX})
    # the pages of one figure (``stem-p2``, ``label p2``) share their scales
    import re

    groups: dict[str, list[Ranged]] = {}
    for figure, spec in zip(figures, specs, strict=True):
        groups.setdefault(re.sub(r"(-| )p\d+$", "", figure.label), []).append(
            ranged_values(spec))
    out = {}
    for figure, fitted_figure, problems in zip(figures, fitted, results, strict=True):
        pages = groups[re.sub(r"(-| )p\d+$", "", figure.label)]
        problems = [*problems, *legend_styles(figure.figure), *empty_range(pages),
                    *cut_labels(fitted_figure, not raw)]
        out[figure.label] = problems
    return out


def screenshots(page, figures: list[Figure], width: int, folder: Path, suffix: str = "",
                ) -> list[Path]:
    """PNG screenshots of the figures as the check renders them (to look at)."""
    folder.mkdir(parents=True, exist_ok=True)
    check_batch(page, figures, width, keep=True)
    paths = []
    for i, figure in enumerate(figures):
        path = folder / (figure.label.replace(" :: ", "__").replace("/", "_") + suffix + ".png")
        page.locator(".fig").nth(i).screenshot(path=str(path))
        paths.append(path)
    return paths


def main() -> None:  # pragma: no cover - a developer's view of the check: `python -m`
    import sys
    import time

    from playwright.sync_api import sync_playwright

    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS

    shots = os.environ.get("LAYOUT_SHOTS")
    only = sys.argv[1:]
    started = time.perf_counter()
    runs = collect_runs()
    built = time.perf_counter()
    page_path = plotly_js_dir(Path("/tmp/kbench-layout"))
    total = failed = 0
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1000, "height": 800})
        page.goto(page_path.as_uri())
        for name, run in runs:
            if only and not any(o in name for o in only):
                continue
            figures = catalog_figures(name, run) + page_figures(name, run)
            for size, width in SIZES.items():
                if shots:
                    screenshots(page, figures, width, Path(shots), f"@{size}")
                result = check_batch(page, figures, width)
                for label, problems in result.items():
                    total += 1
                    if problems:
                        failed += 1
                        print(f"FAIL {label} @ {size}:")
                        for p in problems[:6]:
                            print(f"     {p}")
                        if len(problems) > 6:
                            print(f"     ... {len(problems) - 6} more")
        browser.close()
    print(json.dumps({"combinations": total, "failed": failed,
                      "build_s": round(built - started, 1),
                      "total_s": round(time.perf_counter() - started, 1)}))


if __name__ == "__main__":  # pragma: no cover
    main()
