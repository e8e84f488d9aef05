"""The synthetic mirrors of BlockBench's real judge records
(:mod:`kbench_core.samples.blockbench_mirror`): they load with kbench's readers (warnings, never a
refusal), have the promised shape, are the same bytes for the same seed, and carry the planted
numbers, worked by hand below."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from kbench_core import io, vuln
from kbench_core.families.judged import judge_views
from kbench_core.samples import blockbench_mirror as mirror


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> list[Path]:
    return mirror.write_mirrors(tmp_path_factory.mktemp("mirror"), seed=0)


@pytest.fixture(scope="module")
def runs(written) -> dict[str, io.Run]:
    folder, archive, ds, tc = written
    return {"gen1": io.load_run(folder), "zip": io.load_run(archive),
            "ds": io.load_run(ds), "tc": io.load_run(tc)}


def majority(run: io.Run, failed_as: str = "missing") -> pd.DataFrame:
    return dict(judge_views(run.frame, {"failed_as": failed_as}))["majority"]


def cell(table: pd.DataFrame, column: str, **where) -> object:
    mask = pd.Series(True, index=table.index)
    for key, value in where.items():
        mask &= table[key].astype(str) == value
    (value,) = table.loc[mask, column]
    return value


def test_the_files_written(written) -> None:
    folder, archive, ds, tc = written
    assert [p.name for p in written] == ["blockbench_mirror_gen1", "blockbench_mirror_gen1.zip",
                                         "blockbench_mirror_ds.json",
                                         "blockbench_mirror_tc.json"]
    assert folder.is_dir() and archive.is_file()
    assert "made up" in (folder.parent / "README.txt").read_text()
    # 8 detectors x 36 contracts x 3 prompt types, a judge file and a metrics file each
    assert len(list(folder.glob("*/judge_outputs/j_*.json"))) == 8 * 36 * 3
    assert len(list(folder.glob("*/sample_metrics/m_*.json"))) == 8 * 36 * 3
    metrics = json.loads((folder / "gpt-5.2/sample_metrics/m_safe_001_direct.json").read_text())
    assert metrics["ground_truth_vulnerable"] is False
    for path in (ds, tc):
        records = json.loads(path.read_text())
        assert all(r["notes"].startswith("synthetic mirror") for r in records)


def test_every_mirror_loads_with_warnings_never_a_refusal(runs) -> None:
    for name, run in runs.items():
        assert run.kind == "judged", name
        assert any("failed judgement" in w for w in run.warnings), name
    for name in ("ds", "tc"):
        warnings = runs[name].warnings
        assert any(w.startswith("ground truth inferred") for w in warnings)
        assert any("WRONG_ROOT_CAUSE" in w for w in warnings)  # newer judges' class
    assert not any("WRONG_ROOT_CAUSE" in w for w in runs["gen1"].warnings)


def test_gen1_shape(runs) -> None:
    frame = runs["gen1"].frame
    assert set(frame["judge"].astype(str)) == {mirror.GEN1_JUDGE}
    assert sorted(frame["model"].astype(str).unique()) == sorted(mirror.GEN1_HITS)
    assert {"deepseek_v3.2", "gemini_3_pro_preview", "claude-opus-4-5"} <= set(
        frame["model"].astype(str))
    assert set(frame["prompt_type"].astype(str)) == set(mirror.GEN1_PROMPT_TYPES)
    truth = frame.drop_duplicates("sample").set_index("sample")["is_vulnerable"]
    assert (len(truth), int(truth.sum())) == (36, 28)
    failed = frame[frame["failed_judgement"].notna()]
    assert len(failed) == 2 and failed["said_vulnerable"].isna().all()
    assert set(failed["model"].astype(str)) == {"kimi-k2"}
    # the zip holds the same run
    key = ["model", "sample", "prompt_type"]
    left = frame.sort_values(key).reset_index(drop=True)
    right = runs["zip"].frame.sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(left.astype(str), right.astype(str))


def test_ds_shape(runs) -> None:
    frame = runs["ds"].frame
    assert set(frame["judge"].astype(str)) == set(mirror.DS_JUDGES)
    assert sorted(frame["model"].astype(str).unique()) == sorted(mirror.DS_HITS)
    contracts = frame.drop_duplicates("sample")["difficulty"].astype(str).value_counts()
    assert contracts.to_dict() == {"t1": 20, "t2": 10, "t3": 5, "t4": 3}
    assert len(frame) == 7 * 38 * 3
    failed = frame[frame["failed_judgement"].notna()]
    assert len(failed) == 40  # 5 % of 798, every one kept as a row with a missing label
    assert failed["target_found"].isna().all()
    assert failed["failed_judgement"].str.startswith("error: Failed to parse JSON").all()
    # every judge of one contract failed, for llama (t1) and qwen (t3)
    per_answer = failed.groupby(["model", "sample"], observed=True).size()
    assert sorted((m, str(s)[:5]) for (m, s), n in per_answer.items() if n == 3) == [
        ("llama-4-maverick", "ds_t1"), ("qwen3-coder-plus", "ds_t3")]
    assert frame["partial_found"].eq(True).sum() > 20
    assert frame["n_other_invalid"].fillna(0).sum() > 0  # WRONG_ROOT_CAUSE findings


def test_tc_shape(runs) -> None:
    frame = runs["tc"].frame
    assert set(frame["judge"].astype(str)) == set(mirror.TC_JUDGES)
    fixed = frame[~frame["is_vulnerable"].astype(bool)]
    assert sorted(fixed["sample"].astype(str).unique()) == list(mirror.TC_FIXED)
    assert len(fixed) == 7 * 8 * 5  # fixed even where the judge failed (variant kept)
    readable = fixed[fixed["failed_judgement"].isna()]
    assert readable["claims_fixed_target"].notna().all()
    assert not frame[frame["is_vulnerable"].astype(bool)]["sample"].astype(str).str.startswith(
        "df_").any()


@pytest.mark.parametrize("failed_as", ["missing", "not_found"])
def test_planted_ds_tiers_by_hand(runs, failed_as) -> None:
    """DS, the majority (2 of 3 judges). llama-4-maverick finds 9 of the 20 t1 contracts, and
    all three judges failed on a tenth of its t1 contracts (not a found one): missing by default,
    so 9/19; "not found" under BlockBench's convention, so 9/20. qwen3-coder-plus the same in t3:
    2 of 4 judged, 2 of 5. claude-opus-4-5 finds 7 of 10 in t2 under either."""
    table = vuln.tiers(majority(runs["ds"], failed_as), by=("model", "difficulty"))
    judged_t1 = 19 if failed_as == "missing" else 20
    judged_t3 = 4 if failed_as == "missing" else 5
    tdr = lambda model, tier: cell(table, "tdr", model=model, difficulty=tier)  # noqa: E731
    assert tdr("llama-4-maverick", "t1") == pytest.approx(9 / judged_t1)
    assert cell(table, "n_vulnerable", model="llama-4-maverick", difficulty="t1") == judged_t1
    assert tdr("qwen3-coder-plus", "t3") == pytest.approx(2 / judged_t3)
    assert tdr("claude-opus-4-5", "t2") == pytest.approx(7 / 10)
    assert tdr("gemini-3-pro", "t4") == pytest.approx(2 / 3)
    pooled = vuln.tiers(majority(runs["ds"], failed_as))
    # llama's pooled TDR: (9 + 3 + 1 + 0) found of 37 (38) judged; the DS "Avg" the mean of
    # the four tier rates
    assert cell(pooled, "tdr", model="llama-4-maverick") == pytest.approx(13 / (judged_t1 + 18))
    assert cell(pooled, "tdr_difficulty_mean", model="llama-4-maverick") == pytest.approx(
        (9 / judged_t1 + 3 / 10 + 1 / 5 + 0 / 3) / 4)


def test_planted_gen1_and_tc_by_hand(runs) -> None:
    gen1 = vuln.tiers(runs["gen1"].frame, judge=mirror.GEN1_JUDGE)
    # deepseek_v3.2 finds 14 + 12 + 10 of 28 vulnerable contracts per prompt type
    assert cell(gen1, "tdr", model="deepseek_v3.2") == pytest.approx(36 / 84)
    assert cell(gen1, "tdr", model="gemini_3_pro_preview") == pytest.approx(51 / 84)
    by_prompt = vuln.tiers(runs["gen1"].frame, judge=mirror.GEN1_JUDGE,
                           by=("model", "prompt_type"))
    assert cell(by_prompt, "tdr", model="gpt-5.2", prompt_type="adversarial") == \
        pytest.approx(14 / 28)
    # TC, the majority (3 of 5): claude finds 14 of 20, still claims 2 of the 8 fixed bugs
    fixed = vuln.fixed_claims(majority(runs["tc"]))
    assert cell(fixed, "tdr", model="claude-opus-4-5") == pytest.approx(14 / 20)
    assert cell(fixed, "fixed_claim_rate", model="claude-opus-4-5") == pytest.approx(2 / 8)
    assert cell(fixed, "fixed_claim_rate", model="llama-4-maverick") == pytest.approx(6 / 8)


def test_same_seed_same_bytes_other_seed_other_records_same_numbers(written, tmp_path) -> None:
    again = mirror.write_mirrors(tmp_path / "again", seed=0)

    def tree(root: Path) -> dict[str, bytes]:
        return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
                if p.is_file()}

    assert tree(written[0].parent) == tree(again[0].parent)
    other = mirror.ds_records(seed=1)
    assert other != mirror.ds_records(seed=0)
    run = io.load_run(("ds.json", json.dumps(other).encode()))
    table = vuln.tiers(majority(run), by=("model", "difficulty"))
    assert cell(table, "tdr", model="llama-4-maverick", difficulty="t1") == pytest.approx(9 / 19)


def test_the_command_line(tmp_path, capsys) -> None:
    assert mirror.main([str(tmp_path), "--seed", "2"]) == 0
    assert "blockbench_mirror_ds.json" in capsys.readouterr().out
    assert "seed 2" in (tmp_path / "README.txt").read_text()
    assert mirror.main([]) == 2
