"""BlockBench judge outputs through kbench_core.io.load_run: folders, zip, tar.gz, the
multi-judge record list, ground truth and malformed input."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kbench_core import vuln
from kbench_core.io import RunFormatError, load_run
from kbench_core.native.blockbench import parse_lines

FORMATS = Path(__file__).resolve().parents[2] / "shared" / "formats"
FOLDER = FORMATS / "blockbench_judge_output"
GROUND_TRUTH = FORMATS / "blockbench_ground_truth_example.json"
MULTI = FORMATS / "blockbench_multi_judge_records.json"
J_A_DS = "detector_a/judge_outputs/j_ex_ds_001_direct.json"
J_B_TC = "detector_b/judge_outputs/j_ex_tc_002_direct.json"


def tree() -> dict[str, bytes]:
    return {p.relative_to(FOLDER).as_posix(): p.read_bytes()
            for p in sorted(FOLDER.rglob("*")) if p.is_file()}


def write_tree(root: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def edit(files: dict[str, bytes], path: str, change) -> dict[str, bytes]:
    record = json.loads(files[path])
    change(record)
    return {**files, path: json.dumps(record).encode()}


def zipped(files: dict[str, bytes], top: str = "") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(top + name, data)
    return buffer.getvalue()


def tar_gz(files: dict[str, bytes], top: str = "") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(top + name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def by_key(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.set_index(["model", "sample"]).sort_index()


# ------------------------------------------------------------------ the shared example


def test_folder_example() -> None:
    run = load_run(FOLDER)
    assert run.kind == "judged" and run.name == "blockbench_judge_output"
    assert run.meta["format"] == "BlockBench judge outputs (folder)"
    assert run.warnings == ()
    frame = by_key(run.frame)
    assert len(frame) == 6 and set(frame["judge"]) == {"Example Judge"}
    assert set(frame["prompt_type"]) == {"direct"}
    a = frame.loc[("detector_a", "ex_ds_001")]
    assert (a["is_vulnerable"], a["said_vulnerable"], a["target_found"]) == (True, True, True)
    assert (a["confidence"], a["rcir"], a["ava"], a["fsv"]) == (0.52, 0.55, 0.69, 0.54)
    assert a["type_match"] == "exact" and a["n_target_match"] == 1
    assert a["claimed_lines"] == "12;13;14;15;16;17;18"     # "lines 12-18"
    b = frame.loc[("detector_b", "ex_tc_002")]
    # a hallucinated finding, target not found: a lucky guess
    assert (b["target_found"], b["n_hallucinated"], b["n_target_match"]) == (False, 1, 0)
    assert np.isnan(b["rcir"]) and pd.isna(b["claimed_lines"])
    safe = frame.loc[("detector_a", "ex_safe_003")]
    assert safe["is_vulnerable"] is np.False_ or safe["is_vulnerable"] == False  # noqa: E712
    assert run.meta["ground_truth"].startswith("sample_metrics")


def test_tiers_of_the_example() -> None:
    table = vuln.tiers(load_run(FOLDER).frame).set_index("model")
    # both detectors: right on all three (2 vulnerable said vulnerable, 1 safe said safe)
    assert table["accuracy"].tolist() == [1.0, 1.0]
    # detector_a finds both targets, detector_b one of two (ex_tc_002 is a lucky guess)
    assert table.loc["detector_a", "tdr"] == 1.0 and table.loc["detector_b", "tdr"] == 0.5
    assert table.loc["detector_b", "lucky_guess_rate"] == 0.5
    assert table.loc["detector_b", "hallucination_rate"] == 0.5  # 1 of 2 findings
    # reasoning over found targets: detector_a rcir (0.55 + 0.94) / 2
    assert table.loc["detector_a", "mean_rcir"] == pytest.approx((0.55 + 0.94) / 2)
    assert table.loc["detector_b", "mean_fsv"] == pytest.approx(0.58)


@pytest.mark.parametrize("top", ["", "blockbench_judge_output/"])
def test_zip_and_tar_gz_hold_the_same_run(tmp_path, top) -> None:
    reference = by_key(load_run(FOLDER).frame)
    zip_path = tmp_path / "judge_outputs.zip"
    zip_path.write_bytes(zipped(tree(), top))
    tgz_path = tmp_path / "judge_outputs.tar.gz"
    tgz_path.write_bytes(tar_gz(tree(), top))
    for path, kind in ((zip_path, "zip"), (tgz_path, "tar.gz")):
        run = load_run(path)
        assert run.meta["format"] == f"BlockBench judge outputs ({kind})"
        assert run.name == "judge_outputs"
        pd.testing.assert_frame_equal(by_key(run.frame), reference, check_categorical=False)
    # bytes in memory, as the app's uploader gives them
    run = load_run(("upload.zip", zipped(tree(), top)))
    assert len(run.frame) == 6


def test_ground_truth_file_given() -> None:
    run = load_run(FOLDER, ground_truth=GROUND_TRUTH)
    frame = by_key(run.frame)
    assert run.meta["ground_truth"] == "blockbench_ground_truth_example.json"
    ds = frame.loc[("detector_a", "ex_ds_001")]
    assert (ds["severity"], ds["vuln_type"], ds["true_lines"]) == ("high", "reentrancy",
                                                                  "12;13;14")
    assert frame.loc[("detector_a", "ex_tc_002"), "severity"] == "critical"
    assert pd.isna(frame.loc[("detector_a", "ex_safe_003"), "severity"])
    table = vuln.tiers(run.frame).set_index("model")
    # detector_a: ex_ds_001 claims 12-18, true 12-14: 3/3; ex_tc_002 claims 12-18, true 31: 0
    assert table.loc["detector_a", "location_accuracy"] == pytest.approx(0.5)
    # severity-weighted TDR of detector_b: found the high (2) target, missed the critical (3)
    weighted = vuln.tiers(run.frame, severity_weights=vuln.SEVERITY_WEIGHTS)
    assert weighted.set_index("model").loc["detector_b", "tdr"] == pytest.approx(2 / 5)
    # gzipped ground truth, given as bytes
    again = load_run(FOLDER, ground_truth=("gt.json.gz", gzip.compress(
        GROUND_TRUTH.read_bytes())))
    pd.testing.assert_frame_equal(again.frame, run.frame)


def test_ground_truth_inside_the_bundle(tmp_path) -> None:
    files = {**tree(), "ground_truth/samples.json": GROUND_TRUTH.read_bytes(),
             "README.json": b'{"note": "not ground truth"}'}
    metrics = {k: v for k, v in files.items() if "sample_metrics" not in k}
    run = load_run(("bundle.zip", zipped(metrics, "top/")))
    assert run.meta["ground_truth"] == "top/ground_truth/samples.json"
    assert by_key(run.frame).loc[("detector_b", "ex_tc_002"), "severity"] == "critical"


def test_ground_truth_conflict_is_reported(tmp_path) -> None:
    truth = json.loads(GROUND_TRUTH.read_bytes())
    truth[2]["ground_truth"]["is_vulnerable"] = True   # ex_safe_003 now vulnerable
    run = load_run(FOLDER, ground_truth=("gt.json", json.dumps(truth).encode()))
    assert any("differs from sample_metrics" in w and "m_ex_safe_003_direct.json" in w
               for w in run.warnings)
    assert by_key(run.frame).loc[("detector_a", "ex_safe_003"), "is_vulnerable"]


# ------------------------------------------------------------------ malformed folders


def test_sample_without_ground_truth_is_named(tmp_path) -> None:
    files = {k: v for k, v in tree().items() if k != "detector_b/sample_metrics/"
             "m_ex_tc_002_direct.json"}
    with pytest.raises(RunFormatError) as info:
        load_run(write_tree(tmp_path / "run", files))
    message = str(info.value)
    assert "run: file detector_b/judge_outputs/j_ex_tc_002_direct.json" in message
    assert "sample 'ex_tc_002' has no ground truth" in message
    assert "field 'ground_truth'" in message


def test_invalid_json_member_is_a_failed_judgement() -> None:
    files = {**tree(), J_A_DS: b'{"sample_id": "ex_ds_001", '}
    run = load_run(("bad.zip", zipped(files)))
    # no record to read a sample or judge from: nowhere to place a row
    assert ("detector_a", "ex_ds_001") not in by_key(run.frame).index
    note = next(w for w in run.warnings if "failed judgement" in w)
    assert f"file {J_A_DS} (unreadable file" in note and "1 left out" in note


# Each change makes the record unreadable as a judgement: it stays as a row whose labels are
# missing (never a "no"; docs/formats.md, issue 37), the rest of the run loads, and the warnings
# name the file and the reason. A record without a sample id has no row to stay as.
@pytest.mark.parametrize(("change", "reason"), [
    (lambda r: r["overall_verdict"].update(said_vulnerable="maybe"),
     "unreadable overall_verdict"),
    (lambda r: r.pop("overall_verdict"), "unreadable overall_verdict"),
    (lambda r: r.update(target_assessment=[1]), "target_assessment is not an object"),
    (lambda r: r.update(target_assessment={}), "empty target_assessment"),
    (lambda r: r["target_assessment"].pop("found"), "no found key"),
    (lambda r: r["target_assessment"].update(found=None), "found is not true/false"),
    (lambda r: r["target_assessment"].update(found="yes"), "found is not true/false"),
    (lambda r: r.update(error="rate limited"), "error: rate limited"),
    (lambda r: r.pop("sample_id"), "no sample_id"),
])
def test_unreadable_records_are_failed_judgements(change, reason) -> None:
    files = edit(tree(), J_A_DS, change)
    run = load_run(("run.tar.gz", tar_gz(files)))
    frame = by_key(run.frame)
    complete = len(by_key(load_run(("ok.tar.gz", tar_gz(tree()))).frame))
    if reason == "no sample_id":
        assert ("detector_a", "ex_ds_001") not in frame.index
        assert len(frame) == complete - 1
    else:
        row = frame.loc[("detector_a", "ex_ds_001")]
        assert len(frame) == complete
        assert pd.isna(row["said_vulnerable"]) and pd.isna(row["target_found"])
        assert row["failed_judgement"].startswith(reason)
        assert bool(row["is_vulnerable"])  # the ground truth is the sample's, not the judge's
        # tiers leave it out and say so: missing, not a "no"
        table = vuln.tiers(run.frame).set_index("model")
        assert table.loc["detector_a", "n_missing"] == 1
    note = next(w for w in run.warnings if "failed judgement" in w)
    assert f"file {J_A_DS} ({reason}" in note, note
    assert run.meta["failed_judgements"][0]["reason"].startswith(reason)


# Each change makes one optional field unreadable: the record stays, that field is empty
# (never guessed) and the warnings count it.
@pytest.mark.parametrize(("change", "column", "field"), [
    (lambda r: r["overall_verdict"].update(confidence_expressed=1.5), "confidence",
     "overall_verdict.confidence_expressed"),
    (lambda r: r["target_assessment"].update(type_match="perfect"), "type_match",
     "target_assessment.type_match"),
    (lambda r: r["target_assessment"].update(root_cause_identification={"score": 3}),
     "rcir", "target_assessment.root_cause_identification"),
])
def test_unreadable_optional_fields_are_left_empty(change, column, field) -> None:
    files = edit(tree(), J_A_DS, change)
    run = load_run(("run.tar.gz", tar_gz(files)))
    row = by_key(run.frame).loc[("detector_a", "ex_ds_001")]
    assert pd.isna(row[column])
    assert any(f"{field} (1)" in w for w in run.warnings), run.warnings


def test_unreadable_findings_are_counted_not_guessed() -> None:
    files = edit(tree(), J_A_DS, lambda r: r["findings"].append(3))
    row = by_key(load_run(("run.zip", zipped(files))).frame).loc[("detector_a", "ex_ds_001")]
    assert row["n_target_match"] == 1  # the readable finding still counts
    files = edit(tree(), J_A_DS, lambda r: r.update(findings="many"))
    run = load_run(("run.zip", zipped(files)))
    row = by_key(run.frame).loc[("detector_a", "ex_ds_001")]
    assert pd.isna(row["n_target_match"])  # unknown, not 0
    assert any("findings (1)" in w for w in run.warnings)


def test_missing_judge_model_is_still_a_validation_error() -> None:
    # judge is the folder format's own key field: without it the row cannot be placed
    files = edit(tree(), J_A_DS, lambda r: r.pop("judge_model"))
    with pytest.raises(RunFormatError, match="field 'judge'"):
        load_run(("run.tar.gz", tar_gz(files)))


def test_duplicate_answers_are_a_key_error() -> None:
    files = {**tree(), "detector_a/judge_outputs/j_ex_ds_001_direct_copy.json": tree()[J_A_DS]}
    with pytest.raises(RunFormatError, match="duplicate key"):
        load_run(("run.zip", zipped(files)))


def test_folder_without_judge_outputs() -> None:
    files = {k: v for k, v in tree().items() if "judge_outputs" not in k}
    with pytest.raises(RunFormatError, match="holds no benchmark output kbench knows"):
        load_run(("run.zip", zipped(files)))


def test_bad_ground_truth_file() -> None:
    with pytest.raises(RunFormatError, match=r"gt\.json is not a BlockBench ground truth"):
        load_run(FOLDER, ground_truth=("gt.json", b'{"a": 1}'))
    broken = json.loads(GROUND_TRUTH.read_bytes())
    broken[1]["ground_truth"]["is_vulnerable"] = "yes"
    with pytest.raises(RunFormatError, match=r"field 'ground_truth\.is_vulnerable': "
                                             r"ground-truth file gt.json, record 2: expected "
                                             r"true or false, got 'yes'"):
        load_run(FOLDER, ground_truth=("gt.json", json.dumps(broken).encode()))


# ------------------------------------------------------------------ conversion rules


def test_unknown_classifications_and_summary_counts() -> None:
    def unknown(record):
        record["findings"].append({"finding_id": 2, "classification": "WRONG_ROOT_CAUSE"})
        record["findings"].append({"finding_id": 3, "classification": "partial match"})

    files = edit(tree(), J_A_DS, unknown)
    # findings absent: counts come from the summary; the unnamed rest is invalid
    files = edit(files, J_B_TC, lambda r: (r.pop("findings"), r["summary"].update(
        total_findings=4, hallucinated=1, security_theater=1)))
    run = load_run(("run.zip", zipped(files)))
    frame = by_key(run.frame)
    a = frame.loc[("detector_a", "ex_ds_001")]
    assert (a["n_target_match"], a["n_partial_match"], a["n_other_invalid"]) == (1, 1, 1)
    b = frame.loc[("detector_b", "ex_tc_002")]
    assert (b["n_hallucinated"], b["n_security_theater"], b["n_other_invalid"]) == (1, 1, 2)
    assert any("WRONG_ROOT_CAUSE (1)" in w for w in run.warnings)


def test_null_score_is_not_assessed() -> None:
    files = edit(tree(), J_A_DS, lambda r: r["target_assessment"].update(
        fix_suggestion_validity=None,
        attack_vector_validity={"score": None, "reasoning": "x"}))
    a = by_key(load_run(("run.zip", zipped(files))).frame).loc[("detector_a", "ex_ds_001")]
    assert a["rcir"] == 0.55 and np.isnan(a["ava"]) and np.isnan(a["fsv"])


def test_failed_judgement_in_a_folder_is_missing() -> None:
    files = edit(tree(), J_B_TC, lambda r: r.update(error="timeout"))
    run = load_run(("run.zip", zipped(files)))
    assert len(run.frame) == 6  # kept, with its labels missing (issue 37)
    assert run.frame["target_found"].isna().sum() == 1
    assert run.meta["failed_judgements"][0]["where"] == J_B_TC
    assert any("1 failed judgement" in w and J_B_TC in w for w in run.warnings)
    # the other judgements of detector_b stand: TDR 1 of 1
    assert vuln.tiers(run.frame).set_index("model").loc["detector_b", "tdr"] == 1.0


def test_prompt_type_from_the_file_name_and_unmatched_metrics() -> None:
    files = edit(tree(), J_A_DS, lambda r: r.pop("prompt_type"))
    files["detector_a/sample_metrics/m_ex_zz_009_direct.json"] = json.dumps(
        {"sample_id": "ex_zz_009", "prompt_type": "direct",
         "ground_truth_vulnerable": True}).encode()
    run = load_run(("run.zip", zipped(files)))
    assert set(run.frame["prompt_type"]) == {"direct"}
    assert any("m_ex_zz_009_direct.json" in w and "no judge output" in w
               for w in run.warnings)


@pytest.mark.parametrize(("text", "lines"), [
    ("line 12", [12]),
    ("lines 12-14", [12, 13, 14]),
    ("withdraw function, lines 12–13", [12, 13]),
    ("Lines 3, 5 and 9", [3, 5, 9]),
    ("L12, L14", [12, 14]),
    ("Vault.sol#L40-L42", [40, 41, 42]),
    ("lines 18-16", [16, 17, 18]),
    ("line: 7", [7]),
    ("random()", None),
    ("the whole contract", None),
    ("", None),
    (None, None),
    ("Level 3 of the protocol", None),
])
def test_parse_lines(text, lines) -> None:
    assert parse_lines(text) == lines


def test_huge_ranges_are_capped() -> None:
    assert len(parse_lines("lines 1-10000000")) == 10_000


# ------------------------------------------------------------------ multi-judge records


def test_multi_judge_records() -> None:
    run = load_run(MULTI)
    assert run.meta["format"] == "BlockBench multi-judge records (json)"
    frame = run.frame
    assert len(frame) == 14                       # 14 records, one failed: kept, missing
    assert sorted(vuln.judges_of(frame)) == ["human", "judge-x", "judge-y", "judge-z"]
    inferred = next(w for w in run.warnings if w.startswith("ground truth inferred"))
    # both marks of a fixed contract are named: the variant as well as the assessment key
    assert 'variant: "differential"' in inferred and "false_positive_detected" in inferred
    assert any("1 failed judgement" in w and "record 12 (error:" in w for w in run.warnings)
    assert any("WRONG_ROOT_CAUSE (1)" in w for w in run.warnings)
    failed = run.meta["failed_judgements"][0]
    assert failed | {"reason": ""} == {
        "where": 12, "sample": "ds_t2_002", "model": "detector_b", "prompt_type": "direct",
        "judge": "judge-z", "reason": "", "kept": True}
    assert failed["reason"].startswith("error: Failed to parse JSON response")
    keyed = frame.set_index(["sample", "model", "judge"])
    fixed = keyed.loc[("df_tc_001", "detector_a", "judge-x")]
    # false_positive_detected present: a fixed (safe) contract; its value is kept
    assert not fixed["is_vulnerable"] and not fixed["target_found"]
    assert bool(fixed["claims_fixed_target"]) is True
    found = keyed.loc[("ds_t1_001", "detector_a", "judge-x")]           # complete_found
    assert found["target_found"] and found["is_vulnerable"] and found["rcir"] == 1.0
    missed = keyed.loc[("ds_t2_002", "detector_b", "judge-x")]          # only a bonus find
    assert not missed["target_found"] and np.isnan(missed["rcir"])
    human = keyed.loc[("ds_t1_001", "detector_a", "human")]
    assert human["claimed_lines"] == "40;41;42;43;44" and human["n_other_invalid"] == 1
    # the failed judgement's labels are missing, so judge-z has one answer of detector_b
    # and one missing, not a "no"
    z = vuln.tiers(frame, judge="judge-z").set_index("model")
    assert z.loc["detector_b", "n"] == 1 and z.loc["detector_b", "n_missing"] == 1
    failed_row = keyed.loc[("ds_t2_002", "detector_b", "judge-z")]
    assert pd.isna(failed_row["target_found"]) and pd.isna(failed_row["said_vulnerable"])
    assert failed_row["failed_judgement"].startswith("error: Failed to parse JSON response")
    x = vuln.tiers(frame, judge="judge-x").set_index("model")
    # judge-x, detector_a: two vulnerable found, plus the fixed contract flagged (FP)
    assert (x.loc["detector_a", "tp"], x.loc["detector_a", "fp"]) == (2, 1)
    assert x.loc["detector_b", "lucky_guess_rate"] == 0.5


def test_multi_judge_gz_and_partial_found(tmp_path) -> None:
    records = json.loads(MULTI.read_bytes())
    records[0]["target_assessment"].update(complete_found=False, partial_found=True)
    path = tmp_path / "records.json.gz"
    path.write_bytes(gzip.compress(json.dumps(records).encode()))
    run = load_run(path)
    assert run.meta["format"] == "BlockBench multi-judge records (json.gz)"
    first = run.frame.iloc[0]
    assert first["target_found"] and first["partial_found"] is True
    x = vuln.tiers(run.frame, judge="judge-x", partial_credit=0.5).set_index("model")
    assert x.loc["detector_a", "tdr"] == pytest.approx((0.5 + 1) / 2)


def test_multi_judge_with_ground_truth() -> None:
    truth = [{"id": s, "ground_truth": {"is_vulnerable": v, "severity": sev,
                                        "vulnerable_location": {"line_numbers": lines}}}
             for s, v, sev, lines in (("ds_t1_001", True, "high", [40, 41]),
                                      ("ds_t2_002", True, "low", [7]),
                                      ("df_tc_001", False, None, None))]
    run = load_run(MULTI, ground_truth=("truth.json", json.dumps(truth).encode()))
    assert not any("inferred" in w for w in run.warnings)
    assert run.meta["ground_truth"] == "truth.json"
    human = run.frame.set_index(["sample", "judge"]).loc[("ds_t1_001", "human")]
    assert human["severity"] == "high" and human["true_lines"] == "40;41"
    h = vuln.tiers(run.frame, judge="human").set_index("model")
    assert h.loc["detector_a", "location_accuracy"] == 1.0     # claims 40-44, true 40, 41
    with pytest.raises(RunFormatError, match=r"record 1, field 'sample_id': sample "
                                             r"'ds_t1_001' is not in the ground-truth file"):
        load_run(MULTI, ground_truth=("truth.json", json.dumps(truth[1:]).encode()))


def test_multi_judge_malformed_records_are_failed_judgements() -> None:
    base = load_run(MULTI)
    records = json.loads(MULTI.read_bytes())
    records[3]["overall_verdict"] = None
    records[5] = "oops"
    records[6]["target_assessment"] = {}
    run = load_run(("records.json", json.dumps(records).encode()))
    # records 4 and 7 stay as failed rows; record 6 ("oops") has no key to place it
    assert len(run) == len(base) - 1
    assert run.frame["failed_judgement"].notna().sum() == 3  # 4, 7 and the one with an error
    note = next(w for w in run.warnings if "failed judgement" in w)
    assert "4 failed judgements" in note and "3 kept" in note and "1 left out" in note
    for part in ("record 4 (unreadable overall_verdict)", "record 6 (not a record",
                 "record 7 (empty target_assessment)"):
        assert part in note, note
    records = json.loads(MULTI.read_bytes())
    records[2]["overall_verdict"]["confidence_expressed"] = "NaN"
    run = load_run(("records.json", json.dumps(records).encode()))
    assert pd.isna(run.frame.iloc[2]["confidence"])
    assert any("overall_verdict.confidence_expressed (1)" in w for w in run.warnings)
    only_failed = [r for r in json.loads(MULTI.read_bytes()) if "error" in r]
    with pytest.raises(RunFormatError, match="no judge record that can be read"):
        load_run(("records.json", json.dumps(only_failed).encode()))


def test_differential_record_with_an_empty_assessment_is_a_fixed_contract() -> None:
    records = json.loads(MULTI.read_bytes())
    records.append({"sample_id": "df_tc_009", "detector_model": "detector_a",
                    "judge_model": "judge-x", "prompt_type": "direct",
                    "variant": "differential", "target_assessment": {},
                    "overall_verdict": {"said_vulnerable": True}, "findings": []})
    run = load_run(("records.json", json.dumps(records).encode()))
    row = run.frame.set_index(["sample", "model", "judge"]).loc[
        ("df_tc_009", "detector_a", "judge-x")]
    assert not row["is_vulnerable"] and not row["target_found"]
    assert pd.isna(row["claims_fixed_target"])  # the judge gave no readable claim
    fixed = vuln.fixed_claims(run.frame, judge="judge-x").set_index("model")
    assert fixed.loc["detector_a", "n_fixed"] == 1  # df_tc_001 only
    assert fixed.loc["detector_a", "n_fixed_unknown"] == 1  # df_tc_009


_JUNK = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False),
                  st.text(max_size=8), st.lists(st.integers(), max_size=2),
                  st.dictionaries(st.text(max_size=6), st.integers(), max_size=3))


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_broken_judge_records_never_crash_and_never_count_as_no(data) -> None:
    records = json.loads(MULTI.read_bytes())
    victim = data.draw(st.integers(0, len(records) - 1))
    record = records[victim]
    place = data.draw(st.sampled_from(["overall_verdict", "target_assessment", "verdict_value",
                                       "found_value", "record"]))
    junk = data.draw(_JUNK)
    if place == "record":
        records[victim] = junk
    elif place == "verdict_value" and isinstance(record.get("overall_verdict"), dict):
        record["overall_verdict"]["said_vulnerable"] = junk
    elif place == "found_value" and isinstance(record.get("target_assessment"), dict):
        key = "complete_found" if "complete_found" in record["target_assessment"] else "found"
        record["target_assessment"][key] = junk
    else:
        record[place if place in record else "overall_verdict"] = junk
    run = load_run(("records.json", json.dumps(records).encode()))
    # every readable record is there; the broken one is either still readable or left out
    # as a failed judgement, named in the warnings: never a row that says "no" for it
    original = load_run(MULTI)
    assert len(run) in (len(original), len(original) - 1)
    if len(run) < len(original):
        assert any(f"record {victim + 1} (" in w for w in run.warnings)


def test_an_empty_first_record_does_not_hide_the_judge_records() -> None:
    """The format was told from the first record alone: an empty object there made the whole
    file 'cannot tell the run kind' (found by the property test above)."""
    records = json.loads(MULTI.read_bytes())
    records[0] = {}
    run = load_run(("records.json", json.dumps(records).encode()))
    assert len(run) == len(load_run(MULTI)) - 1 or len(run) == len(load_run(MULTI))
    assert any("record 1 (" in w for w in run.warnings)
