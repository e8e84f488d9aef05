"""The drill-down's text fetched through an engine (``kbench_core.engines.rows.text_rows``,
issue 25) finds the rows of a model and a bias as kbench shows them: the loader strips a
label of its surrounding white space (every Unicode white space, Python's ``str.strip``),
writes a number as its text, and the combined view names a model two runs share ``model
(run)``. Spark returns the same rows and total as DuckDB (search, limit, folder). The
expected rows come from the loader (``kbench_core.io.load_run``) filtered by pandas."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from kbench_core import io
from kbench_core.engines import keys, rows, source
from kbench_core.engines.rows import DRILL_LIMIT, text_rows

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data" / "bias.csv"
MODEL, BIAS = "synthetic-alpha", "anchoring_effect"
HOSTILE = "<script>alert(1)</script> [x](javascript:alert(1)) **b** \u202e\x1b[31m 50%_off"


def _raw() -> pd.DataFrame:
    """The sample run as written in a file (pandas' CSV reading: no label stripped)."""
    return pd.read_csv(SAMPLE)


def _padded() -> pd.DataFrame:
    """The sample with ``MODEL`` padded by Unicode white space on every other row (the
    loader shows both as one label) and ``BIAS`` padded on all its rows; hostile text on a
    few of ``MODEL`` × ``BIAS``'s rows."""
    frame = _raw()
    odd = (frame.index % 2 == 1) & (frame["model"] == MODEL)
    frame.loc[odd, "model"] = f"\u3000 {MODEL}\t\u2003"
    frame["bias"] = frame["bias"].replace({BIAS: f"\u00a0{BIAS}  \u205f"})
    cell = (frame["model"].str.strip() == MODEL) & (frame["bias"].str.strip() == BIAS)
    frame.loc[frame.index[cell][:7:3], "response"] = HOSTILE
    return frame


def _expected(path: Path, model: str, bias: str) -> pd.DataFrame:
    """The rows the loader shows under ``model`` × ``bias``, in file order."""
    loaded = io.load_run(path).frame
    return loaded[(loaded["model"].astype(str) == model)
                  & (loaded["bias"].astype(str) == bias)]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("text_rows")
    out = {"padded": folder / "padded.parquet"}
    _padded().to_parquet(out["padded"])
    # a run named r1 (its file's stem) holding a model literally named "MODEL (r1)" beside
    # MODEL: the shown label wins over the combined view's name
    named = _raw()
    named.loc[named.index[(named["model"] == MODEL)][::4], "model"] = f"{MODEL} (r1)"
    out["r1"] = folder / "r1.parquet"
    named.to_parquet(out["r1"])
    # numbers as labels: the loader shows 1.0 as "1" (the engine's text would be "1.0")
    numbers = _raw()
    numbers["model"] = numbers["model"].map({MODEL: 1.0, "synthetic-beta": 2.5,
                                             "synthetic-gamma": 3.0})
    out["numbers"] = folder / "numbers.parquet"
    numbers.to_parquet(out["numbers"])
    # one model x bias of more rows than the drill-down's limit (ids kept unique)
    cell = _padded()
    one = cell[(cell["model"].str.strip() == MODEL) & (cell["bias"].str.strip() == BIAS)]
    many = pd.concat([cell, *[one.assign(id=one["id"] + f"-{k}") for k in range(3)]],
                     ignore_index=True)
    assert len(one) * 4 > DRILL_LIMIT
    out["many"] = folder / "many.parquet"
    many.to_parquet(out["many"])
    # a folder of two files, the model x bias split across them
    runs = folder / "folder"
    runs.mkdir()
    split = int(one.index[len(one) // 2])
    cell.iloc[:split].to_parquet(runs / "a.parquet")
    cell.iloc[split:].to_parquet(runs / "b.parquet")
    out["folder"] = runs
    return out


def _src(path: Path) -> source.ParquetSource:
    (src,) = source.sources(path)
    return src


def test_a_padded_label_finds_every_row_the_loader_shows_as_it(files):
    want = _expected(files["padded"], MODEL, BIAS)
    raw = _padded().loc[want.index]
    assert raw["model"].nunique() == 2 and (raw["bias"] != BIAS).all()  # padded in the file
    got = text_rows(_src(files["padded"]), model=MODEL, bias=BIAS)
    assert got.total == len(want) > 100 and not got.capped
    assert list(got.frame["id"]) == list(want["id"])  # file order
    # the labels as shown, the text exactly as stored (hostile text inert: not escaped,
    # not stripped, not rendered)
    assert set(got.frame["model"]) == {MODEL} and set(got.frame["bias"]) == {BIAS}
    assert list(got.frame["response"]) == list(raw["response"])
    assert (got.frame["response"] == HOSTILE).sum() == 3
    # a label no value shows as: nothing, without a query of the rows
    assert text_rows(_src(files["padded"]), model=f" {MODEL}x", bias=BIAS).total == 0


def test_a_number_label_is_found_by_the_text_the_loader_shows(files):
    src = _src(files["numbers"])
    for label in ("1", "2.5", "3"):
        want = _expected(files["numbers"], label, BIAS)
        got = text_rows(src, model=label, bias=BIAS)
        assert got.total == len(want) > 0 and list(got.frame["id"]) == list(want["id"])
    assert text_rows(src, model="1.0", bias=BIAS).total == 0  # not a label the run shows


def test_the_combined_views_name_of_a_shared_model_finds_its_rows(files):
    """``MODEL (r1)`` (a model two runs share, as the combined view names it) finds the run's
    ``MODEL`` rows; a model literally named so in the run is that model's own rows."""
    src = _src(files["padded"])
    assert src.name == "padded"
    want = _expected(files["padded"], MODEL, BIAS)
    got = text_rows(src, model=f"{MODEL} (padded)", bias=BIAS)
    assert got.total == len(want) and list(got.frame["id"]) == list(want["id"])
    assert set(got.frame["model"]) == {f"{MODEL} (padded)"}
    assert text_rows(src, model=f"{MODEL} (other)", bias=BIAS).total == 0
    named = _src(files["r1"])
    literal = _expected(files["r1"], f"{MODEL} (r1)", BIAS)
    got = text_rows(named, model=f"{MODEL} (r1)", bias=BIAS)
    assert got.total == len(literal) > 0
    assert list(got.frame["id"]) == list(literal["id"])


def test_the_workspace_and_the_drill_down_find_a_shared_models_rows(tmp_path):
    """Two saved runs sharing their models, read through DuckDB: the combined view names
    them ``model (run)``; ``workspace.response_rows`` and the page's drill-down find each
    run's rows under that name."""
    from kbench_app.bias import drill_down
    from kbench_core import workspace as ws_module
    from kbench_core.io import Run, combine_runs
    from kbench_core.workspace import Workspace

    loaded = io.load_run(SAMPLE)
    saver = Workspace(tmp_path / "ws")
    saver.save(Run(name="r1", kind="bias", frame=loaded.frame, meta=loaded.meta))
    saver.save(Run(name="r2", kind="bias", frame=loaded.frame.iloc[:3000], meta=loaded.meta))
    ws_module.clear_caches()
    try:
        runs, errors = Workspace(tmp_path / "ws", engine="duckdb").open_all()
        assert not errors
        combined = combine_runs(runs)
        for run, frame in zip(runs, (loaded.frame, loaded.frame.iloc[:3000]), strict=True):
            label = f"{MODEL} ({run.name})"
            assert label in set(combined["model"].astype(str))
            want = frame[(frame["model"] == MODEL) & (frame["bias"] == BIAS)]
            got = ws_module.response_rows(run, model=label, bias=BIAS)
            assert got.total == len(want) > 0 and list(got.frame["id"]) == list(want["id"])
        drill = drill_down(combined, runs, model=f"{MODEL} (r1)", bias=BIAS, search="")
        assert drill.total == len(loaded.frame[(loaded.frame["model"] == MODEL)
                                               & (loaded.frame["bias"] == BIAS)])
        assert set(drill.frame["run"]) == {"r1"}
    finally:
        ws_module.clear_caches()


def test_the_search_is_plain_text(files):
    """``%`` and ``_`` are no wildcards, case is ignored, the hostile text is returned as
    stored."""
    src = _src(files["padded"])
    want = _expected(files["padded"], MODEL, BIAS)
    hits = want[want["response"].str.contains("50%_OFF", case=False, regex=False)]
    got = text_rows(src, model=MODEL, bias=BIAS, search="50%_OFF")
    assert got.total == len(hits) == 3 and list(got.frame["response"]) == [HOSTILE] * 3
    assert text_rows(src, model=MODEL, bias=BIAS, search="50_%off").total == 0
    # no rows asked: the count alone
    none = text_rows(src, model=MODEL, bias=BIAS, limit=0)
    assert none.total == len(want) and none.frame.empty and none.capped


def test_a_column_of_too_many_labels_is_compared_stripped_row_by_row(files, monkeypatch):
    """Past ``keys._MANY`` distinct labels the file's labels are not fetched: each row's
    label is stripped of Python's white space by the engine, with the same rows found."""
    monkeypatch.setattr(keys, "_MANY", 1)
    monkeypatch.setattr(rows, "_LABELS", type(rows._LABELS)())
    src = _src(files["padded"])
    want = _expected(files["padded"], MODEL, BIAS)
    for label in (MODEL, f"{MODEL} (padded)"):
        got = text_rows(src, model=label, bias=BIAS)
        assert got.total == len(want) and list(got.frame["id"]) == list(want["id"])


def test_the_labels_are_queried_once_per_file_and_label(files, monkeypatch, tmp_path):
    """A drill-down's next search on the same model × bias reuses the file's labels; a
    file of other content (its SHA-256) is queried again."""
    monkeypatch.setattr(rows, "_LABELS", type(rows._LABELS)())
    calls = []
    labels = rows._labels
    monkeypatch.setattr(rows, "_labels", lambda *a: calls.append(a[1:]) or labels(*a))
    src = _src(files["padded"])
    first = text_rows(src, model=MODEL, bias=BIAS)
    assert text_rows(src, model=MODEL, bias=BIAS, search="50%_off").total == 3
    assert calls == [(MODEL, BIAS)]
    text_rows(src, model="synthetic-beta", bias=BIAS)
    assert calls == [(MODEL, BIAS), ("synthetic-beta", BIAS)]
    other = tmp_path / "padded.parquet"
    _padded().iloc[::-1].to_parquet(other)  # the same labels, other content
    again = text_rows(_src(other), model=MODEL, bias=BIAS)
    assert len(calls) == 3 and again.total == first.total


# ------------------------------------------------------------------ Spark = DuckDB

def _same(spark_rows: rows.TextRows, duck_rows: rows.TextRows) -> None:
    assert spark_rows.total == duck_rows.total
    assert spark_rows.capped == duck_rows.capped
    assert list(spark_rows.frame.columns) == list(duck_rows.frame.columns)
    pd.testing.assert_frame_equal(spark_rows.frame.astype(object).where(
        spark_rows.frame.notna(), None), duck_rows.frame.astype(object).where(
        duck_rows.frame.notna(), None), check_dtype=False)


def test_spark_returns_the_duckdb_rows_and_total(files, spark, monkeypatch):
    """Local Spark against DuckDB on the same filters: a padded label, the combined view's
    name with a search (upper case, ``%`` and ``_`` as text), a small limit, the default
    limit of 1,000 on a model × bias of more rows, and a folder (its files in name order).
    Five cases: each Spark query costs a second on this machine."""
    padded = _src(files["padded"])
    cases = {
        "padded": (padded, dict(model=MODEL, bias=BIAS)),
        "search": (padded, dict(model=f"{MODEL} (padded)", bias=BIAS, search="50%_OFF")),
        "limit 5": (padded, dict(model=MODEL, bias=BIAS, limit=5)),
        "default limit": (_src(files["many"]), dict(model=MODEL, bias=BIAS)),
        "folder": (_src(files["folder"]), dict(model=MODEL, bias=BIAS, limit=7)),
    }
    got = {}
    for name, (src, asked) in cases.items():
        got[name] = text_rows(src, engine="spark", backend=spark, **asked)
        _same(got[name], text_rows(src, engine="duckdb", **asked))
    want = _expected(files["padded"], MODEL, BIAS)
    assert got["padded"].total == len(want) and not got["padded"].capped
    assert list(got["padded"].frame["id"]) == list(want["id"])
    assert list(got["search"].frame["response"]) == [HOSTILE] * 3
    assert set(got["search"].frame["model"]) == {f"{MODEL} (padded)"}
    # capped: the limit's first rows in file order, and the whole total
    for name, limit in (("limit 5", 5), ("folder", 7)):
        assert got[name].total == len(want) and got[name].capped
        assert list(got[name].frame["id"]) == list(want["id"].iloc[:limit])
    many = _expected(files["many"], MODEL, BIAS)
    assert got["default limit"].total == len(many) > DRILL_LIMIT
    assert list(got["default limit"].frame["id"]) == list(many["id"].iloc[:DRILL_LIMIT])
    # too many labels to fetch: Spark strips each row's label as Python does
    monkeypatch.setattr(keys, "_MANY", 1)
    monkeypatch.setattr(rows, "_LABELS", type(rows._LABELS)())
    stripped = text_rows(padded, engine="spark", backend=spark, model=MODEL, bias=BIAS)
    assert list(stripped.frame["id"]) == list(want["id"]) and stripped.total == len(want)
