"""A judged run kept in the engine (``Family.engine_run``, issue 39): ``kbench figures``,
``report`` and ``profile`` of a judged Parquet run through DuckDB or Spark make every catalog
item from the sums the engine returns (the tiers' cells, the calibration bins, κ's joint table
of codes, the fixed versions' per-sample sums), equal to the memory engine's, no answer
fetched."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kbench_core import engines
from kbench_core.engines.cli import load_all
from kbench_core.families import items_for
from tests.engine_queries import assert_asked_once, recorded
from tests.same_objects import assert_same
from tests.test_engine_judged import fixed_run


@pytest.fixture(scope="module")
def run_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("judged_run") / "fixed.parquet"
    fixed_run().to_parquet(path)
    return path


def _refused(*args, **kwargs):
    raise AssertionError("the answers were fetched")


def _asked_again(*args, **kwargs):
    raise AssertionError("the judges' names were queried again")


def _both(path: Path, monkeypatch) -> tuple:
    """The run as memory loads it and as DuckDB keeps it (every size summed, no row
    fetched)."""
    (memory,) = load_all([str(path)], engine="memory")
    monkeypatch.setattr(engines.settings, "JUDGED_RUN_ROWS", 0)
    with monkeypatch.context() as patched:
        patched.setattr("kbench_core.engines.reduce.typed_rows", _refused)
        (summed,) = load_all([str(path)], engine="duckdb", summed=True)
    return memory, summed


# Every option the engine's answers, cells and bins read changed at once (one judge's view
# is each majority run's second view onwards); the defaults: the report below, and the
# cells' tests (tests/test_engine_judged.py).
OPTIONS = {"failed_as": "not_found", "n_bins": 5, "binning": "quantile", "partial_credit": 0.25,
           "judges": "j1,j3", "min_votes": 1}


def test_every_item_of_the_engine_run_is_memory_s(run_path, monkeypatch) -> None:
    """Every catalog item (the tier tables per judge, SUI, difficulty, reliability, fixed
    versions, lucky guesses, prompt types, κ, the judges' spread) made from DuckDB's sums
    equals memory's: the same objects under the same names, numbers at 1e-9."""
    options = OPTIONS
    memory, summed = _both(run_path, monkeypatch)
    assert summed.frame.empty and len(summed) == len(memory)
    assert summed.models == memory.models
    made = 0
    with monkeypatch.context() as patched:
        patched.setattr("kbench_core.engines.reduce.typed_rows", _refused)
        # the run's judges are known once it is opened: no view and no κ asks again
        patched.setattr("kbench_core.engines.judged._judge_names", _asked_again)
        patched.setattr("kbench_core.engines.judged_kappa._judges", _asked_again)
        for item in items_for("judged"):
            mine = list(item.objects(memory.frame, options, meta=memory.meta))
            theirs = list(item.objects(summed.frame, options, meta=summed.meta,
                                       tables=summed.tables))
            assert [stem for stem, _ in theirs] == [stem for stem, _ in mine], item.name
            for (_, left), (_, right) in zip(mine, theirs, strict=True):
                assert_same(left, right, check_dtype=False, check_categorical=False)
            made += bool(mine)
    assert made == len(items_for("judged"))  # every item has something of this run


def _headings(text: str) -> list[str]:
    import html

    return [html.unescape(h) for h in re.findall(r"<h[23][^>]*>(.*?)</h[23]>", text)]


def test_report_on_duckdb_has_every_item_without_fetching_an_answer(run_path, tmp_path,
                                                                    monkeypatch) -> None:
    """``kbench report`` of a judged Parquet run through DuckDB under the default options:
    a section for every catalog item (this run has something for each: the items test
    above), the tier leaderboards first, no answer fetched."""
    from kbench_core.cli import main

    monkeypatch.setattr(engines.settings, "JUDGED_RUN_ROWS", 0)
    monkeypatch.setattr("kbench_core.engines.reduce.typed_rows", _refused)
    with recorded(monkeypatch) as seen:
        main(["report", str(run_path), "--engine", "duckdb", "--out",
              str(tmp_path / "d.html")])
    assert_asked_once(seen)  # the labels, the judges, each view's sums: asked once each
    text = (tmp_path / "d.html").read_text("utf-8")
    headings = _headings(text)
    for item in items_for("judged"):
        assert any(item.title in h for h in headings), item.title
    assert "majority" in text and "Cohen" in text


def test_figures_on_duckdb_refuse_a_judge_the_run_lacks_as_memory_does(run_path, tmp_path,
                                                                       monkeypatch) -> None:
    from kbench_core.cli import main

    messages = []
    monkeypatch.setattr(engines.settings, "JUDGED_RUN_ROWS", 0)
    for engine in ("memory", "duckdb"):
        with pytest.raises(SystemExit) as err:
            main(["figures", str(run_path), "--engine", engine, "--judge", "nobody",
                  "--out", str(tmp_path / engine)])
        messages.append(str(err.value))
    assert messages[0] == messages[1] and "nobody" in messages[0] and "j1" in messages[0]


def test_a_later_query_out_of_memory_names_both_ways_out(run_path, tmp_path,
                                                        monkeypatch) -> None:
    """An engine out of memory while an item sums its cells (after the run was validated and
    kept) is named with the setting and the way around it, as the first read is."""
    from kbench_core.cli import main
    from kbench_core.engines import judged_cells

    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(engines.settings, "JUDGED_RUN_ROWS", 0)
    # the first query of an item's cells: their per-group statistics
    monkeypatch.setattr(judged_cells.EngineCells, "stats", exhausted)
    rows = len(fixed_run())
    with pytest.raises(SystemExit) as err:
        main(["report", str(run_path), "--engine", "duckdb", "--out",
              str(tmp_path / "r.html")])
    said = str(err.value)
    assert "ran out of memory" in said and "KBENCH_DUCKDB_MEMORY" in said
    assert f"KBENCH_JUDGED_RUN_ROWS={rows + 1}" in said
    assert not (tmp_path / "r.html").exists()


def test_a_small_judged_run_is_fetched(run_path) -> None:
    """Below ``KBENCH_JUDGED_RUN_ROWS`` rows the answers are fetched (while the loader can
    hold them: faster, and within DuckDB's memory)."""
    (run,) = load_all([str(run_path)], engine="duckdb", summed=True)
    assert not run.frame.empty and not getattr(run, "tables", None)


def test_cells_past_the_decompressed_limit_are_refused_by_name(run_path, tmp_path,
                                                              monkeypatch) -> None:
    """The limit follows the path: a run kept in the engine is refused when the per-sample
    sums it fetches pass the loader's decompressed-size limit (not when the file does), in
    words naming the sums, the limit and the way out. The profile's bootstrap draws the
    cells, so it fetches them; the report's tiers and bins come back a row per group (or
    group x bin): under a limit just below the profile's cells, the profile is refused and
    the report written (issue 39)."""
    from kbench_core import problems
    from kbench_core.cli import main
    from kbench_core.engines import judged_cells

    monkeypatch.setattr(engines.settings, "JUDGED_RUN_ROWS", 0)
    fetched: dict[str, int] = {}
    bounded = judged_cells.bounded

    def recorded(expr, what, **kwargs):
        out = bounded(expr, what, **kwargs)
        fetched[what] = out.nbytes
        return out

    monkeypatch.setattr(judged_cells, "bounded", recorded)
    main(["profile", str(run_path), "--engine", "duckdb", "--out", str(tmp_path / "p0.csv")])
    monkeypatch.setattr(problems, "DEFAULT_MAX_DECOMPRESSED",
                        fetched["cells (model x sample)"] - 1)
    with pytest.raises(SystemExit) as err:
        main(["profile", str(run_path), "--engine", "duckdb", "--out",
              str(tmp_path / "p.csv")])
    said = str(err.value)
    assert "the engine's cells (model x sample) of this run pass" in said, said
    assert "KBENCH_JUDGED_RUN_ROWS=" in said and not (tmp_path / "p.csv").exists()
    main(["report", str(run_path), "--engine", "duckdb", "--out", str(tmp_path / "r.html")])
    assert (tmp_path / "r.html").stat().st_size > 10_000
