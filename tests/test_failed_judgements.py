"""Failed judgements are kept as rows with a missing label (issue 37, item 2;
docs/formats.md, "Failed judgements").

Synthetic records in the real multi-judge schema (``tests/data/formats/
blockbench_multi_judge_records.json``: a failed record carries ``error`` and a null verdict),
three judges j1, j2, j3 on one detector ``m`` and four vulnerable DS contracts:

=========  ====  ====  ======  ==========================================
sample      j1    j2    j3      case
=========  ====  ====  ======  ==========================================
ds_t1_001   yes   yes   yes
ds_t1_002   err   err   err     (a) every judge of the contract failed
ds_t2_001   yes   no    err     (b) one of three failed
ds_t2_002   no    no    no
=========  ====  ====  ======  ==========================================

Every number below is worked by hand in the test, under both conventions: "missing" (the
default: a failed judgement is left out and counted in ``n_missing``) and "not_found"
(BlockBench's: it counts as not found, its verdict not credited).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from kbench_core import agreement, engines, io, vuln
from kbench_core.families import main_table
from kbench_core.families.judged import judge_views
from kbench_core.problems import RunFormatError

FOUND = {  # sample -> judge -> found (None = a failed judgement, a record with `error`)
    "ds_t1_001": {"j1": True, "j2": True, "j3": True},
    "ds_t1_002": {"j1": None, "j2": None, "j3": None},
    "ds_t2_001": {"j1": True, "j2": False, "j3": None},
    "ds_t2_002": {"j1": False, "j2": False, "j3": False},
}


def record(sample: str, judge: str, found: bool | None, *, detector: str = "m") -> dict:
    """One judge record as BlockBench's multi-judge files write it; ``found`` None gives the
    real failed record (``error``, null verdict, an assessment without a readable found)."""
    base = {"sample_id": sample, "detector_model": detector, "judge_model": judge,
            "prompt_type": "direct", "notes": "", "summary": {}}
    if found is None:
        return {**base, "error": "Failed to parse JSON response. Raw: ...",
                "overall_verdict": {"said_vulnerable": None, "confidence_expressed": None},
                "findings": [], "target_assessment": {"found": False,
                                                      "type_match": "not_mentioned"}}
    finding = {"finding_id": 0, "vulnerability_type_claimed": "Reentrancy",
               "location_claimed": "line 12", "reasoning": "r",
               "classification": "TARGET_MATCH" if found else "HALLUCINATED"}
    return {**base, "overall_verdict": {"said_vulnerable": True, "confidence_expressed": 0.9},
            "findings": [finding],
            "target_assessment": {
                "complete_found": found, "partial_found": False,
                "finding_id": 0 if found else None,
                "type_match": "exact" if found else "not_mentioned",
                "root_cause_identification": {"score": 1.0 if found else None,
                                              "reasoning": "x"},
                "attack_vector_validity": {"score": 1.0 if found else None, "reasoning": "x"},
                "fix_suggestion_validity": {"score": 1.0 if found else None,
                                            "reasoning": "x"}}}


def records(found: dict = FOUND, detector: str = "m") -> list[dict]:
    return [record(s, j, f, detector=detector) for s, judges in found.items()
            for j, f in judges.items()]


@pytest.fixture(scope="module")
def run() -> io.Run:
    return io.load_run(("ds.json", json.dumps(records()).encode()))


def one(table: pd.DataFrame, **where) -> pd.Series:
    mask = np.ones(len(table), dtype=bool)
    for column, value in where.items():
        mask &= table[column].astype(str).to_numpy() == value
    (row,) = table[mask].to_dict("records")
    return pd.Series(row)


def test_the_reader_keeps_every_failed_judgement_as_a_row(run) -> None:
    frame = run.frame
    assert len(frame) == 12  # 12 records, 4 failed: none dropped
    failed = frame[frame["failed_judgement"].notna()]
    assert len(failed) == 4
    assert failed["target_found"].isna().all() and failed["said_vulnerable"].isna().all()
    assert failed["failed_judgement"].str.startswith("error: Failed to parse JSON").all()
    assert failed["is_vulnerable"].all()  # ground truth (inferred) is the contract's
    assert set(failed["difficulty"]) == {"t1", "t2"}
    note = next(w for w in run.warnings if "failed judgement" in w)
    assert "4 failed judgements" in note and "4 kept as rows with missing labels" in note


def test_a_failed_record_repeating_a_readable_one_is_left_out() -> None:
    # a judge's record retried: the readable one stands, the key stays unique
    data = [*records(), record("ds_t1_001", "j1", None)]
    loaded = io.load_run(("ds.json", json.dumps(data).encode()))
    assert len(loaded.frame) == 12
    row = one(loaded.frame, sample="ds_t1_001", judge="j1")
    assert row["target_found"] is True or bool(row["target_found"])
    assert any("1 left out" in w for w in loaded.warnings)


@pytest.mark.parametrize("failed_as", ["missing", "not_found"])
def test_each_judge_by_hand(run, failed_as) -> None:
    """Single judges: under "missing" a failed judgement is left out (n_missing), under
    "not_found" it is an answer whose target was not found and whose verdict is wrong."""
    views = dict(judge_views(run.frame, {"failed_as": failed_as}))
    j1 = vuln.tiers(views["j1"], judge="j1").iloc[0]
    j3 = vuln.tiers(views["j3"], judge="j3").iloc[0]
    if failed_as == "missing":
        # j1: found t1_001 and t2_001, not t2_002; t1_002 failed
        assert (j1["n"], j1["n_missing"], j1["tdr"]) == (3, 1, pytest.approx(2 / 3))
        # j3: found t1_001, not t2_002; t1_002 and t2_001 failed
        assert (j3["n"], j3["n_missing"], j3["tdr"]) == (2, 2, pytest.approx(1 / 2))
        assert j3["accuracy"] == pytest.approx(2 / 2)  # both verdicts read: "vulnerable"
    else:
        assert (j1["n"], j1["n_missing"], j1["tdr"]) == (4, 0, pytest.approx(2 / 4))
        assert (j3["n"], j3["n_missing"], j3["tdr"]) == (4, 0, pytest.approx(1 / 4))
        # the two failed verdicts are not credited: 2 true positives of 4 answers
        assert (j3["tp"], j3["fn"], j3["accuracy"]) == (2, 2, pytest.approx(2 / 4))


@pytest.mark.parametrize("failed_as", ["missing", "not_found"])
def test_the_majority_by_hand(run, failed_as) -> None:
    voted = agreement.consensus(run.frame, failed_as=failed_as)
    assert voted.attrs["min_votes"] == 2
    assert one(voted, sample="ds_t1_002")["n_judges"] == 0
    assert one(voted, sample="ds_t2_001")["n_judges"] == 2  # j3 failed
    table = vuln.tiers(voted).iloc[0]
    if failed_as == "missing":
        # (a) nobody judged t1_002: missing, left out (not an undecided vote)
        assert pd.isna(one(voted, sample="ds_t1_002")["target_found"])
        # (b) t2_001: yes, no, failed: no majority, not credited (docs/metrics/agreement.md)
        assert one(voted, sample="ds_t2_001")["no_majority"] == "said_vulnerable, target_found" \
            or "target_found" in one(voted, sample="ds_t2_001")["no_majority"]
        # found: t1_001 only, of 3 answers judged
        assert (table["n"], table["n_missing"], table["tdr"]) == (3, 1, pytest.approx(1 / 3))
    else:
        # (a) three "no": not found; (b) yes, no, no: no, decided
        assert not one(voted, sample="ds_t1_002")["target_found"]
        assert "target_found" not in one(voted, sample="ds_t2_001")["no_majority"]
        assert (table["n"], table["n_missing"], table["tdr"]) == (4, 0, pytest.approx(1 / 4))


@pytest.mark.parametrize("failed_as", ["missing", "not_found"])
def test_every_tier_by_hand(run, failed_as) -> None:
    """Per difficulty tier (BlockBench's DS table) for a single judge and the majority: the
    all-failed contract stays in its tier under "not_found" and is missing under "missing"."""
    options = {"failed_as": failed_as}
    views = dict(judge_views(run.frame, options))
    got = {}
    for name in ("majority", "j1", "j3"):
        rows = views[name]
        per = vuln.tiers(rows, by=("model", "difficulty"),
                         **({} if name == "majority" else {"judge": name}))
        got[name] = {str(r["difficulty"]): (int(r["n_vulnerable"]), r["tdr"])
                     for _, r in per.iterrows()}
    if failed_as == "missing":
        assert got["j1"] == {"t1": (1, 1.0), "t2": (2, 0.5)}
        assert got["j3"] == {"t1": (1, 1.0), "t2": (1, 0.0)}
        assert got["majority"] == {"t1": (1, 1.0), "t2": (2, 0.0)}
    else:
        assert got["j1"] == {"t1": (2, 0.5), "t2": (2, 0.5)}
        assert got["j3"] == {"t1": (2, 0.5), "t2": (2, 0.0)}
        assert got["majority"] == {"t1": (2, 0.5), "t2": (2, 0.0)}
    # BlockBench's DS "Avg": the mean over the tiers
    table = vuln.tiers(views["j3"], judge="j3").iloc[0]
    assert table["tdr_difficulty_mean"] == pytest.approx(
        (1.0 + 0.0) / 2 if failed_as == "missing" else (0.5 + 0.0) / 2)


def test_the_main_table_and_the_command_line_honour_failed_as(run, tmp_path, capsys) -> None:
    from kbench_core.cli.entry import main

    path = tmp_path / "ds.json"
    path.write_text(json.dumps(records()))
    for flag, n, tdr in (("missing", 2, 1 / 2), ("not-found", 4, 1 / 4)):
        assert main(["metrics", str(path), "--judge", "j3", "--failed-as", flag,
                     "--format", "csv", "--precision", "full"]) == 0
        table = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out),
                            comment="#")
        row = one(table, model="m")
        assert (int(row["n"]), float(row["tdr"])) == (n, pytest.approx(tdr))


@pytest.mark.parametrize("failed_as", ["missing", "not_found"])
def test_how_much_the_judge_moves_the_score_honours_failed_as(run, failed_as) -> None:
    """The Judge agreement page's spread: each judge's own tiers follow the choice, as the
    majority's do (it ignored it: issue 37)."""
    spread = agreement.judge_tiers(run.frame, failed_as=failed_as).spread
    tdr = {str(r["judge"]): r["tdr"] for _, r in spread.iterrows()}
    if failed_as == "missing":
        assert tdr == pytest.approx({"j1": 2 / 3, "j2": 1 / 3, "j3": 1 / 2, "majority": 1 / 3})
    else:
        assert tdr == pytest.approx({"j1": 2 / 4, "j2": 1 / 4, "j3": 1 / 4, "majority": 1 / 4})


def test_agreement_treats_a_failed_row_as_missing(run) -> None:
    """κ and α read a failed judgement's row as missing: by default the same numbers as with
    the rows left out (as the reader used to); counted as "not found", the contract every
    judge failed on is an item all three call "no"."""
    frame = run.frame
    without = frame[frame["failed_judgement"].isna()].drop(columns="failed_judgement")
    kept = agreement.summarize(frame, "target_found")
    dropped = agreement.summarize(without, "target_found")
    pd.testing.assert_frame_equal(kept.pairs.reset_index(drop=True),
                                  dropped.pairs.reset_index(drop=True))
    assert kept.alpha.value == pytest.approx(dropped.alpha.value)
    assert "failed_judgement" not in agreement.judged_labels(frame)

    def kappa(failed_as: str) -> float:
        pairs = agreement.summarize(frame, "target_found", failed_as=failed_as).pairs
        return pairs[(pairs["judge_a"] == "j1") & (pairs["judge_b"] == "j2")].iloc[0]["kappa"]

    # "missing": j1, j2 on t1_001 (yes, yes), t2_001 (yes, no), t2_002 (no, no):
    # po = 2/3; p(yes) 2/3 and 1/3, pe = 2/3·1/3 + 1/3·2/3 = 4/9; κ = (2/3 − 4/9)/(1 − 4/9)
    assert kappa("missing") == pytest.approx((2 / 3 - 4 / 9) / (1 - 4 / 9))
    # "not_found": t1_002 (no, no) joins: po = 3/4; p(yes) 2/4 and 1/4, pe = 1/2
    assert kappa("not_found") == pytest.approx((3 / 4 - 1 / 2) / (1 - 1 / 2))


def test_a_canonical_file_may_leave_a_label_empty_only_with_a_reason(run, tmp_path) -> None:
    frame = run.frame.drop(columns=["claimed_lines", "true_lines", "findings"])
    path = tmp_path / "judged.csv"
    frame.to_csv(path, index=False)
    loaded = io.load_run(path)
    assert loaded.frame["target_found"].isna().sum() == 4
    assert vuln.tiers(loaded.frame, judge="j3").iloc[0]["n_missing"] == 2
    bare = frame.assign(failed_judgement=None)
    bare.to_csv(path, index=False)
    with pytest.raises(RunFormatError) as info:
        io.load_run(path)
    message = str(info.value)
    assert "field 'said_vulnerable'" in message and "failed_judgement" in message
    # the header is line 1: the fourth record (ds_t1_002, j1) is line 5
    assert "line 5, field 'said_vulnerable'" in message


@pytest.mark.parametrize("failed_as", ["missing", "not_found"])
def test_the_engines_give_the_memory_numbers(run, tmp_path, failed_as) -> None:
    path = tmp_path / "ds.parquet"
    run.frame.to_parquet(path)
    (memory,) = engines.load(path, engine="memory")
    (duck,) = engines.load(path, engine="duckdb")
    item = main_table("judged")
    options = {"failed_as": failed_as}
    left = [t for _, t in item.objects(memory.frame, options, meta=memory.meta)]
    right = [t for _, t in item.objects(duck.frame, options, meta=duck.meta)]
    for x, y in zip(left, right, strict=True):
        pd.testing.assert_frame_equal(x.reset_index(drop=True), y.reset_index(drop=True),
                                      check_dtype=False, check_categorical=False)
    path = tmp_path / "bad.parquet"
    run.frame.assign(failed_judgement=None).to_parquet(path)
    messages = []
    for engine in ("memory", "duckdb"):
        with pytest.raises(RunFormatError) as info:
            engines.load(path, engine=engine)
        messages.append(str(info.value))
    assert messages[0] == messages[1] and "failed_judgement" in messages[0]


def test_the_vulnerability_page_honours_failed_as_for_one_judge(tmp_path, monkeypatch) -> None:
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from kbench_app import state

    path = tmp_path / "ds.json"
    path.write_text(json.dumps(records()))
    monkeypatch.setenv("KBENCH_APP_ARGS", f"--no-samples {path}")
    state._cached_load.clear()
    root = Path(__file__).resolve().parent.parent
    at = AppTest.from_file(str(root / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("views/vuln.py").run()
    at.selectbox(key="vuln_judge").set_value("j3").run()
    board = at.dataframe[0].value.set_index("model")
    assert (board.loc["m", "n"], board.loc["m", "tdr"]) == (2, pytest.approx(1 / 2))
    assert "2 failed judgements left out" in " ".join(c.value for c in at.caption)
    at.radio(key="vuln_failed_as").set_value("not_found").run()
    assert not at.exception
    board = at.dataframe[0].value.set_index("model")
    assert (board.loc["m", "n"], board.loc["m", "tdr"]) == (4, pytest.approx(1 / 4))
    assert "2 failed judgements counted as 'not found'" in " ".join(
        c.value for c in at.caption)


def test_the_agreement_pages_spread_honours_failed_as(tmp_path, monkeypatch) -> None:
    """"How much the judge moves the score" on the Judge agreement page: each judge's TDR
    follows the Failed judgements choice (it ignored it: issue 37)."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from kbench_app import state

    path = tmp_path / "ds.json"
    path.write_text(json.dumps(records()))
    monkeypatch.setenv("KBENCH_APP_ARGS", f"--no-samples {path}")
    state._cached_load.clear()
    root = Path(__file__).resolve().parent.parent
    at = AppTest.from_file(str(root / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("views/agreement.py").run()

    def tdr_range() -> tuple[float, float]:
        table = next(d.value for d in at.dataframe
                     if {"metric", "judge_low", "judge_high"} <= set(d.value.columns))
        row = table[table["metric"] == "tdr"].iloc[0]
        return float(row["low"]), float(row["high"])

    # missing: j1 2/3, j2 1/3, j3 1/2
    assert tdr_range() == pytest.approx((1 / 3, 2 / 3))
    at.radio(key="agr_failed_as").set_value("not_found").run()
    assert not at.exception
    # not found: j1 2/4, j2 1/4, j3 1/4
    assert tdr_range() == pytest.approx((1 / 4, 2 / 4))


@pytest.mark.parametrize("failed_as", ["missing", "not_found"])
def test_the_fixed_versions_tdr_follows_failed_as(failed_as) -> None:
    from kbench_core.families.judged import fixed_versions

    fixed = [{**record("df_tc_001", j, False), "target_assessment": {
        "false_positive_detected": False, "type_match": "not_mentioned"}}
        for j in ("j1", "j2", "j3")]
    loaded = io.load_run(("ds.json", json.dumps(records() + fixed).encode()))
    table = fixed_versions(loaded.frame, judges=["j3"], consensus={"failed_as": failed_as})
    j3 = one(table, judge="j3")
    # j3 on the four vulnerable contracts: found 1 of the 2 it judged, 2 failed
    assert (j3["n_vulnerable"], j3["tdr"]) == (
        (2, pytest.approx(1 / 2)) if failed_as == "missing" else (4, pytest.approx(1 / 4)))
    assert (j3["n_fixed"], j3["fixed_claim_rate"]) == (1, 0.0)


@pytest.mark.parametrize("extra", [["--failed-as", "missing"], ["--failed-as", "not-found"],
                                   ["--failed-as", "not-found", "--judge", "j3"],
                                   ["--failed-as", "not-found", "--min-votes", "1"]],
                         ids=["missing", "not-found", "not-found-j3", "not-found-min-1"])
def test_the_engines_cells_give_the_memory_numbers(run, tmp_path, capsys, monkeypatch,
                                                   extra) -> None:
    """``kbench metrics`` through DuckDB on this run sums its cells in the engine
    (``engines.judged``: no answer fetched) and prints the memory engine's numbers, the
    majority's and every judge's, under both conventions."""
    import io as io_

    from kbench_core.cli.entry import main

    path = tmp_path / "ds.parquet"
    # true_lines has no value: Parquet's null type, which DuckDB reads as integers
    run.frame.to_parquet(path)

    def printed(engine: str) -> pd.DataFrame:
        capsys.readouterr()
        assert main(["metrics", str(path), "--engine", engine, "--format", "csv",
                     "--precision", "full", *extra]) == 0
        return pd.read_csv(io_.StringIO(capsys.readouterr().out), comment="#")

    memory = printed("memory")

    def refused(*args, **kwargs):
        raise AssertionError("the answers were fetched")

    monkeypatch.setattr(engines.reduce, "typed_rows", refused)
    monkeypatch.setattr(engines.settings, "JUDGED_CELLS_ROWS", 0)  # cells at any size
    duck = printed("duckdb")
    pd.testing.assert_frame_equal(memory, duck, rtol=1e-9, atol=1e-9)
    assert len(duck) >= 1
