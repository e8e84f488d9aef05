"""A per-trial comparison of a bias run an engine reduced to weighted tuples (issue 25) is
refused with its reason wherever it is asked: every entry point of ``kbench_core.compare``,
``kbench compare`` and the app's Compare panel. Before, the per-item table of such a run
said "0 shared items" and the weighted frame itself was paired as if each tuple were one
trial (a number with no meaning). The bias effect, paired by bias, is still compared, and is
the memory engine's."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from kbench_core import compare, engines, io
from kbench_core.families.bias import TRIAL_GRAIN_REFUSED, TrialGrainRefused
from kbench_core.kahne import WEIGHT

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data" / "bias.csv"
# a released KahneBench results file that is a trial run (two models)
REAL = ROOT.parent / "shared" / "formats" / "kahnebench" / "results_example.json"
EFFECT = "treatment_minus_control"


@pytest.fixture(scope="module")
def parquet(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("cmp_weighted")
    out = {}
    for path in (SAMPLE, REAL):
        target = folder / f"{path.stem}.parquet"
        io.load_run(path).frame.to_parquet(target)
        out[path.name] = target
    return out


def _weighted(path: Path) -> pd.DataFrame:
    (run,) = engines.load(path, engine="duckdb", weighted=True)
    assert WEIGHT in run.frame
    return run.frame


def _two(frame: pd.DataFrame) -> tuple[str, str]:
    models = sorted(map(str, frame["model"].unique()))
    return models[0], models[1]


def _entry_points(table: pd.DataFrame, value: str, a: str, b: str) -> dict:
    """Every public function of kbench_core.compare that reads a frame's rows."""
    return {
        "compare_pair": lambda: compare.compare_pair(table, value, a, b, group="bias",
                                                     cluster="bias"),
        "compare_models": lambda: compare.compare_models(table, value, cluster="bias"),
        "paired_difference": lambda: compare.paired_difference(table, value, a, b),
        "group_differences": lambda: compare.group_differences(table, value, a, b, "bias"),
        "rank_intervals": lambda: compare.rank_intervals(table, value, n_boot=20),
        "item_values": lambda: compare.item_values(table, value),
    }


@pytest.mark.parametrize("name", ["bias.csv", "results_example.json"])
def test_every_entry_point_refuses_the_trials_of_a_weighted_run_with_the_reason(parquet, name):
    weighted = _weighted(parquet[name])
    a, b = _two(weighted)
    table = compare.per_item_values(weighted, "bias")
    # the per-item table (what the CLI and the app compare) and the weighted frame itself
    for frame in (table, weighted):
        for fn_name, call in _entry_points(frame, "score", a, b).items():
            with pytest.raises(TrialGrainRefused) as caught:
                call()
            assert str(caught.value) == TRIAL_GRAIN_REFUSED, fn_name
            # a ValueError, so the callers that skip "nothing to rank" still do
            assert isinstance(caught.value, ValueError)
    assert compare.trial_grain_refusal(table, "score") == TRIAL_GRAIN_REFUSED
    assert compare.trial_grain_refusal(table, EFFECT) is None
    # the reason and what to do instead
    assert "no trials to pair" in TRIAL_GRAIN_REFUSED
    assert "--engine memory" in TRIAL_GRAIN_REFUSED and "bias effect" in TRIAL_GRAIN_REFUSED
    # a model subset of the table is still the table of a weighted run
    subset = table[table["model"].astype(str).isin([a, b])]
    with pytest.raises(TrialGrainRefused):
        compare.compare_pair(subset, "score", a, b)


@pytest.mark.parametrize("name", ["bias.csv", "results_example.json"])
def test_the_bias_effect_of_a_weighted_run_is_the_memory_comparison(parquet, name):
    """Not over-refused: the per-bias effect is compared, with the memory engine's numbers
    (its table's rows are per bias, whatever the grain of the run)."""
    (memory,) = engines.load(parquet[name], engine="memory")
    small = compare.per_item_values(_weighted(parquet[name]), "bias")
    full = compare.per_item_values(memory.frame, "bias")
    a, b = _two(memory.frame)
    got = compare.compare_pair(small, EFFECT, a, b, group="bias", cluster="bias")
    want = compare.compare_pair(full, EFFECT, a, b, group="bias", cluster="bias")
    for field in ("value", "low", "high", "p_value"):
        assert np.isclose(getattr(got.estimate, field), getattr(want.estimate, field),
                          rtol=1e-9, atol=1e-12, equal_nan=True), field
    assert got.verdict == want.verdict
    # the memory frame's own trials: nothing refused
    assert compare.trial_grain_refusal(full, "score") is None
    assert compare.compare_pair(full, "score", a, b).estimate.n > 0


def _printed(argv: list[str], capsys) -> str:
    from kbench_core.cli import main

    capsys.readouterr()
    assert main(argv) == 0
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "<time>", capsys.readouterr().out)


def test_kbench_compare_reads_the_trials_on_an_engine(parquet, capsys):
    """``kbench compare --metric score`` on a Parquet file: the engine keeps the trials, so
    the per-trial comparison is the memory engine's (not refused)."""
    path = str(parquet["bias.csv"])
    args = ["compare", path, "--metric", "score", "--format", "csv"]
    memory = _printed([*args, "--engine", "memory"], capsys)
    assert "model_a" in memory
    assert _printed([*args, "--engine", "duckdb"], capsys) == memory


def test_kbench_compare_refuses_a_weighted_run_with_the_reason(parquet, monkeypatch, capsys):
    """A weighted run reaching ``kbench compare`` (the loader of a caller that asked for
    weights) exits with the reason, instead of printing "0 shared items"."""
    from kbench_core.cli import compare as cli_compare
    from kbench_core.cli import main

    path = parquet["bias.csv"]
    (weighted,) = engines.load(path, engine="duckdb", weighted=True)
    monkeypatch.setattr(cli_compare, "_load_all", lambda *args, **kwargs: [weighted])
    a, b = _two(weighted.frame)
    for extra in ([], ["--models", a, b]):
        with pytest.raises(SystemExit) as caught:
            # --engine memory: through the loading patched above (on DuckDB, the default
            # for Parquet, the engine pairs the trials itself: tests/test_engine_compare.py)
            main(["compare", str(path), "--metric", "score", *extra, "--engine", "memory"])
        assert str(caught.value) == f"kbench: {weighted.name}: {TRIAL_GRAIN_REFUSED}"
    # the bias effect (the default metric) of the same run is compared
    capsys.readouterr()
    assert main(["compare", str(path), "--format", "csv"]) == 0
    assert EFFECT in capsys.readouterr().out


def _panel(frame_path: str, metric: str) -> None:
    """An app page holding the Compare panel of a weighted run's per-item table, asked for
    ``metric`` (what a page's own metric menu might offer)."""
    from kbench_app.compare import compare_panel
    from kbench_core import compare, engines

    (run,) = engines.load(frame_path, engine="duckdb", weighted=True)
    table = compare.per_item_values(run.frame, "bias")
    compare_panel(table, values={"the metric": metric}, group="bias", cluster="bias",
                  key="cmp", noun="items")


def test_the_compare_panel_shows_the_refusal_not_a_verdict(parquet):
    at = AppTest.from_function(_panel, args=(str(parquet["bias.csv"]), "score"),
                               default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert [w.value for w in at.warning] == [TRIAL_GRAIN_REFUSED]
    assert not at.metric and not at.success  # no numbers, no verdict
    assert not any("shared items" in i.value for i in at.info)
    # the bias effect on the same table: a verdict and its numbers
    effect = AppTest.from_function(_panel, args=(str(parquet["bias.csv"]), EFFECT),
                                   default_timeout=60)
    effect.run()
    assert not effect.exception and not effect.warning
    assert {m.label for m in effect.metric} >= {"Difference A − B", "Shared items"}


def test_the_bias_page_never_offers_a_per_trial_metric_on_a_weighted_run(tmp_path,
                                                                          monkeypatch):
    """The Cognitive biases page on a workspace run queried by DuckDB (weighted): its
    Compare panel offers the bias effect only, and shows the memory engine's comparison."""
    from kbench_app import cache, state
    from kbench_app.registry import RunRegistry
    from kbench_core import workspace as ws_module
    from kbench_core.workspace import Workspace

    ws = tmp_path / "ws"
    RunRegistry(workspace=Workspace(ws)).add_files([("bias.csv", SAMPLE.read_bytes())])
    shown = {}
    try:
        for engine in ("duckdb", "memory"):
            ws_module.clear_caches()
            cache.clear()
            state._cached_load.clear()
            monkeypatch.setenv("KBENCH_APP_ARGS", f"--no-samples --workspace {ws} "
                                                  f"--engine {engine}")
            at = AppTest.from_file(str(ROOT / "views" / "bias.py"), default_timeout=90)
            at.run()
            assert not at.exception, [e.value for e in at.exception]
            frame = at.session_state[state.REGISTRY].runs["bias"].frame
            assert (WEIGHT in frame) == (engine == "duckdb")
            assert at.selectbox(key="bias_cmp_metric").options == [
                "bias effect (treatment − control)"]
            assert not at.warning
            shown[engine] = {m.label: m.value for m in at.metric}
    finally:
        ws_module.clear_caches()
        cache.clear()
    assert "Shared items" in shown["duckdb"] and shown["duckdb"] == shown["memory"]
