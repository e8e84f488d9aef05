"""HumanStudy-Bench's native files: the per-test effect list (JSON) and simple_studies.csv, end
to end through ``kbench_core.io.load_run`` (the shared examples and synthetic variants,
including malformed ones whose errors must name file, record and field)."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

from kbench_core import replication as R
from kbench_core.io import RunFormatError, load_run

FORMATS = Path(__file__).resolve().parents[2] / "shared" / "formats"
EFFECTS = FORMATS / "humanstudy_effect_data_example.json"
STUDIES = FORMATS / "humanstudy_simple_studies_example.csv"


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return json.loads(EFFECTS.read_text())


def load(payload: object, name: str = "effects.json"):
    return load_run((name, json.dumps(payload).encode()))


def test_example_effect_list_loads_with_every_mapping(records) -> None:
    run = load_run(EFFECTS)
    assert run.kind == "replication" and len(run) == len(records) and run.warnings == ()
    frame = run.frame
    for i, rec in enumerate(records):
        row = frame.iloc[i]
        assert row["model"] == f"{rec['Model']} ({rec['Method']})"
        assert row["study"] == rec["Study_ID"]
        want = (f"{rec['Sub_Study_ID']}/{rec['Finding_ID']}" if rec["Finding_ID"]
                else rec["Sub_Study_ID"])
        assert row["finding"] == want
        assert row["test"] == rec["Test_Name"]
        assert (row["human_d"], row["agent_d"]) == (rec["ES_Original"], rec["ES_Replication"])
        assert row["power"] == rec["Power"]
        assert bool(row["significant_replication"]) is rec["Significant_Replication"]
    assert (frame["finding"].astype(str).str.contains("/")).sum() == sum(
        1 for r in records if r["Finding_ID"])


def test_example_effect_list_goes_on_to_ecs_and_no_pas(records) -> None:
    run = load_run(EFFECTS)
    # one model, every test weight 1: Lin's CCC of ES_Replication on ES_Original, by hand
    x = np.array([r["ES_Original"] for r in records])
    y = np.array([r["ES_Replication"] for r in records])
    mx, my = x.mean(), y.mean()
    ccc = 2 * np.mean((x - mx) * (y - my)) / (x.var() + y.var() + (mx - my) ** 2)
    table = R.ecs(run.frame, weighting="equal")
    assert len(table) == 1 and table["ecs"].iloc[0] == pytest.approx(ccc)
    assert table["n"].iloc[0] == len(records) and table["n_studies"].iloc[0] == 3
    assert R.pas(run.frame).model.empty  # effect sizes only: PAS unavailable (SPEC 1.2)


def test_repeated_test_names_are_numbered_within_a_finding_only(records) -> None:
    first = records[0]
    other_model = dict(first, Model="Other Agent")
    payload = [*records, dict(first), dict(first), other_model]
    run = load(payload)
    tests = run.frame["test"].astype(str).tolist()
    assert tests[len(records)] == f"{first['Test_Name']} #2"
    assert tests[len(records) + 1] == f"{first['Test_Name']} #3"
    assert tests[-1] == first["Test_Name"]  # another model: not a repeat
    assert any("2 repeated test names" in w for w in run.warnings)


def test_empty_method_and_missing_finding_field(records) -> None:
    payload = [{k: v for k, v in r.items() if k != "Finding_ID"} | {"Method": ""}
               for r in records[:3]]
    frame = load(payload).frame
    assert frame["model"].astype(str).tolist() == ["Example Agent"] * 3
    assert frame["finding"].astype(str).tolist() == [r["Sub_Study_ID"] for r in records[:3]]


def test_null_effects_are_kept_with_a_warning_and_left_out_of_ecs(records) -> None:
    payload = [dict(r) for r in records]
    payload[2]["ES_Replication"] = None
    run = load(payload)
    assert math.isnan(run.frame["agent_d"].iloc[2])
    assert any("1 of 12 records have no ES_Original or ES_Replication" in w
               for w in run.warnings)
    assert R.ecs(run.frame)["n"].iloc[0] == 11


def _broken(records: list[dict], index: int, **changes: object) -> list[dict]:
    payload = [dict(r) for r in records]
    for field, value in changes.items():
        if value is KeyError:
            del payload[index][field]
        else:
            payload[index][field] = value
    return payload


@pytest.mark.parametrize(("index", "changes", "field", "words"), [
    (3, {"ES_Original": "0.3"}, "ES_Original", "expected a number or null, got '0.3'"),
    (3, {"ES_Original": True}, "ES_Original", "got True"),
    (5, {"ES_Replication": [1, 2]}, "ES_Replication", "got [1, 2]"),
    (2, {"Study_ID": KeyError}, "Study_ID", "expected a non-empty name, got null"),
    (5, {"Model": ""}, "Model", "non-empty name"),
    (5, {"Test_Name": "  "}, "Test_Name", "non-empty name"),
    (5, {"Sub_Study_ID": None}, "Sub_Study_ID", "got null"),
    (5, {"Power": "high"}, "Power", "a number or null"),
    (5, {"Significant_Replication": "maybe"}, "Significant_Replication", "true, false or null"),
])
def test_malformed_records_name_file_record_and_field(records, index, changes, field,
                                                      words) -> None:
    with pytest.raises(RunFormatError) as caught:
        load(_broken(records, index, **changes))
    message = str(caught.value)
    assert message.startswith(f"effects.json: record {index + 1}, field '{field}'")
    assert words in message


def test_several_bad_records_are_listed(records) -> None:
    payload = [dict(r, ES_Original="x") for r in records]
    with pytest.raises(RunFormatError, match=r"record 1, field 'ES_Original'.*also records "
                                             r"2, 3, 4, 5 and 7 more"):
        load(payload)


def test_structural_problems(records) -> None:
    with pytest.raises(RunFormatError, match=r"effects\.json: record 4: expected a test record "
                                             r"\(a JSON object\), got str"):
        load([*records[:3], "hello"])
    no_test_name = [{k: v for k, v in r.items() if k != "Test_Name"} for r in records]
    with pytest.raises(RunFormatError, match=r"record 1, field 'Test_Name': the records have "
                                             r"no field 'Test_Name'"):
        load(no_test_name)
    text = EFFECTS.read_text().replace("0.24882507684863991", "NaN", 1)
    with pytest.raises(RunFormatError, match=r"record 1, field 'ES_Replication': NaN and "
                                             r"infinity are not valid"):
        load_run(("effects.json", text.encode()))
    with pytest.raises(RunFormatError, match="invalid JSON"):
        load_run(("effects.json", EFFECTS.read_bytes()[:-20]))
    with pytest.raises(RunFormatError, match="no records"):
        load([])


def test_simple_studies_example_loads_as_a_summary_run() -> None:
    run = load_run(STUDIES)
    assert run.kind == "replication_summary" and run.warnings == ()
    with STUDIES.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(run) == len(rows)
    frame = run.frame
    for i, row in enumerate(rows):
        got = frame.iloc[i]
        assert (got["model"], got["study"], got["title"]) == (row["config"], row["study_id"],
                                                              row["title"])
        assert got["pas"] == pytest.approx(float(row["pas_raw"]))
        assert (math.isnan(got["ecs"]) if row["ecs"] == "" else
                got["ecs"] == pytest.approx(float(row["ecs"])))
        assert (got["tokens"], got["cost"]) == pytest.approx((float(row["total_tokens"]),
                                                              float(row["total_cost"])))
    board = R.summary_leaderboard(frame).set_index("model")
    v1 = [float(r["pas_raw"]) for r in rows if r["config"] == "example_agent_v1-empty"]
    assert board.loc["example_agent_v1-empty", "mean_study_pas"] == pytest.approx(
        sum(v1) / len(v1))
    assert board.loc["example_agent_v1-empty", "n_ecs"] == 2  # study_003 has no ECS
