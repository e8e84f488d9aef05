"""Each judged run keeps its own judges, majority rule and numbers whatever else is selected
(issue 37, item 1).

Two synthetic runs in the real multi-judge record schema (``tests/data/formats/
blockbench_multi_judge_records.json``) with different judge sets, the same detector ``claude``
in both (as BlockBench's DS and TC runs):

* **DS**, judges a, b, c (a majority needs 2 of 3): ds_t1_001 yes, yes, no; ds_t1_002 yes,
  yes, yes; ds_t1_003 no, no, no. Found: 001 and 002, TDR 2/3.
* **TC**, judges a, b, c, d, e (3 of 5): tc_001 yes, yes, yes, no, no; tc_002 five no. TDR 1/2.

Under the rule of the union of judges (3 of 5) DS's ds_t1_001 had only 2 yes votes and lost
its target: TDR 1/3 beside TC, 2/3 alone (the bug).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from kbench_app import state
from kbench_core import agreement, io, vuln
from kbench_core.families.judged import judge_views, leaderboard_groups

ROOT = Path(__file__).resolve().parent.parent
DS = {"ds_t1_001": {"a": True, "b": True, "c": False},
      "ds_t1_002": {"a": True, "b": True, "c": True},
      "ds_t1_003": {"a": False, "b": False, "c": False}}
TC = {"tc_001": {"a": True, "b": True, "c": True, "d": False, "e": False},
      "tc_002": dict.fromkeys("abcde", False)}


def records(found: dict, detector: str = "claude") -> list[dict]:
    out = []
    for sample, judges in found.items():
        for judge, hit in judges.items():
            out.append({
                "sample_id": sample, "detector_model": detector, "judge_model": judge,
                "prompt_type": "direct", "notes": "", "summary": {},
                "overall_verdict": {"said_vulnerable": True, "confidence_expressed": 0.9},
                "findings": [{"finding_id": 0, "vulnerability_type_claimed": "Reentrancy",
                              "location_claimed": "line 3", "reasoning": "r",
                              "classification": "TARGET_MATCH" if hit else "HALLUCINATED"}],
                "target_assessment": {
                    "complete_found": hit, "partial_found": False,
                    "finding_id": 0 if hit else None,
                    "type_match": "exact" if hit else "not_mentioned",
                    "root_cause_identification": {"score": 0.8 if hit else None},
                    "attack_vector_validity": {"score": 0.6 if hit else None},
                    "fix_suggestion_validity": {"score": 1.0 if hit else None}}})
    return out


def load(name: str, found: dict) -> io.Run:
    return io.load_run((f"{name}.json", json.dumps(records(found)).encode()), name=name)


@pytest.fixture(scope="module")
def runs() -> tuple[io.Run, io.Run]:
    return load("DS", DS), load("TC", TC)


def tdr(frame: pd.DataFrame, model: str, options: dict | None = None) -> float:
    ((_, rows),) = judge_views(frame, {"judge": "majority", **(options or {})})
    table = vuln.tiers(rows).set_index("model")
    return float(table.loc[model, "tdr"])


def test_each_run_is_its_own_majority_alone_and_together(runs) -> None:
    ds, tc = runs
    together = io.combine_runs([ds, tc])  # the model both runs hold: "claude (DS)", ...
    assert tdr(ds.frame, "claude") == pytest.approx(2 / 3)
    assert tdr(tc.frame, "claude") == pytest.approx(1 / 2)
    assert tdr(together, "claude (DS)") == pytest.approx(2 / 3)  # was 1/3: TC's 3 of 5
    assert tdr(together, "claude (TC)") == pytest.approx(1 / 2)
    voted = agreement.consensus(together)
    assert voted.attrs["runs"] == {"DS": {"judges": ["a", "b", "c"], "min_votes": 2},
                                   "TC": {"judges": ["a", "b", "c", "d", "e"],
                                          "min_votes": 3}}


@pytest.mark.parametrize("failed_as", ["missing", "not_found"])
def test_every_number_of_a_run_is_the_same_beside_another(runs, failed_as) -> None:
    ds, tc = runs
    together = io.combine_runs([ds, tc])
    for run in (ds, tc):
        for judge in ("majority", "a", "b"):
            options = {"judge": judge, "failed_as": failed_as}
            ((_, alone),) = judge_views(run.frame, options)
            ((_, beside),) = judge_views(together, options)
            beside = beside[beside["run"].astype(str) == run.name]
            left = vuln.tiers(alone, **({} if judge == "majority" else {"judge": judge}))
            right = vuln.tiers(beside, **({} if judge == "majority" else {"judge": judge}))
            right["model"] = right["model"].astype(str).str.replace(f" ({run.name})", "")
            left["model"] = left["model"].astype(str)
            pd.testing.assert_frame_equal(left.reset_index(drop=True),
                                          right.reset_index(drop=True), check_dtype=False,
                                          check_categorical=False)


def test_runs_of_different_benchmarks_or_judges_get_their_own_leaderboard(runs) -> None:
    ds, tc = runs
    other = load("DS gpt", DS)  # another detector's DS run: same judges, same contracts
    assert leaderboard_groups({"DS": ds.frame, "TC": tc.frame, "DS gpt": other.frame}) == [
        ["DS", "DS gpt"], ["TC"]]
    # the same contracts judged by other judges: not ranked together either
    fewer = load("DS two judges", {s: {j: f for j, f in v.items() if j != "c"}
                                   for s, v in DS.items()})
    assert leaderboard_groups({"DS": ds.frame, "DS two judges": fewer.frame}) == [
        ["DS"], ["DS two judges"]]


def test_a_chosen_voter_a_run_lacks_is_named(runs) -> None:
    together = io.combine_runs(list(runs))
    with pytest.raises(ValueError, match="run 'DS' has none of the judges d"):
        agreement.consensus(together, judges=["d"])


# ---------------------------------------------------------------------------- the page


def open_page(monkeypatch, tmp_path, runs) -> AppTest:
    paths = []
    for run in runs:
        path = tmp_path / f"{run.name}.json"
        path.write_text(json.dumps(records(DS if run.name == "DS" else TC)))
        paths.append(str(path))
    monkeypatch.setenv("KBENCH_APP_ARGS", "--no-samples " + " ".join(paths))
    state._cached_load.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("views/vuln.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def board(at: AppTest) -> pd.DataFrame:
    return at.dataframe[0].value.set_index("model")


def test_the_page_ranks_each_run_apart_unless_asked(monkeypatch, tmp_path, runs) -> None:
    at = open_page(monkeypatch, tmp_path, runs)
    assert sorted(at.multiselect(key="vuln_runs").value) == ["DS", "TC"]  # both chosen
    # one benchmark's leaderboard at a time: DS first, judged by its own majority
    assert at.radio(key="vuln_run_group").value == "DS"
    shown = board(at)
    assert list(shown.index) == ["claude"] and shown.loc["claude", "tdr"] == pytest.approx(2 / 3)
    captions = " ".join(c.value for c in at.caption)
    assert "Majority: 2 of 3 votes (a, b, c)" in captions
    at.radio(key="vuln_run_group").set_value("TC").run()
    assert board(at).loc["claude", "tdr"] == pytest.approx(1 / 2)
    assert "Majority: 3 of 5 votes (a, b, c, d, e)" in " ".join(c.value for c in at.caption)
    # asked for: every run in one table, each with its own majority, and the table says so
    at.radio(key="vuln_run_group").set_value("all").run()
    assert not at.exception
    shown = board(at)
    assert shown.loc["claude (DS)", "tdr"] == pytest.approx(2 / 3)
    assert shown.loc["claude (TC)", "tdr"] == pytest.approx(1 / 2)
    captions = " ".join(c.value for c in at.caption)
    assert "Ranked together as you asked" in captions
    assert "Majority, run by run: **DS** 2 of 3 votes" in captions
    assert "**TC** 3 of 5 votes" in captions


def test_a_run_of_expert_labels_only_has_no_majority_beside_another(runs) -> None:
    ds, _ = runs
    experts = load("experts", {"ds_t1_001": {"human": True}})
    together = io.combine_runs([ds, experts])
    voted = agreement.consensus(together)
    assert list(voted.attrs["runs"]) == ["DS"]
    assert set(voted["run"].astype(str)) == {"DS"}
    with pytest.raises(ValueError, match="no judge 'zz'"):
        agreement.consensus(together, judges=["zz"])
