"""``kbench compare`` after issues 37 (item 6), 42 (items 3 and 9): the headline metric by
default, verdicts in words, unknown and text metrics refused with the quantities the run
has, every pair worded with both intervals named, tiny p as "< 1e-12", and every text a run
supplies escaped in the verdict sentence of each format. Each test fails on the code before
(checked with ``git stash``)."""

from __future__ import annotations

import csv
import html
import io
import re

import markdown_it
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kbench_core import compare, samples
from kbench_core.cli import main
from kbench_core.text import escape_controls, json_quote
from tests.test_export_safety import LINK, PIECES, _is_number, _latex_unescape

JUDGED = "sample_data/judged.csv"


def test_judged_runs_compare_tdr_by_default_in_words(capsys) -> None:
    assert main(["compare", JUDGED, "--models", "synthetic-detector-sharp",
                 "synthetic-detector-timid", "--format", "csv"]) == 0
    out = capsys.readouterr().out
    verdict = out.split("\n", 1)[0]
    # the headline (TDR's per-item target found, on vulnerable samples), said in words
    assert "in TDR (target found, vulnerable samples)" in verdict
    assert "target_found_vulnerable" not in verdict and "in correct" not in verdict
    assert "compare target_found_vulnerable" in out  # the provenance names the column
    # the number is TDR's: target found on vulnerable samples, A − B per (sample, prompt
    # type) averaged, from the majority's rows (the CLI's default judge)
    from kbench_core.families.judged import judge_views
    from kbench_core.io import load_run

    run = load_run(JUDGED)
    ((_, rows),) = judge_views(run.frame, {"judge": "majority"})
    vulnerable = rows[rows["is_vulnerable"].astype(bool)]
    wide = vulnerable.assign(found=vulnerable["target_found"].astype(float)).pivot_table(
        index=["sample", "prompt_type"], columns="model", values="found", observed=True)
    diff = (wide["synthetic-detector-sharp"] - wide["synthetic-detector-timid"]).dropna()
    assert f"= {diff.mean():+.3f} [" in verdict and f"{len(diff)} shared answers" in verdict


def test_an_unknown_metric_lists_the_valid_names(capsys) -> None:
    with pytest.raises(SystemExit) as raised:
        main(["compare", JUDGED, "--metric", "tdr"])
    message = str(raised.value)
    assert "'tdr' is not a column of this run" in message
    assert "target_found_vulnerable (TDR (target found, vulnerable samples))" in message
    assert "correct (correct verdict)" in message


def test_a_text_column_is_refused_listing_the_quantities(capsys) -> None:
    # before: an n = 0 "comparison" with exit 0
    with pytest.raises(SystemExit) as raised:
        main(["compare", "sample_data/bias.csv", "--metric", "response"])
    message = str(raised.value)
    assert "'response' is a text column, not a per-item quantity" in message
    assert "treatment_minus_control (bias effect (treatment − control))" in message
    assert "score" in message and "response;" not in message
    assert capsys.readouterr().out == ""


def _write(frame: pd.DataFrame, path) -> str:
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
    return str(path)


def test_every_pair_is_worded_with_both_intervals_and_tiny_p_is_a_bound(tmp_path,
                                                                         capsys) -> None:
    # three models whose bias effects differ hugely: t p-values far below 1e-12
    frame = samples.bias_trials(models=["m-a", "m-b", "m-c"], n_trials=4)
    rng = np.random.default_rng(0)
    shift = frame["model"].map({"m-a": 0.0, "m-b": 0.45, "m-c": 0.9}).astype(float)
    frame["score"] = np.clip(0.05 + shift + rng.normal(0, 1e-4, len(frame)), 0, 1)
    path = _write(frame, tmp_path / "tiny.parquet")
    assert main(["compare", path, "--metric", "score", "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.split("\n") if line.startswith("| model"))
    assert header.rstrip(" |").endswith("verdict")
    rows = [html.unescape(line) for line in out.split("\n") if line.startswith("| m-")]
    assert len(rows) == 3
    columns = [c.strip() for c in header.strip("|").split(" | ")]
    for row in rows:
        cells = [c.strip() for c in row.strip().strip("|").split(" | ")]
        assert cells[columns.index("p\\_value")] == "< 1e-12"
        assert cells[columns.index("p\\_adjusted")] == "< 1e-12"
    assert all("p < 1e-12" in row and "simultaneous over the 3 pairs" in row for row in rows)
    assert "p = 0" not in out


def test_undecided_pairs_never_show_an_adjusted_interval_excluding_zero() -> None:
    rng = np.random.default_rng(2)
    for seed in range(30):
        rng = np.random.default_rng(seed)
        n, k = 24, 5
        frame = pd.DataFrame({"item": np.tile(np.arange(n), k),
                              "model": np.repeat([f"m{i}" for i in range(k)], n),
                              "group": np.tile(np.repeat(np.arange(8), 3), k),
                              "value": rng.normal(0, 1, n * k)
                              + np.repeat(rng.normal(0, 0.4, k), n)})
        for cluster, values in ((None, "value"), ("group", "value")):
            pairs = compare.compare_models(frame, values, item="item", cluster=cluster)
            undecided = pairs[pairs["direction"] == "undecided"]
            assert ((undecided["delta_adj_low"] <= 0) & (undecided["delta_adj_high"] >= 0)).all()
            # the adjusted interval is at least as wide as the pair's own
            assert (pairs["delta_adj_low"] <= pairs["delta_low"] + 1e-12).all()
            assert (pairs["delta_adj_high"] >= pairs["delta_high"] - 1e-12).all()


# ------------------------------------------------------------ issue 42, item 3: escaping

ISSUE = ["<img src=x onerror=alert(1)> [verify](https://evil.example)",
         "x\\input{/etc/passwd}\\immediate\\write18{rm -rf ~}"]
# every piece of the hostile-names corpus (tests/test_export_safety.py), six to a name, and
# the encoded markup of tests/test_shared_server.py's names
NAMES = ISSUE + ["m" + "".join(PIECES[i:i + 6]) for i in range(0, len(PIECES), 6)] + [
    "&lt;img src=x onerror=alert(1)&gt;", "https&colon;&sol;&sol;evil.example %{x}"]
PAIRS = [(i, i + 1) for i in range(0, len(NAMES) - 1, 2)] + [(len(NAMES) - 1, 0)]


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory) -> tuple[str, list[str]]:
    """The run's path and its model names as the loader keeps them (in NAMES' order)."""
    from kbench_core.io import load_run

    frame = samples.bias_trials(models=NAMES, n_trials=2)
    path = _write(frame, tmp_path_factory.mktemp("hostile") / "hostile.parquet")
    kept = load_run(path).frame["model"].astype(str)
    order = pd.unique(kept)
    assert len(order) == len(NAMES)
    return path, [str(m) for m in order]


def _run(hostile_run, fmt: str, pair, capsys) -> tuple[str, tuple[str, ...]]:
    path, names = hostile_run
    chosen = tuple(names[i] for i in pair) if pair else ()
    models = [f"--model={m}" for m in chosen] if pair else ["--models"]
    assert main(["compare", path, *models, "--format", fmt]) == 0
    return capsys.readouterr().out, chosen


def _one_line(name: str) -> str:
    return escape_controls(re.sub("\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029\t]", " ", name))


@pytest.mark.parametrize("pair", PAIRS)
def test_markdown_verdicts_render_as_text(hostile_run, pair, capsys) -> None:
    out, pair = _run(hostile_run, "markdown", pair, capsys)
    rendered = markdown_it.MarkdownIt("commonmark").enable("table").render(out)
    # the provenance is an HTML comment (tests/test_export_safety.py: nothing ends it early)
    rendered = re.sub(r"<!--.*?-->", "", rendered, flags=re.S)
    assert not LINK.search(rendered) and "<img" not in rendered.lower()
    assert "<script" not in rendered.lower() and 'href="' not in rendered
    paragraph = re.search(r"<p>(.*?)</p>", rendered, re.S).group(1)
    text = html.unescape(paragraph)
    for name in pair:
        assert " ".join(_one_line(name).split()) in " ".join(text.split())


@pytest.mark.parametrize("pair", PAIRS)
def test_latex_verdicts_hold_no_live_control_sequence(hostile_run, pair, capsys) -> None:
    out, pair = _run(hostile_run, "latex", pair, capsys)
    verdict = out.split("\n\n", 1)[0]
    assert "\n" not in verdict  # one paragraph: no line break or comment from a name
    live = verdict.replace(r"\textbackslash{}", "")
    for word in (r"\input", r"\immediate", r"\write", r"\href", r"\url"):
        assert word not in live
    assert "%" not in live.replace(r"\%", "")  # no comment cutting the sentence
    for name in pair:
        assert _one_line(name) in _latex_unescape(verdict)


@pytest.mark.parametrize("pair", [*PAIRS, None])
def test_csv_output_starts_no_formula_and_reads_back(hostile_run, pair, capsys) -> None:
    out, pair = _run(hostile_run, "csv", pair, capsys)
    for row in csv.reader(io.StringIO(out)):
        for cell in row:
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")) or _is_number(cell), \
                cell
    table = pd.read_csv(io.StringIO(out), comment="#")
    if not pair:
        assert len(table) == len(NAMES) * (len(NAMES) - 1) // 2 and "verdict" in table
    else:
        line = out.split("\n", 1)[0]
        assert line.startswith("# verdict: ") and "\r" not in line
        for name in pair:
            assert json_quote(name) in line
