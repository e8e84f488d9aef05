"""A bias run an engine reduced stays its distinct tuples with their counts as weights (issue
25): in the app's workspace, ``kbench figures`` and ``kbench report``. Every reader of a bias
frame weighs its rows by the counts, so each number equals the one of the rows repeated
(pandas' own ``Index.repeat``, the frame the memory engine would hold) at 1e-9; the
drill-down fetches the text the small table lacks through the engine, capped."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from kbench_app import cache, state
from kbench_app.registry import RunRegistry
from kbench_core import engines, io, kahne
from kbench_core.engines import reduce
from kbench_core.families.bias import (
    TRIAL_GRAIN_REFUSED,
    FingerprintOptions,
    _notes,
    _unavailable,
    bias_effects,
    per_item,
    susceptibility_table,
    trial_grain_refusal,
)
from kbench_core.kahne import WEIGHT
from kbench_core.workspace import Workspace
from tests.conftest import bias_page, count_calls

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data" / "bias.csv"
# the real KahneBench results files that are trial runs (the fingerprints are reports)
REAL = [p for p in sorted((ROOT.parent / "shared" / "formats" / "kahnebench").glob("*.json"))
        if io.load_run(p).kind == "bias"]
TOL = dict(rtol=1e-9, atol=1e-9)


def _reduced(frame: pd.DataFrame) -> pd.DataFrame:
    """The family's reduction done by pandas: the read columns grouped, with their counts."""
    cols = reduce.read_columns("bias", list(frame.columns))
    return (frame[cols].groupby(cols, observed=True, dropna=False, sort=False).size()
            .rename(WEIGHT).reset_index())


def _repeated(small: pd.DataFrame) -> pd.DataFrame:
    return small.loc[small.index.repeat(small[WEIGHT])].drop(columns=WEIGHT) \
        .reset_index(drop=True)


def _outputs(frame: pd.DataFrame, options: FingerprintOptions) -> dict[str, object]:
    """Every number the bias page, the figures and the report show of ``frame``."""
    fp = kahne.fingerprint(frame, **options.fingerprint())
    return {
        "fingerprint": fp.biases, "models": fp.models,
        "susceptibility": susceptibility_table(fp),
        "bms": kahne.bms(frame, cap=options.cap), "domain_means": kahne.domain_means(frame),
        "has": kahne.has(frame, threshold=options.threshold, relative=options.relative),
        "cas": kahne.cas(frame), "effects": bias_effects(frame),
        "per_bias": per_item(frame).loc[lambda f: f["condition"] == "treatment − control",
                                        ["model", "bias", "treatment_minus_control"]]
        .astype({"model": str, "bias": str}).reset_index(drop=True),
        "scored_share": kahne.scored_share(frame), "rows": kahne.rows_of(frame),
        "notes": _notes(frame), "unavailable": _unavailable(frame),
    }


def _assert_same(weighted: pd.DataFrame, repeated: pd.DataFrame,
                 options: FingerprintOptions | None = None) -> None:
    options = options or FingerprintOptions()
    left, right = _outputs(weighted, options), _outputs(repeated, options)
    for name, value in right.items():
        got = left[name]
        if isinstance(value, pd.DataFrame):
            pd.testing.assert_frame_equal(got.reset_index(drop=True),
                                          value.reset_index(drop=True), check_dtype=False,
                                          check_categorical=False, obj=name, **TOL)
        else:
            assert got == value, name


# -------------------------------------------------------------- the weights, row by row

_BIASES = ["anchoring_effect", "loss_aversion", "framing_effect", "availability_bias"]


@st.composite
def _bias_frames(draw) -> pd.DataFrame:
    n = draw(st.integers(4, 60))
    rows = []
    for trial in range(n):
        condition = draw(st.sampled_from(["control", "treatment", "treatment", "debiasing"]))
        rows.append({
            "model": draw(st.sampled_from(["m1", "m2", "m3"])),
            "bias": draw(st.sampled_from(_BIASES)),
            "condition": condition,
            "intensity": (draw(st.sampled_from(["weak", "moderate", "strong", "adversarial"]))
                          if condition == "treatment" else None),
            "method": draw(st.sampled_from(["warning", "debiasing_0"]))
            if condition == "debiasing" else None,
            "domain": draw(st.sampled_from(["finance", "health"])),
            "trial": trial,
            "score": draw(st.sampled_from([0.0, 1.0, 1.0, 0.5, np.nan])),
            "confidence": draw(st.sampled_from([np.nan, 0.2, 0.9])),
        })
    # each row drawn 1-4 times, as trials of one cell repeat the same answer
    reps = draw(st.lists(st.integers(1, 4), min_size=n, max_size=n))
    frame = pd.DataFrame(rows).loc[lambda f: f.index.repeat(reps)].reset_index(drop=True)
    frame["trial"] = np.arange(len(frame))
    return io.load_run(("drawn.csv", frame.to_csv(index=False).encode())).frame


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=_bias_frames(), capped=st.booleans(), relative=st.booleans())
def test_a_random_bias_frame_equals_its_reduction(frame, capped, relative):
    """Any bias frame against its distinct tuples with counts: the same fingerprint,
    susceptibility, BMS curves, domain means, HAS, CAS, effects and scored share."""
    small = _reduced(frame)
    options = FingerprintOptions(capped=capped, relative=relative, threshold=0.15)
    _assert_same(small, frame, options)
    # the repeat of the small table is the same multiset of rows
    _assert_same(small, _repeated(small), options)


def test_weighted_counts_by_hand():
    """Two tuples standing for 3 and 1 responses, one unscored: 3 of 4 scored; the effect
    (3·1 + 1·0)/4 ... worked by hand."""
    frame = pd.DataFrame({
        "model": ["m", "m", "m"], "bias": ["anchoring_effect"] * 3,
        "condition": ["treatment", "treatment", "control"],
        "intensity": ["weak", "weak", None], "domain": ["d", "d", "d"],
        "score": [1.0, np.nan, 0.0], WEIGHT: [3, 1, 2]})
    assert kahne.scored_share(frame) == (5, 6)  # 3 + 2 scored of 3 + 1 + 2
    assert kahne.rows_of(frame) == 6
    effects = bias_effects(frame)
    assert effects.loc[0, "n_treatment"] == 3 and effects.loc[0, "n_control"] == 2
    assert effects.loc[0, "effect"] == pytest.approx(1.0 - 0.0)
    assert _notes(frame) == [
        "1 of 6 responses (17%) have no score (unknown, e.g. the answer could not be "
        "extracted); every metric leaves them out and reports the unknown rate"]
    # a weight missing (an uploaded run's rows combined with a weighted one) counts 1
    frame[WEIGHT] = [3, np.nan, 2]
    assert kahne.scored_share(frame) == (5, 6)


def test_a_weighted_frame_has_no_trials_to_compare():
    small = _reduced(io.load_run(SAMPLE).frame)
    table = per_item(small)
    assert set(table["condition"]) == {"treatment − control"}
    assert table["score"].isna().all()  # nothing to pair by trial
    assert trial_grain_refusal(small) == TRIAL_GRAIN_REFUSED
    assert trial_grain_refusal(io.load_run(SAMPLE).frame) is None


# ------------------------------------------------------- the sample and the real runs

@pytest.fixture(scope="module")
def parquet(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("weighted")
    out = {}
    for path in [SAMPLE, *REAL]:
        target = folder / f"{path.stem}.parquet"
        io.load_run(path).frame.to_parquet(target)
        out[path.name] = target
    return out


def test_there_are_real_trial_runs():
    assert {p.name for p in REAL} >= {"results_example.json", "results_list_example.json"}


@pytest.mark.parametrize("options", [FingerprintOptions(), FingerprintOptions(
    capped=False, std="sample", relative=True, threshold=0.3)])
def test_the_engines_weighted_run_equals_the_memory_run(parquet, options):
    for target in parquet.values():
        (memory,) = engines.load(target, engine="memory")
        (small,) = engines.load(target, engine="duckdb", weighted=True)
        assert WEIGHT in small.frame and len(small.frame) <= len(memory.frame)
        assert len(small) == len(memory) == small.meta["rows"]  # Run counts the responses
        assert small.warnings == memory.warnings  # the unscored note, from the weights
        _assert_same(small.frame, memory.frame, options)


def test_a_weighted_run_beside_a_memory_run_counts_its_rows_once_each(parquet):
    """Combined (the page's several runs): the memory run's rows weigh 1."""
    sample, real = parquet["bias.csv"], parquet["results_example.json"]
    (small,) = engines.load(sample, engine="duckdb", weighted=True)
    (mem_sample,) = engines.load(sample, engine="memory")
    (other,) = engines.load(real, engine="memory")
    mixed = io.combine_runs([small, other])
    plain = io.combine_runs([mem_sample, other])
    assert mixed[WEIGHT].dtype == np.int64 and (mixed.loc[mixed["run"] == other.name,
                                                          WEIGHT] == 1).all()
    _assert_same(mixed.drop(columns="run"), plain.drop(columns="run"))


def test_the_profile_of_a_weighted_run_is_the_memory_one(parquet):
    from kbench_core.profile import profile

    (small,) = engines.load(parquet["bias.csv"], engine="duckdb", weighted=True)
    (memory,) = engines.load(parquet["bias.csv"], engine="memory")
    pd.testing.assert_frame_equal(profile([small]), profile([memory]), **TOL)


# ------------------------------------------------------------------------- the CLI

def _files(out: Path) -> dict[str, bytes]:
    stamp = rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|\+00:00)?"
    return {p.name: re.sub(stamp, b"", p.read_bytes()) for p in sorted(out.iterdir())}


def test_figures_and_report_read_the_weighted_table_and_print_the_memory_numbers(
        parquet, tmp_path, monkeypatch, capsys):
    """``kbench figures`` and ``kbench report`` through DuckDB finish weighted (the small
    table, never a frame of every row) and write what the memory engine writes."""
    from kbench_core.cli import main

    finishes: list[bool] = []
    finish = reduce.finish

    def spy(*args, **kwargs):
        finishes.append(bool(kwargs.get("weighted")))
        return finish(*args, **kwargs)

    monkeypatch.setattr(reduce, "finish", spy)
    for name in ("bias.csv", "results_example.json"):
        path = str(parquet[name])
        written = {}
        for engine in ("memory", "duckdb"):
            out = tmp_path / f"{engine}-{name}"
            assert main(["figures", path, "--out", str(out), "--items",
                         "fingerprint,susceptibility", "--engine", engine]) == 0
            written[engine] = _files(out)
        assert written["memory"] and written["duckdb"] == written["memory"]
    assert finishes == [True, True]
    pages = {}
    for engine in ("memory", "duckdb"):
        out = tmp_path / f"report-{engine}.html"
        assert main(["report", str(parquet["bias.csv"]), "--out", str(out),
                     "--engine", engine]) == 0
        pages[engine] = out.read_text("utf-8")
    assert finishes == [True, True, True]
    # the same numbers: every table cell of the report (the figures' ids are random)
    cells = {e: re.findall(r"<td[^>]*>([^<]*)</td>", page) for e, page in pages.items()}
    assert cells["memory"] and cells["duckdb"] == cells["memory"]
    capsys.readouterr()


# ------------------------------------------------------------------------- the app

@pytest.fixture
def saved(bias_workspace, monkeypatch):
    """A workspace holding the bias sample and counters of the engine's reductions
    (``calls["engine"]``, conftest's ``bias_workspace``) and of its text fetches."""
    from kbench_core.engines import rows

    ws, calls = bias_workspace
    count_calls(monkeypatch, rows, "text_rows", calls, "rows")
    return ws, calls


def _caption(at: AppTest) -> str:
    (found,) = [c.value for c in at.caption if "text is shown exactly as uploaded" in c.value]
    return found


def test_the_bias_page_reads_the_small_table_and_widgets_skip_the_engine(monkeypatch,
                                                                         saved) -> None:
    ws, calls = saved
    memory = io.load_run(SAMPLE)
    at = bias_page(monkeypatch, f"--no-samples --workspace {ws} --engine duckdb")
    reg = at.session_state[state.REGISTRY]
    frame = reg.runs["bias"].frame
    small = _reduced(memory.frame)
    assert WEIGHT in frame and len(frame) == len(small) < len(memory.frame)
    assert len(reg.runs["bias"]) == len(memory.frame)
    assert calls["engine"] == 1
    expected = _outputs(memory.frame, FingerprintOptions())["fingerprint"]
    shown = at.dataframe[1].value.set_index(["bias", "model"])
    want = expected.set_index(["bias", "model"]).loc[shown.index]
    for metric in ("bms", "model_rate", "alignment", "n"):
        assert np.allclose(shown[metric].astype(float), want[metric].astype(float),
                           equal_nan=True, **TOL), metric
    models = list(at.multiselect(key="bias_models").value)
    for change in (lambda a: a.toggle(key="bias_cap").set_value(False),
                   lambda a: a.multiselect(key="bias_models").set_value(models[:-1]),
                   lambda a: a.slider(key="bias_threshold").set_value(0.3),
                   lambda a: a.selectbox(key="bias_heat_model").set_value(models[0]),
                   lambda a: a.selectbox(key="bias_curve_bias").set_value(
                       a.selectbox(key="bias_curve_bias").options[-1])):
        change(at).run()
        assert not at.exception, [e.value for e in at.exception]
    assert len(at.dataframe[0].value) == len(models) - 1
    # every change from the cached small table; the drill-down's text fetched once
    assert calls == {"engine": 1, "rows": 1}


def test_the_drill_down_fetches_text_through_the_engine_and_says_when_capped(monkeypatch,
                                                                            saved) -> None:
    from kbench_core.engines import rows

    ws, calls = saved
    memory = io.load_run(SAMPLE).frame
    at = bias_page(monkeypatch, f"--no-samples --workspace {ws} --engine duckdb")
    model = at.selectbox(key="bias_drill_model").value
    bias = at.selectbox(key="bias_drill_bias").value
    want = memory[(memory["model"] == model) & (memory["bias"] == bias)]
    table = at.dataframe[-1].value
    assert calls["rows"] == 1 and len(table) == len(want) > 3
    assert list(table["response"]) == list(want["response"])  # file order, text as stored
    assert _caption(at).startswith(f"{len(want):,} responses")
    # a search is a plain-text filter in the engine
    word = str(want["response"].iloc[0]).split()[0]
    hits = want[want[["prompt", "response", "answer"]].astype(str).apply(
        lambda c: c.str.contains(word, case=False, regex=False)).any(axis=1)]
    at.text_input(key="bias_drill_search").set_value(word.upper()).run()
    assert len(at.dataframe[-1].value) == len(hits)
    # capped: the first rows in file order and the total
    monkeypatch.setattr(rows, "DRILL_LIMIT", 3)
    cache.clear()
    at.text_input(key="bias_drill_search").set_value("").run()
    table = at.dataframe[-1].value
    assert list(table["response"]) == list(want["response"].iloc[:3])
    assert _caption(at).startswith(f"First 3 of {len(want):,} responses")


def test_hostile_text_fetched_by_the_engine_stays_inert(monkeypatch, saved, tmp_path) -> None:
    ws, _ = saved
    hostile = "<script>alert(1)</script> [link](javascript:alert(1)) **bold**"
    frame = pd.read_csv(SAMPLE)
    frame["response"] = hostile
    reg = RunRegistry(workspace=Workspace(ws))
    reg.add_files([("hostile.csv", frame.to_csv(index=False).encode())])
    at = bias_page(monkeypatch, f"--no-samples --workspace {ws} --engine duckdb")
    at.multiselect(key="bias_runs").set_value(["hostile"]).run()
    assert not at.exception
    table = at.dataframe[-1].value
    assert set(table["response"]) == {hostile}  # a dataframe cell: never rendered
    assert not any(hostile in m.value for m in at.markdown)


def test_a_weighted_run_beside_an_uploaded_one_gives_the_memory_fingerprint(
        monkeypatch, saved, tmp_path) -> None:
    ws, calls = saved
    other = ROOT.parent / "shared" / "formats" / "kahnebench" / "results_example.json"
    both = f"--no-samples {other} --workspace {ws}"
    mixed = bias_page(monkeypatch, f"{both} --engine duckdb")
    assert calls["engine"] == 1
    cache.clear()
    plain = bias_page(monkeypatch, f"{both} --engine memory")
    assert calls["engine"] == 1
    for index in (0, 1):
        got, want = mixed.dataframe[index].value, plain.dataframe[index].value
        pd.testing.assert_frame_equal(got, want, check_dtype=False, **TOL)
    # the unscored caption counts responses, not tuples
    notes = [c.value for c in mixed.caption if "have no score" in c.value]
    assert notes == [c.value for c in plain.caption if "have no score" in c.value]


def test_the_export_zip_of_a_weighted_run_holds_the_memory_tables(parquet):
    """Export ZIP (tables, no browser): the same CSV files and provenance as the run loaded
    in memory (the same source SHA-256)."""
    import io as io_
    import json
    import zipfile

    from kbench_core.bundle_export import ExportChoice, export_zip

    (small,) = engines.load(parquet["bias.csv"], engine="duckdb", weighted=True)
    (memory,) = engines.load(parquet["bias.csv"], engine="memory")
    choice = ExportChoice(items=("fingerprint", "susceptibility"), figure_formats=(),
                          table_formats=("csv",))
    files = {}
    for name, run in (("small", small), ("memory", memory)):
        with zipfile.ZipFile(io_.BytesIO(export_zip([run], choice))) as archive:
            files[name] = {n: archive.read(n) for n in archive.namelist()
                           if n.endswith(".csv")}
            files[name]["provenance"] = json.loads(archive.read("provenance.json"))["runs"]
    assert files["memory"] and set(files["small"]) == set(files["memory"])
    assert files["small"].pop("provenance") == files["memory"].pop("provenance")
    for name, data in files["memory"].items():
        stamp = rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|\+00:00)?"
        assert re.sub(stamp, b"", files["small"][name]) == re.sub(stamp, b"", data), name


def test_text_rows_of_a_folder_come_in_file_order_with_their_total(tmp_path):
    from kbench_core.engines import source
    from kbench_core.engines.rows import text_rows

    frame = io.load_run(SAMPLE).frame
    folder = tmp_path / "runs"
    folder.mkdir()
    model, bias = str(frame["model"].iloc[-1]), str(frame["bias"].iloc[-1])
    want = frame[(frame["model"] == model) & (frame["bias"] == bias)]
    split = want.index[len(want) // 2]  # the model x bias's rows in both files
    frame.iloc[:split].to_parquet(folder / "a.parquet")
    frame.iloc[split:].to_parquet(folder / "b.parquet")
    (src,) = source.sources(folder)
    got = text_rows(src, model=model, bias=bias, limit=len(want) - 1)
    assert got.total == len(want) and got.capped
    assert list(got.frame["id"]) == list(want["id"].iloc[:-1])
    none = text_rows(src, model=model, bias=bias, search="no such words anywhere")
    assert none.total == 0 and len(none.frame) == 0 and not none.capped
    with pytest.raises(ValueError, match="-1"):
        text_rows(src, model=model, bias=bias, limit=-1)
