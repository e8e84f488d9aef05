"""Multi-judge runs (SPEC 6, issue 24 item 3, issue 23 "Judge agreement on real BlockBench
records"): the majority of chosen judges with the votes it needs, failed judgements as
"not found", the majority as the default view in the CLI, the catalog and the app."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score
from streamlit.testing.v1 import AppTest

from kbench_app import state
from kbench_core import agreement as ag
from kbench_core import families, vuln
from kbench_core.cli import main
from kbench_core.io import load_run

ROOT = Path(__file__).resolve().parent.parent
FORMATS = ROOT / "tests" / "data" / "formats"


def votes_frame(votes: dict[str, list], *, vulnerable: bool = True) -> pd.DataFrame:
    """One vulnerable answer per list position, one judge per key; None = failed judgement
    (no row, as BlockBench's reader leaves a failed record out)."""
    rows = []
    for judge, found in votes.items():
        for i, value in enumerate(found):
            if value is None:
                continue
            rows.append({"sample": f"s{i}", "model": "m", "prompt_type": "direct",
                         "judge": judge, "is_vulnerable": vulnerable,
                         "said_vulnerable": True, "target_found": value})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------- consensus options

# Four judges on five vulnerable answers (T = target found, F = not, None = failed):
#        s0  s1  s2  s3    s4
# a      T   T   T   F     T
# b      T   F   T   T     T
# c      F   F   T   None  F
# d      F   T   F   T     None
VOTES = {"a": [True, True, True, False, True],
         "b": [True, False, True, True, True],
         "c": [False, False, True, None, False],
         "d": [False, True, False, True, None]}


def test_consensus_of_chosen_judges_by_hand() -> None:
    frame = votes_frame(VOTES)
    # Every judge (4): a strict majority is 3 votes.
    # s0: 2 T 2 F -> none; s1: 2 T 2 F -> none; s2: 3 T -> T; s3: 2 T 1 F -> none;
    # s4: 2 T 1 F -> none. Without a yes majority a target is not found.
    every = ag.consensus(frame)
    assert every.attrs["min_votes"] == 3 and every.attrs["judges"] == ["a", "b", "c", "d"]
    assert every["target_found"].tolist() == [False, False, True, False, False]
    assert every["no_majority"].tolist() == ["target_found", "target_found", "",
                                             "target_found", "target_found"]
    assert (every["judge"] == "majority").all()
    # The three "published" judges a, b, c: 2 of 3.
    # s0: T T F -> T; s1: T F F -> F; s2: T T T -> T; s3: F T (c failed) -> 1-1, none;
    # s4: T T F -> T.
    three = ag.consensus(frame, judges=["c", "a", "b"])
    assert three.attrs["judges"] == ["a", "b", "c"] and three.attrs["min_votes"] == 2
    assert three["target_found"].tolist() == [True, False, True, False, True]
    assert three["n_judges"].tolist() == [3, 3, 3, 2, 3]
    assert three["no_majority"].tolist() == ["", "", "", "target_found", ""]
    # One vote of a or d (min_votes=1) wins unless the other votes against it (a tie):
    # s0 T-F tie; s1 T-T: T; s2 T-F tie; s3 F-T tie; s4 T (d failed): T.
    either = ag.consensus(frame, judges=["a", "d"], min_votes=1)
    assert either["target_found"].tolist() == [False, True, False, False, True]
    assert either["no_majority"].tolist() == ["target_found", "", "target_found",
                                              "target_found", ""]
    # The vuln tiers of the 2-of-3 majority: TDR = 3 / 5.
    assert vuln.tiers(three)["tdr"].iloc[0] == pytest.approx(3 / 5)


def test_failed_as_not_found_by_hand() -> None:
    frame = votes_frame(VOTES)
    # a, b, c with 2 votes: s3 is F, T, failed. Missing: 1-1, no majority (reported);
    # not found: F, T, F -> "no" by 2 votes, decided.
    missing = ag.consensus(frame, judges=["a", "b", "c"])
    counted = ag.consensus(frame, judges=["a", "b", "c"], failed_as="not_found")
    assert missing["no_majority"].iloc[3] == "target_found"
    assert counted["no_majority"].iloc[3] == "" and not counted["target_found"].iloc[3]
    assert counted.attrs["failed_as"] == "not_found"
    # Where the rule changes the verdict: all four, 2 votes needed. s4 is T, T, F, failed:
    # missing -> 2 T 1 F: T; not found -> 2 T 2 F: a tie, no majority, not found.
    assert ag.consensus(frame, min_votes=2)["target_found"].iloc[4]
    tied = ag.consensus(frame, min_votes=2, failed_as="not_found")
    assert not tied["target_found"].iloc[4] and tied["no_majority"].iloc[4] == "target_found"
    # n_judges still counts the judgements present.
    assert tied["n_judges"].tolist() == [4, 4, 4, 3, 3]


@pytest.mark.parametrize(("options", "message"), [
    ({"judges": ["a", "zz", "yy"]}, "no judge 'zz', 'yy' in this run; its judges other than "
                                    "'human': a, b, c, d"),
    ({"judges": ["a", "human"]}, "'human' is the reference, not a voter"),
    ({"judges": []}, "judges must name at least one judge"),
    ({"judges": ["a", "a", "b"]}, "judges names 'a' more than once"),
    ({"judges": ["a", "b"], "min_votes": 3}, "min_votes must be a whole number from 1 to 2"),
    ({"min_votes": 0}, "min_votes must be a whole number from 1 to 4"),
    ({"min_votes": 2.0}, "from 1 to 4 (the judges that vote); got 2.0"),
    ({"min_votes": True}, "got True"),
    ({"failed_as": "no"}, "failed_as must be one of 'missing', 'not_found'; got 'no'"),
])
def test_consensus_options_are_checked(options, message) -> None:
    frame = votes_frame(VOTES)
    human = frame[frame["judge"] == "a"].assign(judge="human")
    with pytest.raises(ValueError, match=None) as err:
        ag.consensus(pd.concat([frame, human], ignore_index=True), **options)
    assert message in str(err.value)


# ------------------------------------------------------------- agreement: failed_as


def test_kappa_with_failed_judgements_as_not_found_by_hand() -> None:
    # Two judges, five answers; b failed on s3 (no row).
    # a: T T F T F     b: T F F - F
    frame = votes_frame({"a": [True, True, False, True, False],
                         "b": [True, False, False, None, False]})
    # Missing (kbench's default): 4 items. p_o = 3/4; P(a=T) = 2/4, P(b=T) = 1/4;
    # p_e = .5 * .25 + .5 * .75 = .5; kappa = (.75 - .5) / (1 - .5) = 0.5.
    left_out = ag.summarize(frame, "target_found")
    assert left_out.failed_as == "missing"
    assert left_out.pairs["kappa"].iloc[0] == pytest.approx(0.5)
    assert (left_out.pairs["n"].iloc[0], left_out.fleiss.n_dropped) == (4, 1)
    # Not found (BlockBench): b's s3 is F. 5 items, p_o = 3/5; P(a=T) = 3/5, P(b=T) = 1/5;
    # p_e = .6 * .2 + .4 * .8 = .44; kappa = (.6 - .44) / (1 - .44) = 0.2857.
    counted = ag.summarize(frame, "target_found", failed_as="not_found")
    assert counted.failed_as == "not_found"
    kappa = counted.pairs["kappa"].iloc[0]
    assert kappa == pytest.approx(0.16 / 0.56)
    assert kappa == pytest.approx(cohen_kappa_score([1, 1, 0, 1, 0], [1, 0, 0, 0, 0]))
    assert (counted.pairs["n"].iloc[0], counted.fleiss.n_dropped, counted.fleiss.n) == (5, 0, 5)
    # Percent agreement: 3 of 5 unanimous.
    assert counted.percent.value == pytest.approx(3 / 5)


def test_failed_as_applies_to_the_found_labels_only() -> None:
    frame = votes_frame({"a": [True, True, False, True], "b": [True, False, None, False]})
    frame["type_match"] = np.where(frame["target_found"], "exact", "not_mentioned")
    assert ag.failed_rule("target_found", "not_found") == "not_found"
    assert ag.failed_rule("type_match", "not_found") == "missing"
    s = ag.summarize(frame, "type_match", failed_as="not_found")
    assert s.failed_as == "missing" and s.fleiss.n_dropped == 1
    table = ag.agreement_by_label(frame, ["target_found", "type_match"],
                                  failed_as="not_found")
    assert table["label"].tolist() == ["target_found"] * 3 + ["type_match"] * 3
    assert table.groupby("label")["failed_as"].first().to_dict() == {
        "target_found": "not_found", "type_match": "missing"}
    fleiss = table[(table["label"] == "target_found") & (table["coefficient"]
                                                         == "fleiss_kappa")].iloc[0]
    assert (fleiss["n"], fleiss["n_dropped"]) == (4, 0)
    # human keeps its own judgements: a failed human label is not filled.
    human = frame[frame["judge"] == "b"].assign(judge="human")
    filled = ag.count_failed_as_not_found(pd.concat([frame, human]), "target_found")
    assert (filled["judge"] == "human").sum() == 3 and (filled["judge"] == "b").sum() == 4


def test_the_detectors_own_fields_are_not_agreement_labels() -> None:
    judged = load_run(ROOT / "sample_data" / "judged.csv").frame
    offered = ag.judged_labels(judged)
    assert "said_vulnerable" not in offered and "confidence" not in offered
    assert offered[:2] == ["target_found", "type_match"]
    assert {"said_vulnerable", "confidence"} <= set(ag.judged_labels(judged, detector=True))
    bars = ag.agreement_by_label(judged)
    assert not {"said_vulnerable", "confidence"} & set(bars["label"])
    # still computed when named
    assert ag.fleiss_kappa(judged, "said_vulnerable").n > 0


# -------------------------------------------------------- BlockBench records, CLI, catalog


def records(judges: dict[str, list], *, failed: tuple = ()) -> list[dict]:
    """BlockBench multi-judge records (SPEC 1.3), one detector ``det``, one vulnerable sample
    per list position; ``failed`` holds (judge, position) pairs whose record is an error."""
    out = []
    for judge, found in judges.items():
        for i, value in enumerate(found):
            record = {"sample_id": f"ds_t1_{i:03d}", "detector_model": "det",
                      "judge_model": judge, "prompt_type": "direct",
                      "overall_verdict": {"said_vulnerable": True, "confidence_expressed": 0.9},
                      "findings": [{"classification": "TARGET_MATCH" if value
                                    else "HALLUCINATED", "location_claimed": "line 3"}],
                      "target_assessment": {"complete_found": bool(value),
                                            "partial_found": False,
                                            "type_match": "exact" if value
                                            else "not_mentioned"}}
            if (judge, i) in failed:
                record = {**record, "error": "Failed to parse JSON response"}
            out.append(record)
    return out


# Three published judges (j1, j2, j3) and a fourth (j4); j3 failed on sample 3.
#        0  1  2  3
# j1     T  T  T  F
# j2     T  F  T  T
# j3     F  F  T  (failed)
# j4     F  T  F  T
PUBLISHED = {"j1": [True, True, True, False], "j2": [True, False, True, True],
             "j3": [False, False, True, True], "j4": [False, True, False, True]}


@pytest.fixture()
def four_judges(tmp_path) -> Path:
    path = tmp_path / "gen2_records.json"
    path.write_text(json.dumps(records(PUBLISHED, failed=(("j3", 3),))))
    return path


def csv_rows(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text), comment="#")


def test_metrics_prints_the_majority_rows_first(four_judges, capsys) -> None:
    assert main(["metrics", str(four_judges), "--precision", "full"]) == 0
    out = capsys.readouterr().out
    table = csv_rows(out)
    assert table["judge"].tolist() == ["majority", "j1", "j2", "j3", "j4"]
    # The majority of all four (3 votes): 0: 2-2, 1: 2-2, 2: 3 T, 3: 2 T 1 F -> TDR 1/4.
    assert table["tdr"].tolist() == pytest.approx([1 / 4, 3 / 4, 3 / 4, 1 / 3, 2 / 4])
    assert '"consensus_judges": "all"' in out and '"failed_as": "missing"' in out


def test_metrics_reproduces_two_of_the_three_published_judges(four_judges, capsys) -> None:
    assert main(["metrics", str(four_judges), "--precision", "full", "--judges", "j1,j2,j3",
                 "--min-votes", "2", "--judge", "majority"]) == 0
    out = capsys.readouterr().out
    table = csv_rows(out)
    # 0: T T F -> T; 1: T F F -> F; 2: T T T -> T; 3: F T failed -> 1-1, not found.
    assert table["judge"].tolist() == ["majority"]
    assert table["tdr"].iloc[0] == pytest.approx(2 / 4)
    assert '"consensus_judges": ["j1", "j2", "j3"]' in out and '"min_votes": 2' in out
    # the same number from the core call
    frame = load_run(four_judges).frame
    voted = ag.consensus(frame, judges=["j1", "j2", "j3"], min_votes=2)
    assert vuln.tiers(voted)["tdr"].iloc[0] == pytest.approx(table["tdr"].iloc[0])
    # --failed-as not-found is recorded (same TDR here: a failed vote never made a yes)
    assert main(["metrics", str(four_judges), "--judges", "j1,j2,j3", "--judge", "majority",
                 "--failed-as", "not-found"]) == 0
    assert '"failed_as": "not_found"' in capsys.readouterr().out


def test_metrics_one_judge_and_clear_errors(four_judges, capsys) -> None:
    assert main(["metrics", str(four_judges), "--judge", "j2"]) == 0
    assert csv_rows(capsys.readouterr().out)["judge"].tolist() == ["j2"]
    for argv, message in (
            (["--judge", "j9"], "no judge 'j9' in this run; choose one of majority, j1, j2, j3, "
                                "j4"),
            (["--judges", "j1,j9"], "no judge 'j9' in this run; its judges other than 'human': "
                                    "j1, j2, j3, j4"),
            (["--min-votes", "5"], "min_votes must be a whole number from 1 to 4"),
            (["--judges", "j1,j2", "--min-votes", "3"], "from 1 to 2")):
        with pytest.raises(SystemExit) as err:
            main(["metrics", str(four_judges), *argv])
        assert message in str(err.value)


def test_metrics_on_the_blockbench_multi_judge_format_file(capsys) -> None:
    path = FORMATS / "blockbench_multi_judge_records.json"
    assert main(["metrics", str(path)]) == 0
    table = csv_rows(capsys.readouterr().out)
    assert table["judge"].tolist()[:2] == ["majority", "majority"]
    assert table["judge"].drop_duplicates().tolist() == ["majority", "judge-x", "judge-y",
                                                         "judge-z", "human"]


def test_compare_defaults_to_the_majority(four_judges, capsys) -> None:
    assert main(["compare", str(four_judges), "--format", "csv"]) == 0
    captured = capsys.readouterr()
    assert "# judge: majority" in captured.err
    assert main(["compare", str(four_judges), "--format", "csv", "--judge", "j1"]) == 0
    assert "# judge: j1" in capsys.readouterr().err


def test_catalog_and_export_default_to_the_majority() -> None:
    run = load_run(ROOT / "sample_data" / "judged.csv")
    stems = [stem for stem, _ in families.main_table("judged").objects(run.frame)]
    assert stems == ["tiers-majority", "tiers-judge-one", "tiers-judge-three",
                     "tiers-judge-two"]
    # figures of the majority come first too, and follow the options
    sui = next(i for i in families.items_for("judged") if i.name == "sui_chart")
    assert next(s for s, _ in sui.objects(run.frame)) == "sui_chart-majority"
    only = dict(families.main_table("judged").objects(
        run.frame, {"judge": "majority", "judges": "judge-one,judge-two", "min_votes": 1}))
    expected = vuln.tiers(ag.consensus(run.frame, judges=["judge-one", "judge-two"],
                                       min_votes=1))
    assert list(only) == ["tiers-majority"]
    assert only["tiers-majority"].set_index("model")["tdr"].to_dict() == pytest.approx(
        expected.set_index("model")["tdr"].to_dict())


# ---------------------------------------------------------------------------------- app


def vuln_page(monkeypatch, args: str, query: dict | None = None) -> AppTest:
    monkeypatch.setenv("KBENCH_APP_ARGS", args)
    state._cached_load.clear()
    at = AppTest.from_file(str(ROOT / "views" / "vuln.py"), default_timeout=120)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_vulnerability_page_opens_on_the_majority(monkeypatch) -> None:
    path = ROOT / "sample_data" / "judged.csv"
    at = vuln_page(monkeypatch, f"--no-samples {path}")
    assert at.selectbox(key="vuln_judge").value == "majority"
    assert at.selectbox(key="vuln_judge").options[:2] == ["majority", "judge-one"]
    frame = load_run(path).frame
    board = at.dataframe[0].value.set_index("model")
    expected = vuln.tiers(ag.consensus(frame)).set_index("model")
    assert board["tdr"].to_dict() == pytest.approx(expected["tdr"].to_dict())
    assert any(c.value.replace("\\", "").startswith(
        "Majority: 2 of 3 votes (judge-one, judge-three, judge-two); failed judgements left "
        "out") for c in at.caption)  # (names shown as inert text: '-' escaped)


def test_vulnerability_page_majority_of_chosen_judges_from_a_link(monkeypatch,
                                                                   four_judges) -> None:
    at = vuln_page(monkeypatch, f"--no-samples {four_judges}",
                   {"vuln_voters": ["j1", "j2", "j3"], "vuln_min_votes": "2"})
    assert at.multiselect(key="vuln_voters").value == ["j1", "j2", "j3"]
    assert at.slider(key="vuln_min_votes").value == 2
    board = at.dataframe[0].value.set_index("model")
    assert board.loc["det", "tdr"] == pytest.approx(2 / 4)  # the published 2 of 3
    assert any(c.value.startswith("Majority: 2 of 3 votes (j1, j2, j3)") for c in at.caption)
    at.selectbox(key="vuln_judge").set_value("j3").run()
    assert at.dataframe[0].value.set_index("model").loc["det", "tdr"] == pytest.approx(1 / 3)


def test_vulnerability_page_single_judge_run_has_no_majority(monkeypatch, tmp_path) -> None:
    from kbench_core import samples

    path = tmp_path / "one.csv"
    samples.judged_samples(n_samples=10, judges=("judge-one",)).to_csv(path, index=False)
    at = vuln_page(monkeypatch, f"--no-samples {path}")
    assert at.selectbox(key="vuln_judge").options == ["judge-one"]
    assert not [w for w in at.multiselect if w.key == "vuln_voters"]


def test_export_zip_defaults_to_the_majority_and_records_it() -> None:
    import zipfile

    from kbench_core.bundle_export import ExportChoice, export_zip

    run = load_run(ROOT / "sample_data" / "judged.csv")
    data = export_zip([run], ExportChoice(items=("tiers",), table_formats=("csv",)))
    archive = zipfile.ZipFile(io.BytesIO(data))
    names = sorted(n for n in archive.namelist() if n.endswith(".csv"))
    assert names == ["judged/tiers-judge-one.csv", "judged/tiers-judge-three.csv",
                     "judged/tiers-judge-two.csv", "judged/tiers-majority.csv"]
    text = archive.read("judged/tiers-majority.csv").decode()
    assert '"consensus_judges": "all"' in text and '"min_votes": "majority"' in text
    table = csv_rows(text)
    assert (table["judge"] == "majority").all()


def test_kappa_figure_names_the_rule_for_failed_judgements() -> None:
    run = load_run(FORMATS / "blockbench_multi_judge_records.json")
    item = next(i for i in families.items_for("judged") if i.name == "kappa_heatmap")
    default = next(fig for _, fig in item.objects(run.frame))
    counted = next(fig for _, fig in item.objects(run.frame, {"failed_as": "not-found"}))
    assert "failed left out" in default.layout.title.text
    assert "failed = not found" in counted.layout.title.text
    # judge-z's failed record counts as "not found": its kappas use the filled frame
    data = ag.count_failed_as_not_found(run.frame, "target_found")
    z = np.array(counted.data[0].z, dtype=float)
    expected = ag.pairwise_kappa(data, "target_found")["kappa"].to_numpy()
    assert np.nanmax(z[np.triu_indices_from(z, 1)]) == pytest.approx(np.nanmax(expected))


def test_a_judge_called_majority_is_refused_by_name(tmp_path) -> None:
    """A judge named like the consensus would print as a second ``majority`` block beside the
    real one; its rows are refused with the reason (and skipped when loading with skip)."""
    frame = pd.read_csv(Path(__file__).parents[1] / "sample_data" / "judged.csv")
    frame.loc[frame["judge"] == "judge-one", "judge"] = " Majority"
    path = tmp_path / "named.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(Exception, match="the name kbench gives the judges' consensus"):
        load_run(path)
    run = load_run(path, on_error="skip")
    assert set(run.frame["judge"].astype(str)) == {"judge-two", "judge-three"}
    assert any("field 'judge'" in w and "rename this judge" in w for w in run.warnings)
