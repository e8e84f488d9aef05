"""The Vulnerability page's one-sample view under the majority (issue 37, item 7): one view
of an answer shows the detector's answer, each judge's decision and reasoning, and the
majority's result, and never says "no findings" beside a target found.

The multi-judge example (``tests/data/formats/blockbench_multi_judge_records.json``, the real
schema): detector_b on ds_t2_002 is judged by judge-x (target not found, a BONUS_VALID
finding), judge-y (found: TARGET_MATCH) and judge-z (failed: ``error``). With 2 of 3 votes
needed, one yes and one no are no majority: not found, reported in ``no_majority``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from kbench_app import state

ROOT = Path(__file__).resolve().parent.parent
RECORDS = ROOT / "tests" / "data" / "formats" / "blockbench_multi_judge_records.json"


def open_sample(monkeypatch, judge: str = "majority") -> AppTest:
    monkeypatch.setenv("KBENCH_APP_ARGS", f"--no-samples {RECORDS}")
    state._cached_load.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("views/vuln.py").run()
    at.selectbox(key="vuln_judge").set_value(judge).run()
    at.selectbox(key="vuln_drill_model").set_value("detector_b").run()
    at.selectbox(key="vuln_drill_sample").set_value("ds_t2_002").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def tables(at: AppTest) -> list:
    # the drill-down's tables are the page's last: answers, each judge, findings
    return [df.value for df in at.dataframe]


def test_the_majority_view_shows_every_judge_and_the_findings(monkeypatch) -> None:
    at = open_sample(monkeypatch)
    answers, judges, findings = tables(at)[-3:]
    # the answer as the majority decided it: 1 yes, 1 no, 1 failed -> not found, reported
    assert answers["target_found"].tolist() == [False]
    assert answers["n_judges"].tolist() == [2]
    assert answers["no_majority"].tolist() == ["target_found, type_match"]
    # each judge's decision, then the majority's, field by field
    assert list(judges.columns) == ["field", "judge-x", "judge-y", "judge-z", "majority"]
    row = judges.set_index("field")
    assert row.loc["target_found"].tolist() == ["False", "True", "", "False"]
    assert row.loc["said_vulnerable"].tolist() == ["True", "True", "", "True"]
    assert row.loc["failed_judgement", "judge-z"].startswith("error: Failed to parse JSON")
    assert row.loc["no_majority", "majority"] == "target_found, type_match"
    # the detector's findings as each judge classified them, with the judge's reasoning
    assert findings["judge"].tolist() == ["judge-x", "judge-y"]
    assert findings["classification"].tolist() == ["BONUS_VALID", "TARGET_MATCH"]
    assert findings["location_claimed"].tolist() == ["random()", "random()"]
    assert findings["reasoning"].tolist() == ["example", "example"]
    captions = " ".join(c.value for c in at.caption)
    assert "no findings" not in captions  # it contradicted the target found (issue 37)


def test_a_found_target_under_the_majority_lists_the_findings(monkeypatch) -> None:
    at = open_sample(monkeypatch)
    at.selectbox(key="vuln_drill_model").set_value("detector_a").run()
    at.selectbox(key="vuln_drill_sample").set_value("ds_t1_001").run()
    answers, judges, findings = tables(at)[-3:]
    # judge-x and judge-y found it, judge-z did not: found, 2 of 3 (the expert labels,
    # `human`, are shown and do not vote)
    assert answers["target_found"].tolist() == [True]
    assert list(judges.columns) == ["field", "judge-x", "judge-y", "judge-z", "human",
                                    "majority"]
    assert judges.set_index("field").loc["target_found"].tolist() == [
        "True", "True", "False", "True", "True"]
    assert "TARGET_MATCH" in findings["classification"].tolist()
    assert "reported no findings" not in " ".join(c.value for c in at.caption)


@pytest.mark.parametrize("judge", ["judge-x", "judge-z"])
def test_one_judges_view_shows_its_own_findings(monkeypatch, judge) -> None:
    at = open_sample(monkeypatch, judge)
    captions = " ".join(c.value for c in at.caption)
    if judge == "judge-x":
        findings = tables(at)[-1]
        assert findings["classification"].tolist() == ["BONUS_VALID"]
        assert "judge" not in findings.columns
    else:  # its judgement failed: said so, not "no findings"
        assert "No judgement of this answer could be read" in captions


def test_the_majority_reads_its_scores_as_the_judges_do() -> None:
    """A score reads "1.0" in each judge's column and in the majority's (the majority's was
    "1": the rule that writes a whole median count as "1" reached the scores); a whole count
    reads "1" in both. Seen in the issue-37 walkthrough on the DS mirror."""
    import pandas as pd

    from kbench_app.vuln import judges_view
    from kbench_core import agreement

    rows = pd.DataFrame({
        "sample": "ds_t1_001", "model": "m", "prompt_type": "direct",
        "judge": ["a", "b", "c"], "is_vulnerable": True, "said_vulnerable": True,
        "target_found": True, "rcir": [1.0, 1.0, 0.5], "ava": [0.5, 0.5, 0.5],
        "n_target_match": [1, 1, 1]})
    voted = agreement.consensus(rows)
    view = judges_view(rows, voted, "direct").set_index("field")
    assert view.loc["rcir"].tolist() == ["1.0", "1.0", "0.5", "1.0"]
    assert view.loc["ava"].tolist() == ["0.5", "0.5", "0.5", "0.5"]
    assert view.loc["n_target_match"].tolist() == ["1", "1", "1", "1"]
