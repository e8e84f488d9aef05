"""Work done ahead of the user (kbench_app.prefetch), the cache that lets a page wait for it
(kbench_app.cache), and the answers read once for the tiers (kbench_core.vuln.prepare_answers):
what makes another judge and another partial credit quick on a big judged run (issue 25)."""

from __future__ import annotations

import functools
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from kbench_app import cache, prefetch, state
from kbench_core import vuln
from kbench_core.io import load_run
from kbench_core.samples import big_judged_samples
from kbench_core.vuln._prepare import _line_overlap, _line_set

ROOT = Path(__file__).resolve().parent.parent
RECORDS = ROOT.parent / "shared" / "formats" / "blockbench_multi_judge_records.json"


def _runs(name: str = "r") -> list:
    class R:  # what cache.runs_key reads of a run
        content_hash = "h"

    run = R()
    run.name = name  # type: ignore[attr-defined]
    return [run]


# --------------------------------------------------------------- the cache waits, once


def test_two_threads_asking_for_one_result_compute_it_once() -> None:
    cache.clear()
    calls, started = [], threading.Event()

    def slow(x: int) -> int:
        calls.append(x)
        started.set()
        time.sleep(0.3)
        return x * 2

    results: list[int] = []
    first = threading.Thread(target=lambda: results.append(
        cache.cached(slow, runs=_runs(), selection="once", x=21)))
    first.start()
    assert started.wait(5)
    results.append(cache.cached(slow, runs=_runs(), selection="once", x=21))  # waits
    first.join()
    assert results == [42, 42] and calls == [21]


def test_a_failed_computation_wakes_its_waiters_who_meet_the_error_themselves() -> None:
    cache.clear()
    calls, started, release = [], threading.Event(), threading.Event()

    def fails(x: int) -> int:
        calls.append(x)
        started.set()
        release.wait(5)
        raise ValueError("bad input, named")

    errors: list[str] = []

    def first() -> None:
        try:
            cache.cached(fails, runs=_runs(), x=1)
        except ValueError as error:
            errors.append(str(error))

    thread = threading.Thread(target=first)
    thread.start()
    assert started.wait(5)
    waiter = threading.Thread(target=first)
    waiter.start()
    time.sleep(0.1)
    release.set()
    thread.join(5)
    waiter.join(5)
    assert errors == ["bad input, named"] * 2 and calls == [1, 1]
    assert not cache.current_store().pending  # nothing left claimed


def test_a_worker_thread_uses_the_store_it_was_handed() -> None:
    store = cache._Store(4)
    seen = []

    def work() -> None:
        with cache.using(store):
            seen.append(cache.cached(lambda: "v", runs=_runs(), selection="w"))

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(5)
    assert seen == ["v"] and len(store.items) == 1


def test_the_store_keeps_at_most_its_bytes_the_least_recently_used_going_first() -> None:
    store = cache._Store(100, max_bytes=2_500_000)
    mb = np.zeros(125_000)  # 1,000,000 bytes
    for key in "abc":
        store.put(key, mb.copy())
    assert list(store.items) == ["b", "c"] and store.bytes == 2_000_000
    store.get("b")  # used: "c" is now the oldest
    store.put("d", pd.DataFrame({"x": mb}))  # a frame: its column and its index
    assert list(store.items) == ["b", "d"]
    store.put("huge", np.zeros(1_000_000))  # alone over the bound: kept, the rest go
    assert list(store.items) == ["huge"] and store.bytes == 8_000_000
    store.put("huge", np.zeros(10))  # replaced: its weight replaced too
    assert store.bytes == 80


def test_nbytes_counts_arrays_frames_and_containers_not_shared_rows() -> None:
    frame = pd.DataFrame({"x": np.zeros(1000), "y": np.ones(1000, dtype=np.int8)})
    assert cache.nbytes(frame) == 8000 + 1000 + frame.index.nbytes
    assert cache.nbytes({"a": np.zeros(10), "b": (np.zeros(5), "text")}) == 120
    texts = pd.DataFrame({"t": pd.Series(["some text"] * 100, dtype=object)})
    assert cache.nbytes(texts) >= 100 * (8 + 50)  # the pointers and the strings they hold
    ready = vuln.prepare_answers(load_run(ROOT / "sample_data" / "judged.csv").frame,
                                 judge="judge-one")
    assert 0 < cache.nbytes(ready) == cache.nbytes(ready.answers)  # its rows: counted elsewhere


# --------------------------------------------------------------- the worker


def test_the_worker_runs_tasks_in_order_drops_repeats_and_survives_failures(
        monkeypatch) -> None:
    monkeypatch.setenv("KBENCH_PREFETCH", "1")
    assert prefetch.wait_idle(30)
    gate, done = threading.Event(), []
    prefetch.submit("gate", gate.wait)          # holds the worker while tasks queue
    prefetch.submit("a", lambda: done.append("a"))
    prefetch.submit("a", lambda: done.append("a twice"))  # the same key waits already
    prefetch.submit("boom", lambda: 1 / 0)
    prefetch.submit("b", lambda: done.append("b"))
    gate.set()
    assert prefetch.wait_idle(30)
    assert done == ["a", "b"]


def test_at_most_max_pending_tasks_wait_the_oldest_are_dropped(monkeypatch) -> None:
    monkeypatch.setenv("KBENCH_PREFETCH", "1")
    assert prefetch.wait_idle(30)
    gate, done = threading.Event(), []
    prefetch.submit("gate", gate.wait)
    time.sleep(0.1)  # the worker holds the gate: the rest wait
    for i in range(prefetch.MAX_PENDING + 3):
        prefetch.submit(("task", i), functools.partial(done.append, i))
    gate.set()
    assert prefetch.wait_idle(30)
    assert done == list(range(3, prefetch.MAX_PENDING + 3))


def test_a_session_running_its_page_again_drops_only_its_own_waiting_tasks(
        monkeypatch) -> None:
    monkeypatch.setenv("KBENCH_PREFETCH", "1")
    assert prefetch.wait_idle(30)
    worker, gate, done = prefetch._WORKER, threading.Event(), []
    worker.submit("gate", gate.wait, "someone")
    time.sleep(0.1)
    for who in ("alice", "bob", "alice"):
        worker.submit((who, len(done), time.monotonic()),
                      functools.partial(done.append, who), who)
    assert worker.cancel("alice") == 2  # alice's page runs again: her view is gone
    gate.set()
    assert prefetch.wait_idle(30)
    assert done == ["bob"]


def test_a_running_task_stops_before_its_next_result_when_its_page_runs_again(
        monkeypatch) -> None:
    monkeypatch.setenv("KBENCH_PREFETCH", "1")
    assert prefetch.wait_idle(30)
    cache.clear()
    worker, inside, gate, computed = prefetch._WORKER, threading.Event(), threading.Event(), []

    def step(name: str) -> str:
        computed.append(name)
        if name == "first":
            inside.set()
            gate.wait(30)
        return name

    def task() -> None:
        for name in ("first", "second", "third"):
            cache.cached(step, runs=[], selection=("stop test", name), name=name)

    for canceller in ("bob", "alice"):  # another session's page does not stop alice's task
        computed.clear()
        inside.clear()
        gate.clear()
        cache.clear()
        worker.submit(("stop test", canceller), task, "alice")
        assert inside.wait(30)
        worker.cancel(canceller)
        gate.set()
        assert prefetch.wait_idle(30)
        if canceller == "bob":
            assert computed == ["first", "second", "third"]
        else:  # her page ran again: the result in progress ends, the next is not started
            assert computed == ["first"]
    # what it finished stays cached: a page asking for it finds it
    assert cache.cached(step, runs=[], selection=("stop test", "first"), name="first") \
        == "first" and computed == ["first"]
    assert worker.running is None
    cache.clear()


def test_work_ahead_can_be_turned_off(monkeypatch) -> None:
    monkeypatch.setenv("KBENCH_PREFETCH", "0")
    done = []
    prefetch.submit("off", lambda: done.append(1))
    assert prefetch.wait_idle(5) and done == [] and not prefetch.enabled()


# --------------------------------------------------------------- the page


def _page(monkeypatch, tmp_path, calls: list, *, work_ahead: bool) -> AppTest:
    """The Vulnerability page on a run of three judges (plus their majority), bootstrap off
    (as on a big run), every computation of the tiers counted."""
    original = vuln.tiers

    @functools.wraps(original)
    def counted(*args, **kwargs):
        calls.append(threading.current_thread().name)
        return original(*args, **kwargs)

    monkeypatch.setattr(vuln, "tiers", counted)
    monkeypatch.setenv("KBENCH_PREFETCH", "1" if work_ahead else "0")
    path = tmp_path / "three_judges.parquet"
    big_judged_samples(2_700).to_parquet(path)
    monkeypatch.setenv("KBENCH_APP_ARGS", f"--no-samples {path}")
    state._cached_load.clear()
    cache.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("views/vuln.py").run()
    at.toggle(key="vuln_bootstrap").set_value(False).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _board(at: AppTest) -> pd.DataFrame:
    return at.dataframe[0].value.set_index("model")


def test_another_judge_is_found_computed_ahead_and_equals_a_fresh_computation(
        monkeypatch, tmp_path) -> None:
    calls: list[str] = []
    at = _page(monkeypatch, tmp_path, calls, work_ahead=True)
    judges = list(at.selectbox(key="vuln_judge").options)
    assert judges[0] == "majority" and len(judges) == 4
    assert prefetch.wait_idle(60)  # the user reads the page
    ahead = [name for name in calls if name == "kbench-prefetch"]
    assert ahead  # the other judges were computed by the worker
    boards = {}
    for judge in judges[1:]:
        calls.clear()
        at.selectbox(key="vuln_judge").set_value(judge).run()
        assert not at.exception
        assert calls == [], (judge, calls)  # nothing computed: it was ready
        assert at.selectbox(key="vuln_judge").value == judge
        boards[judge] = _board(at)
        assert prefetch.wait_idle(60)
    # the same numbers as a session that computed each judge itself, nothing ahead
    fresh_calls: list[str] = []
    fresh = _page(monkeypatch, tmp_path, fresh_calls, work_ahead=False)
    for judge, board in boards.items():
        fresh.selectbox(key="vuln_judge").set_value(judge).run()
        pd.testing.assert_frame_equal(board, _board(fresh))
    assert "kbench-prefetch" not in fresh_calls


def test_nothing_is_worked_ahead_with_the_bootstrap_on(monkeypatch, tmp_path) -> None:
    calls: list[str] = []
    at = _page(monkeypatch, tmp_path, calls, work_ahead=True)
    assert prefetch.wait_idle(60)
    at.toggle(key="vuln_bootstrap").set_value(True).run()
    calls.clear()
    assert prefetch.wait_idle(60)
    at.run()
    assert prefetch.wait_idle(60)
    assert "kbench-prefetch" not in calls


# --------------------------------------------------------------- answers read once

OPTIONS = st.fixed_dictionaries({
    "partial_credit": st.sampled_from([0.0, 0.25, 0.5, 1.0]),
    "severity_weights": st.sampled_from([None, dict(vuln.SEVERITY_WEIGHTS)]),
    "zero_division": st.sampled_from([0.0, np.nan]),
    "n_bins": st.integers(2, 15),
    "binning": st.sampled_from(["uniform", "quantile"]),
    "no_target_reasoning": st.sampled_from(["zero", "renormalise"]),
})


@pytest.fixture(scope="module")
def records() -> pd.DataFrame:
    return load_run(RECORDS).frame


@settings(max_examples=25, deadline=None)
@given(options=OPTIONS, by=st.sampled_from([("model",), ("model", "prompt_type")]),
       source=st.sampled_from(["sample", "records"]))
def test_tiers_of_prepared_answers_equal_the_tiers_of_the_frame(options, by, source,
                                                                records) -> None:
    frame = (load_run(ROOT / "sample_data" / "judged.csv").frame if source == "sample"
             else records)
    judge = vuln.judges_of(frame)[-1]
    ready = vuln.prepare_answers(frame, by=by, judge=judge)
    direct = vuln.tiers(frame, by=by, judge=judge, **options)
    pd.testing.assert_frame_equal(vuln.tiers(ready, by=by, **options), direct,
                                  check_exact=True)


def test_prepared_answers_with_the_bootstrap_equal_the_frame(records) -> None:
    judge = vuln.judges_of(records)[0]
    ready = vuln.prepare_answers(records, judge=judge)
    kwargs = dict(ci="bootstrap", n_boot=50, random_state=3, partial_credit=0.5)
    pd.testing.assert_frame_equal(vuln.tiers(ready, **kwargs),
                                  vuln.tiers(records, judge=judge, **kwargs), check_exact=True)


def test_prepared_answers_refuse_another_grouping_or_judge(records) -> None:
    judges = vuln.judges_of(records)
    ready = vuln.prepare_answers(records, judge=judges[0])
    with pytest.raises(ValueError, match=r"prepared with by=\['model'\] and judge"):
        vuln.tiers(ready, by=("model", "prompt_type"))
    with pytest.raises(ValueError, match="prepare them again"):
        vuln.tiers(ready, judge=judges[1])
    with pytest.raises(ValueError, match="judges"):  # several judges: choose one
        vuln.prepare_answers(records)


# --------------------------------------------------------------- line overlap, eligible rows

LINES = st.one_of(st.none(), st.just(float("nan")), st.just(""),
                  st.lists(st.integers(1, 9), max_size=4).map(
                      lambda v: ";".join(map(str, v))),
                  st.sampled_from(["3, 4", "x;2", " 5 ;6"]))


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(st.tuples(LINES, LINES, st.booleans()), min_size=1, max_size=30),
       categorical=st.booleans())
def test_line_overlap_equals_a_row_by_row_reading(rows, categorical) -> None:
    claimed = pd.Series([r[0] for r in rows], dtype=object)
    true = pd.Series([r[1] for r in rows], dtype=object)
    if categorical:
        claimed, true = claimed.astype("category"), true.astype("category")
    eligible = np.array([r[2] for r in rows])
    got = _line_overlap(claimed, true, eligible)
    for i, (c, t, ok) in enumerate(rows):
        known = ok and isinstance(c, str) and isinstance(t, str)
        truth = _line_set(t) if known else frozenset()
        want = len(_line_set(c) & truth) / len(truth) if known and truth else np.nan
        assert (np.isnan(got[i]) and np.isnan(want)) or got[i] == want, (i, c, t, ok)


# --------------------------------------------------------------- tables for display

NUMBERS = st.one_of(st.floats(-1e15, 1e15), st.sampled_from([np.nan, 1e-13, -3e-14, 0.0, 2.0,
                                                             np.inf, 1e300]))


def _shown_column_by_column(frame: pd.DataFrame) -> pd.DataFrame:
    """What kbench_app.ui.shown did before it built the frame at once: pandas, one column at
    a time (residues below TINY to 0; whole counts and ranks an int64 holds to Int64)."""
    from kbench_core.tables import TINY, column_kind

    out = frame.copy()
    for column in out.columns:
        if pd.api.types.is_float_dtype(out[column]):
            values = out[column]
            out[column] = values.mask(values.abs() < TINY, 0.0)
            if column_kind(str(column), values) in ("integer", "rank"):
                whole = out[column].dropna()
                if (whole == whole.round()).all() and (whole.abs() < 2.0 ** 53).all():
                    out[column] = out[column].astype("Int64")
    return out


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.tuples(NUMBERS, NUMBERS, NUMBERS), max_size=6),
       repeated_index=st.booleans())
def test_shown_equals_the_column_by_column_reading(rows, repeated_index) -> None:
    from kbench_app.ui import interval_text, shown

    frame = pd.DataFrame(rows, columns=["sui", "n_samples", "rank"], dtype=float)
    frame["model"] = [f"m{i}" for i in range(len(frame))]
    frame["label"] = frame["model"].astype("category")
    frame["low"] = frame["sui"].astype("Float64")
    if repeated_index:
        frame.index = [7] * len(frame)
    before = frame.copy()
    pd.testing.assert_frame_equal(shown(frame), _shown_column_by_column(frame))
    pd.testing.assert_frame_equal(frame, before)  # (it may be a cached value)
    text = interval_text(frame["sui"], frame["n_samples"])
    assert text.index.equals(frame.index)
    assert ((text == "") == (frame["sui"].isna() | frame["n_samples"].isna())).all()


def test_shown_keeps_a_table_with_repeated_column_names() -> None:
    from kbench_app.ui import shown

    frame = pd.DataFrame([[1e-13, 2.0], [0.5, 3.0]], columns=["n", "n"])
    out = shown(frame)
    assert list(out.columns) == ["n", "n"]
    assert out.iloc[:, 0].tolist() == [0.0, 0.5]
