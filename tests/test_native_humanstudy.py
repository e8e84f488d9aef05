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


# The released files (sample_data/real, MIT): the two CSVs are exports of simple_results.json,
# simple_studies.csv rounded to 4 decimals, so SPEC 5's 5e-5 tolerance applies to both.
REAL = Path(__file__).resolve().parents[1] / "sample_data" / "real" / "humanstudy-bench"
PUBLISHED_TOL = 5e-5


@pytest.fixture(scope="module")
def published() -> dict:
    return json.loads((REAL / "simple_results.json").read_text(encoding="utf-8"))["configs"]


def _close(got: object, want: object) -> bool:
    """Equal within the published rounding; a missing value only matches a missing one."""
    if want is None or (isinstance(want, float) and math.isnan(want)):
        return got is None or (isinstance(got, float) and math.isnan(got))
    return got is not None and abs(float(got) - float(want)) <= PUBLISHED_TOL


def test_real_simple_studies_csv_equals_the_json(published) -> None:
    run = load_run(REAL / "simple_studies.csv")
    assert run.kind == "replication_summary"
    want = {(config, s["study_id"]): s for config, c in published.items()
            for s in c["studies"]}
    frame = run.frame
    keys = list(zip(frame["model"].astype(str), frame["study"].astype(str), strict=True))
    assert len(set(keys)) == len(keys) == len(want) == 734  # the same rows, none twice
    assert set(keys) == set(want)
    bad = []
    for i, key in enumerate(keys):
        row, study = frame.iloc[i], want[key]
        # HumanStudy-Bench writes its CSV without quoting: commas in titles became ";"
        if row["title"] != study["title"].replace(",", ";"):
            bad.append((key, "title"))
        for ours, theirs in (("pas", "pas_raw"), ("ecs", "ecs"), ("tokens", "total_tokens"),
                             ("cost", "total_cost")):
            if not _close(row[ours], study[theirs]):
                bad.append((key, ours, row[ours], study[theirs]))
    assert not bad, bad[:5]
    # and the two files give one leaderboard: the same per-study means, within the rounding
    from_csv = R.summary_leaderboard(frame).set_index("model")
    from_json = R.summary_leaderboard(load_run(REAL / "simple_results.json").frame)
    from_json = from_json.set_index("model").loc[from_csv.index]
    for column in ("mean_study_pas", "mean_study_ecs", "n_pas", "n_ecs", "n_studies"):
        np.testing.assert_allclose(from_csv[column], from_json[column], atol=PUBLISHED_TOL)
    # the CSV has no configuration-level values: they stay missing, never a mean in disguise
    assert from_csv["config_pas"].isna().all() and from_csv["config_ecs"].isna().all()


def test_real_simple_findings_csv_equals_the_json(published) -> None:
    run = load_run(REAL / "simple_findings.csv")
    assert run.kind == "replication_summary"
    want = {(config, f["study_id"], int(f["finding_idx"])): f
            for config, c in published.items() for f in c["findings"]}
    frame = R.finding_rows(run.frame)
    assert len(frame) == len(run.frame)  # finding rows only
    keys = list(zip(frame["model"].astype(str), frame["study"].astype(str),
                    frame["finding_idx"].astype(int), strict=True))
    assert len(set(keys)) == len(keys) == 4181
    assert set(keys) == set(want)  # every published finding, and nothing else
    bad = []
    for i, key in enumerate(keys):
        row, finding = frame.iloc[i], want[key]
        # sub_study_id/finding_id, the id alone without a sub-study, "#idx" on a repeat
        sub = finding["sub_study_id"] or ""
        name = f"{sub}/{finding['finding_id']}" if sub else finding["finding_id"]
        if str(row["finding"]) not in (name, f"{name} #{finding['finding_idx']}"):
            bad.append((key, "finding", row["finding"], name))
        if not _close(row["finding_score"], finding["finding_score"]):
            bad.append((key, "finding_score", row["finding_score"], finding["finding_score"]))
        if int(row["n_tests"]) != finding["n_tests"]:
            bad.append((key, "n_tests", row["n_tests"], finding["n_tests"]))
    assert not bad, bad[:5]
    # the JSON's own finding rows carry the same values
    from_json = R.finding_rows(load_run(REAL / "simple_results.json").frame)
    merged = frame.astype({"model": str, "study": str}).merge(
        from_json.astype({"model": str, "study": str}), on=["model", "study", "finding_idx"],
        suffixes=("_csv", "_json"), validate="one_to_one")
    assert len(merged) == len(frame)
    np.testing.assert_allclose(merged["finding_score_csv"], merged["finding_score_json"],
                               atol=PUBLISHED_TOL)
    assert (merged["n_tests_csv"] == merged["n_tests_json"]).all()
    assert (merged["finding_csv"].astype(str) == merged["finding_json"].astype(str)).all()
