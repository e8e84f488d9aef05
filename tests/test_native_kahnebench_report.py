"""KahneBench fingerprint reports (bias_summary): the importer against the real released reports
(every value equal to the report's own), the edge rules of the format, and the tables the page
and exports build from them."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kbench_core import bias_reports, compare
from kbench_core.io import RunFormatError, load_run

ROOT = Path(__file__).resolve().parents[1]
REPORTS = ROOT / "sample_data" / "real" / "kahnebench"
FILES = sorted(REPORTS.glob("fingerprint_*.json"))
SECTIONS = {
    "magnitude_scores": {"overall_magnitude": "bms", "intensity_sensitivity": "sensitivity",
                         "control_score": "control_mean"},
    "consistency_indices": {"consistency_score": "bci_consistency",
                            "mean_bias_score": "bci_mean_score",
                            "standard_deviation": "bci_std", "is_systematic": "systematic"},
    "mitigation_potentials": {"baseline_bias_score": "bmp_baseline",
                              "best_mitigation_method": "best_method",
                              "mitigation_effectiveness": "effectiveness",
                              "requires_explicit_warning": "requires_warning"},
    "human_alignments": {"model_bias_rate": "model_rate", "human_baseline_rate": "human_rate",
                         "alignment_score": "alignment", "bias_direction": "direction"},
    "response_consistencies": {"consistency_score": "rci_consistency",
                               "mean_response": "rci_mean", "variance": "rci_variance",
                               "is_stable": "rci_stable", "trial_count": "rci_trials"},
}


def report(model: str = "m", biases=("anchoring_effect",), **overrides) -> dict:
    """A small report in KahneBench's schema."""
    sections = {
        "magnitude_scores": {b: {"control_score": 0.1, "treatment_scores": {
            "weak": 0.2, "moderate": 0.3, "strong": 0.4}, "overall_magnitude": 0.25,
            "intensity_sensitivity": 0.1, "unknown_rate": 0.0} for b in biases},
        "consistency_indices": {b: {"domain_scores": {"social": 0.2, "risk": 0.4},
                                    "mean_bias_score": 0.3, "consistency_score": 0.8,
                                    "standard_deviation": 0.1, "is_systematic": False}
                                for b in biases},
        "human_alignments": {b: {"model_bias_rate": 0.3, "human_baseline_rate": 0.65,
                                 "alignment_score": 0.5, "bias_direction": "super-human"}
                             for b in biases},
        "calibration_scores": {b: {"mean_confidence": 0.5, "actual_accuracy": 0.5,
                                   "calibration_error": 0.0, "calibration_score": 0.5,
                                   "overconfident": False, "metacognitive_gap": 0.0,
                                   "insufficient_confidence_data": True} for b in biases},
    }
    body = {"model_id": model, "biases_tested": list(biases), **sections,
            "summary": {"overall_bias_susceptibility": 0.25, "most_susceptible_biases":
                        list(biases)[:1], "most_resistant_biases": [],
                        "human_like_biases": [], "ai_specific_biases": []}}
    body.update(overrides)
    return body


def test_real_reports_load_with_every_value_as_published() -> None:
    run = load_run(REPORTS)
    assert run.kind == "bias_summary" and len(run) == 11 * 15
    assert any("LICENSE" in w for w in run.warnings)  # skipped and named
    frame = run.frame.set_index(["model", "bias"])
    checked = 0
    for path in FILES:
        published = json.loads(path.read_text())
        model = published["model_id"]
        for section, fields in SECTIONS.items():
            for bias, entry in published[section].items():
                row = frame.loc[(model, bias)]
                for theirs, ours in fields.items():
                    value, mine = entry[theirs], row[ours]
                    if isinstance(value, bool):
                        assert bool(mine) is value
                    elif isinstance(value, str):
                        assert str(mine) == value
                    else:
                        assert mine == value  # exactly, never recomputed
                    checked += 1
        for bias, entry in published["magnitude_scores"].items():
            row = frame.loc[(model, bias)]
            for level, value in entry["treatment_scores"].items():
                assert row[f"mean_{level}"] == value
            # unknown_rates_by_bias takes precedence over the section's own
            assert row["unknown_rate"] == published["unknown_rates_by_bias"][bias]
        for bias, entry in published["consistency_indices"].items():
            for domain, value in entry["domain_scores"].items():
                assert frame.loc[(model, bias), f"domain_{domain}"] == value
        for bias, entry in published["mitigation_potentials"].items():
            for method, value in entry["debiased_scores"].items():
                assert frame.loc[(model, bias), f"debias_{method}"] == value
        for bias, entry in published["calibration_scores"].items():
            row = frame.loc[(model, bias)]
            if entry["insufficient_confidence_data"]:  # 0.5 placeholders are not data
                assert np.isnan(row["calibration_score"]) and np.isnan(row["cas_confidence"])
            else:
                assert row["calibration_score"] == entry["calibration_score"]
                assert row["cas_accuracy"] == entry["actual_accuracy"]
        assert run.meta["summary"][model] == published["summary"]
    assert checked > 11 * 15 * 15


def test_direction_spellings_are_kept_and_mapped() -> None:
    run = load_run(REPORTS)
    pairs = set(zip(run.frame["direction"].astype(str), run.frame["direction_std"].astype(str),
                    strict=True))
    # both vocabularies occur in the released reports
    assert {("super-human", "under"), ("worse than human", "over"), ("human", "aligned"),
            ("under", "under"), ("over", "over"), ("aligned", "aligned")} == pairs


def test_one_report_a_list_and_a_zip_are_the_same_run() -> None:
    one = load_run(FILES[0])
    assert one.kind == "bias_summary" and len(one) == 15
    reports = [json.loads(p.read_text()) for p in FILES[:3]]
    listed = load_run(("reports.json", json.dumps(reports).encode()))
    assert len(listed) == 45 and listed.models == sorted(r["model_id"] for r in reports)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in [*FILES[:3], REPORTS / "LICENSE"]:
            archive.write(path, f"results/{path.name}")
    zipped = load_run(("reports.zip", buffer.getvalue()))
    pd.testing.assert_frame_equal(
        zipped.frame.sort_values(["model", "bias"]).reset_index(drop=True)[["model", "bms"]]
        .astype({"model": str}),
        listed.frame.sort_values(["model", "bias"]).reset_index(drop=True)[["model", "bms"]]
        .astype({"model": str}))


def test_shared_model_ids_are_told_apart_by_file(tmp_path) -> None:
    for stem in ("fingerprint_a", "fingerprint_b"):
        (tmp_path / f"{stem}.json").write_text(json.dumps(report("same-model")))
    (tmp_path / "fingerprint_c.json").write_text(json.dumps(report("other-model")))
    run = load_run(tmp_path)
    assert run.models == ["other-model", "same-model (fingerprint_a)",
                          "same-model (fingerprint_b)"]
    assert any("share a model id" in w for w in run.warnings)
    assert set(run.meta["summary"]) == {"other-model", "same-model (fingerprint_a)",
                                        "same-model (fingerprint_b)"}


def test_a_csv_with_the_same_columns_is_the_same_kind() -> None:
    text = (b"model,bias,bms,alignment,direction_std\n"
            b"m1,anchoring_effect,0.2,0.9,aligned\nm2,anchoring_effect,0.4,0.5,over\n")
    run = load_run(("summary.csv", text))
    assert run.kind == "bias_summary"
    # a trial file (with condition) is never taken for a summary
    trials = load_run(("t.csv", b"model,bias,condition,domain,score\nm,b,control,d,0\n"))
    assert trials.kind == "bias"


def test_bad_values_name_the_report_and_the_field() -> None:
    bad = report()
    bad["magnitude_scores"]["anchoring_effect"]["overall_magnitude"] = "high"
    with pytest.raises(RunFormatError, match="bms"):
        load_run(("fingerprint_m.json", json.dumps(bad).encode()))
    bad = report()
    bad["human_alignments"] = ["not", "an", "object"]
    with pytest.raises(RunFormatError, match="human_alignments"):
        load_run(("fingerprint_m.json", json.dumps(bad).encode()))


def test_tables_for_the_page_and_the_exports() -> None:
    run = load_run(("fingerprint_m.json", json.dumps(report(biases=("a_bias", "b_bias")))
                    .encode()))
    frame = run.frame
    curves = bias_reports.intensity_table(frame)
    assert curves["mean_weak"].tolist() == [0.2, 0.2] and curves["mean_weak_low"].isna().all()
    cells = bias_reports.domain_cells(frame)
    assert sorted(cells["domain"].unique()) == ["risk", "social"]
    assert cells.set_index(["bias", "domain"]).loc[("a_bias", "risk"), "mean_score"] == 0.4
    alignment = bias_reports.alignment_table(frame)
    assert alignment["direction"].tolist() == ["under", "under"]  # super-human -> under
    calibration = bias_reports.calibration_table(frame)
    assert not calibration["has_confidence_data"].any()  # insufficient confidence data
    summary = bias_reports.published_summary(frame, run.meta["summary"])
    assert summary.loc[0, "susceptibility"] == 0.25 and summary.loc[0, "n_biases"] == 2


def test_leaderboard_ranks_the_real_reports_by_published_susceptibility() -> None:
    run = load_run(REPORTS)
    board = bias_reports.leaderboard(run.frame, run.meta["summary"], n_boot=300)
    published = {json.loads(p.read_text())["model_id"]: json.loads(p.read_text())["summary"]
                 ["overall_bias_susceptibility"] for p in FILES}
    assert board.set_index("model")["susceptibility"].to_dict() == published
    # the published susceptibility is the mean of the 15 reported BMS: same order, rank 1 the
    # least biased
    assert board["mean_bms"].to_numpy() == pytest.approx(board["susceptibility"].to_numpy())
    assert board["model"].iloc[0] == min(published, key=published.get)
    assert board["few_items"].all() and (board["n_dropped"] == 0).all()
    assert (board["rank_low"] <= board["rank"]).all() and (board["rank"] <= board["rank_high"]
                                                            ).all()


def test_compare_pairs_models_by_bias_on_the_reported_bms() -> None:
    frame = load_run(REPORTS).frame
    a, b = "claude-opus-4-7", "claude-haiku-4-5"
    est = compare.paired_difference(frame, "bms", a, b, item="bias")
    wide = frame.pivot_table(index="bias", columns="model", values="bms", observed=True)
    diff = wide[a] - wide[b]
    assert est.n == 15 and est.value == pytest.approx(diff.mean())
    from scipy import stats

    assert est.p_value == pytest.approx(stats.ttest_rel(wide[a], wide[b]).pvalue)


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_broken_reports_give_a_message_never_a_crash(data) -> None:
    body = report(biases=("x_bias",))
    section = data.draw(st.sampled_from(["magnitude_scores", "consistency_indices",
                                         "human_alignments", "calibration_scores"]))
    junk = data.draw(st.one_of(st.none(), st.integers(), st.text(max_size=5),
                               st.lists(st.integers(), max_size=2),
                               st.dictionaries(st.text(max_size=3), st.integers(),
                                               max_size=2)))
    if data.draw(st.booleans()):
        body[section] = junk
    else:
        body[section]["x_bias"] = junk
    try:
        run = load_run(("fingerprint_x.json", json.dumps(body).encode()))
    except RunFormatError as err:
        assert "fingerprint_x.json" in str(err)
    else:
        assert run.kind == "bias_summary"


# ------------------------------------------------------------------ hostile summary (issue 19)

def _summary_text(summary: object) -> bytes:
    body = report()
    body["summary"] = "@SUMMARY@"
    return json.dumps(body).replace('"@SUMMARY@"', summary if isinstance(summary, str)
                                    else json.dumps(summary)).encode()


@pytest.mark.parametrize(("summary", "field"), [
    ('{"overall_bias_susceptibility": ' + "9" * 400 + "}", "overall_bias_susceptibility"),
    ('{"overall_bias_susceptibility": 1e999}', "overall_bias_susceptibility"),
    ('{"overall_bias_susceptibility": NaN}', "overall_bias_susceptibility"),
    ('{"overall_bias_susceptibility": 1.5}', "overall_bias_susceptibility"),
    ('{"overall_bias_susceptibility": "0.2"}', "overall_bias_susceptibility"),
    ('{"overall_bias_susceptibility": true}', "overall_bias_susceptibility"),
    ('{"most_susceptible_biases": [{"deep": [1, 2]}]}', "most_susceptible_biases"),
    ('{"human_like_biases": "anchoring_effect"}', "human_like_biases"),
    ('{"ai_specific_biases": ["' + "x" * 500 + '"]}', "ai_specific_biases"),
    ("[1, 2]", "summary"),
])
def test_a_bad_summary_value_is_a_named_error(summary, field) -> None:
    with pytest.raises(RunFormatError, match=f"field 'summary(.{field})?'") as info:
        load_run(("fingerprint_m.json", _summary_text(summary)))
    assert str(info.value).startswith("fingerprint_m.json")
    assert field in str(info.value)


def test_unused_summary_fields_are_dropped_with_a_warning() -> None:
    run = load_run(("fingerprint_m.json", _summary_text(
        {"overall_bias_susceptibility": 0, "most_resistant_biases": [" b "],
         "extra": {"deep": [1]}})))
    assert run.meta["summary"]["m"] == {"overall_bias_susceptibility": 0.0,
                                        "most_resistant_biases": ["b"]}
    assert any("dropped" in w and "'extra'" in w for w in run.warnings), run.warnings


def test_bias_keys_of_a_section_go_through_the_name_check() -> None:
    body = report()
    body["magnitude_scores"]["x" * 500] = body["magnitude_scores"]["anchoring_effect"]
    with pytest.raises(RunFormatError, match="longer than 100"):
        load_run(("fingerprint_m.json", json.dumps(body).encode()))
    body = report()
    body["human_alignments"][""] = body["human_alignments"]["anchoring_effect"]
    with pytest.raises(RunFormatError, match="non-empty name"):
        load_run(("fingerprint_m.json", json.dumps(body).encode()))
