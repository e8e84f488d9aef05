"""One model across benchmarks: kbench_core.profile and ``kbench profile`` on the bundled
KahneBench reports, HumanStudy-Bench results and a small BlockBench run made here."""

from __future__ import annotations

import io as _io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from kbench_core import bias_reports, replication
from kbench_core.aliases import load_aliases
from kbench_core.cli import main as cli_main
from kbench_core.io import Run, load_run
from kbench_core.profile import (
    COLUMNS,
    EXTRA,
    coverage,
    family_cluster,
    headline_rows,
    mean_bms_interval,
    newest,
    profile,
    ratio_ranks,
)

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "sample_data" / "real"
REPORTS = REAL / "kahnebench"
RESULTS = REAL / "humanstudy-bench" / "simple_results.json"
MULTI = ROOT.parent / "shared" / "formats" / "blockbench_multi_judge_records.json"
if not MULTI.exists():  # the repository's own copy of the format example, when present
    MULTI = ROOT / "tests" / "data" / "formats" / "blockbench_multi_judge_records.json"


@pytest.fixture(scope="module")
def real_runs() -> list[Run]:
    return [load_run(REPORTS), load_run(RESULTS)]


def blockbench_run(tmp_path: Path, *, judge: str | None = "judge-x") -> Path:
    """BlockBench multi-judge records whose detectors are named as providers name them."""
    records = json.loads(MULTI.read_bytes())
    names = {"detector_a": "anthropic/claude-haiku-4-5-20251001", "detector_b": "openai/gpt-5.2"}
    for record in records:
        record["detector_model"] = names[record["detector_model"]]
    if judge is not None:
        records = [r for r in records if r["judge_model"] == judge]
    path = tmp_path / "blockbench_records.json"
    path.write_text(json.dumps(records))
    return path


def profile_main(argv: list[str]) -> int:
    """``kbench profile ARGV...``"""
    return cli_main(["profile", *argv])


def cli_csv(capsys, *argv: str) -> pd.DataFrame:
    assert profile_main(list(argv)) == 0
    text = capsys.readouterr().out
    return pd.read_csv(_io.StringIO(text), comment="#", keep_default_na=False,
                       na_values=[""])


def test_kbench_profile_joins_claude_haiku_across_families(capsys) -> None:
    table = cli_csv(capsys, str(REPORTS), str(RESULTS))
    assert table.columns.tolist() == COLUMNS + EXTRA   # no cross-family mean column
    haiku = table[table["model"] == "claude-haiku-4.5"]
    assert set(haiku["family"]) == {"bias", "replication"}
    bias = haiku[haiku["family"] == "bias"].set_index("metric")
    # the published number, read from the report itself, under its own name
    report = json.loads((REPORTS / "fingerprint_haiku45.json").read_text())
    assert bias.loc["published_susceptibility", "value"] == pytest.approx(
        report["summary"]["overall_bias_susceptibility"], abs=5e-5)
    assert np.isnan(bias.loc["published_susceptibility", "value_low"])
    # kbench's mean BMS: the mean of the report's 15 per-bias magnitudes; 15 biases (< 30):
    # the Wilson interval of the mean as a proportion (issue 38 item 4; round 2 took its
    # union with the t interval)
    bms = np.array([v["overall_magnitude"] for v in report["magnitude_scores"].values()])
    low, high = proportion_confint(bms.mean() * len(bms), len(bms), method="wilson")
    row = bias.loc["mean_bms"]
    assert row["value"] == pytest.approx(bms.mean(), abs=5e-5)
    assert (row["value_low"], row["value_high"]) == pytest.approx((low, high), abs=5e-5)
    # the least susceptible is best: haiku's mean BMS is the highest of the 11 → rank 11
    means = {}
    for path in REPORTS.glob("fingerprint_*.json"):
        data = json.loads(path.read_text())
        means[data["model_id"]] = np.mean([v["overall_magnitude"]
                                           for v in data["magnitude_scores"].values()])
    assert max(means, key=means.get) == "claude-haiku-4-5"
    assert (row["rank"], row["n_models"], row["n"]) == (11, 11, 15)
    assert row["rank_low"] <= row["rank"] <= row["rank_high"] <= 11
    assert (row["run"], row["source"], row["raw_ids"]) == ("kahnebench", "kahnebench",
                                                           "claude-haiku-4-5")
    # HumanStudy-Bench: each configuration a row of its own, the published PAS as published
    results = json.loads(RESULTS.read_text())["configs"]
    pas = haiku[haiku["metric"] == "config_pas"].set_index("configuration")
    assert sorted(pas.index) == ["v1-empty", "v2-human", "v3-human-plus-demo",
                                 "v4-background"]
    for configuration, published in pas.iterrows():
        raw = f"anthropic_claude_haiku_4.5_{configuration}"
        assert published["raw_ids"] == raw and published["source"] == "simple_results.json"
        assert published["value"] == pytest.approx(results[raw]["pas_raw"], abs=5e-5)
        assert published["n_models"] == 63
        assert published["rank_low"] <= published["rank"] <= published["rank_high"]
        # the mean of the per-study PAS and its interval over the 12 studies: Wilson's for a
        # [0, 1] mean below 30 studies (issue 38 item 4; it was the t interval)
        studies = np.array([s["pas_raw"] for s in results[raw]["studies"]])
        mean = haiku[(haiku["metric"] == "mean_study_pas")
                     & (haiku["configuration"] == configuration)].iloc[0]
        low, high = proportion_confint(studies.mean() * len(studies), len(studies),
                                       method="wilson")
        assert (mean["value_low"], mean["value_high"]) == pytest.approx((low, high),
                                                                        abs=5e-5)
        assert np.isnan(mean["rank"])          # the rank sits beside the value it ranks


def test_profile_matches_the_family_leaderboards(real_runs) -> None:
    table = profile(real_runs)
    reports, results = real_runs
    board = bias_reports.leaderboard(reports.frame, reports.meta.get("summary")).set_index(
        "model")
    bms = table[table["metric"] == "mean_bms"].set_index("raw_ids")
    for column in ("rank", "rank_low", "rank_high", "mean_bms"):
        ours = bms["value" if column == "mean_bms" else column]
        assert np.allclose(ours.sort_index(), board[column].sort_index(), equal_nan=True)
    summary = replication.summary_leaderboard(results.frame).set_index("model")
    pas = table[table["metric"] == "config_pas"].set_index("raw_ids")
    assert len(pas) == len(summary) == 63
    for column in ("rank", "rank_low", "rank_high"):
        assert np.allclose(pas[column].sort_index(), summary[column].sort_index(),
                           equal_nan=True)


def test_a_blockbench_run_joins_too(tmp_path, capsys) -> None:
    path = blockbench_run(tmp_path)
    table = cli_csv(capsys, str(REPORTS), str(RESULTS), str(path))
    haiku = table[table["model"] == "claude-haiku-4.5"]
    assert set(haiku["family"]) == {"bias", "replication", "vulnerability"}
    tdr = haiku[haiku["metric"] == "tdr"].iloc[0]
    assert tdr["raw_ids"] == "anthropic/claude-haiku-4-5-20251001"
    assert tdr["judge"] == "judge-x" and tdr["n_models"] == 2
    # TDR by hand: judge-x found the target of both vulnerable contracts of detector_a
    # (ds_t1_001 complete, ds_t2_002 complete); the fixed contract is not vulnerable
    frame = load_run(path).frame
    rows = frame[(frame["model"].astype(str) == tdr["raw_ids"])
                 & frame["is_vulnerable"].astype(bool)]
    found = rows["target_found"].astype(float)
    assert tdr["value"] == pytest.approx(found.mean(), abs=5e-5)
    assert tdr["n"] == len(rows)
    wilson = proportion_confint(int(found.sum()), len(found), method="wilson")
    assert tdr["value_low"] <= wilson[0] + 1e-9 or tdr["value_low"] == pytest.approx(
        wilson[0], abs=5e-5)
    assert "gpt-5.2" in set(table["model"])                          # openai/gpt-5.2


def test_several_judges_are_profiled_by_their_majority(tmp_path) -> None:
    run = load_run(blockbench_run(tmp_path, judge=None))
    table = profile([run])
    assert set(table["judge"]) == {"majority"}
    assert set(table["metric"]) == {"tdr", "sui"}


def test_aliases_join_what_the_rule_cannot(tmp_path, real_runs) -> None:
    path = tmp_path / "aliases.toml"
    path.write_text('[aliases]\n"grok-4.1-fast" = ["grok-4-1-fast-reasoning", '
                    '"x_ai_grok_4.1_fast_none"]\n')
    table = profile(real_runs, aliases=load_aliases(path))
    grok = table[table["model"] == "grok-4.1-fast"]
    assert set(grok["family"]) == {"bias", "replication"}
    # every join shown, and how it was made: x_ai_grok_4.1_fast is grok-4.1-fast by rule
    how = grok.drop_duplicates("raw_ids").set_index("raw_ids")["joined_by"]
    assert how.pop("x_ai_grok_4.1_fast_v1-empty") == "rule"
    assert (how == "alias").all()
    assert set(grok["raw_ids"]) == {"grok-4-1-fast-reasoning", "x_ai_grok_4.1_fast_v1-empty",
                                    "x_ai_grok_4.1_fast_none_v1-empty",
                                    "x_ai_grok_4.1_fast_none_v2-human",
                                    "x_ai_grok_4.1_fast_none_v3-human-plus-demo",
                                    "x_ai_grok_4.1_fast_none_v4-background"}
    # without the aliases the rule keeps them apart
    plain = profile(real_runs)
    assert "grok-4.1-fast" not in set(plain[plain["family"] == "bias"]["model"])


def test_bias_trials_rank_as_the_susceptibility_table() -> None:
    from kbench_core import kahne
    from kbench_core.families.bias import FingerprintOptions, susceptibility_table

    run = load_run(ROOT / "sample_data" / "bias.csv")
    table = profile([run]).set_index("raw_ids")
    board = susceptibility_table(kahne.fingerprint(
        run.frame, **FingerprintOptions().fingerprint())).set_index("model")
    assert np.allclose(table["rank"].sort_index(), board["rank"].astype(float).sort_index())
    assert np.allclose(table["value"].sort_index(), board["susceptibility"].sort_index())
    assert (table["rank_low"] <= table["rank"]).all() and (table["rank"]
                                                           <= table["rank_high"]).all()
    # the rank text the page shows says the same interval
    for model, row in table.iterrows():
        text = board.loc[model, "rank_text"]
        assert text.startswith(f"{row['rank']:g} [{row['rank_low']:g}, {row['rank_high']:g}]")


def test_coverage_and_newest(real_runs) -> None:
    reports, results = real_runs
    again = Run(name="kahnebench-2", kind=reports.kind, frame=reports.frame, meta=reports.meta)
    table = profile([reports, results, again])
    cover = coverage(table).table.set_index("model")
    assert cover.loc["claude-haiku-4.5", "bias"] == 2            # two runs hold it
    assert cover.loc["claude-haiku-4.5", "replication"] == 1
    assert bool(cover.loc["claude-haiku-4.5", "complete"])
    assert not cover.loc["claude-opus-4.7", "complete"]          # no replication result
    assert cover["complete"].sum() == 1
    latest = newest(table, [reports.name, results.name, again.name])
    haiku = latest[(latest["model"] == "claude-haiku-4.5") & (latest["metric"] == "mean_bms")]
    assert haiku["run"].tolist() == ["kahnebench-2"] and haiku["others"].tolist() == [
        "kahnebench"]
    pas = latest[latest["metric"] == "config_pas"]
    assert (pas["others"] == "").all()
    heads = headline_rows(table)
    assert set(heads["metric"]) == {"mean_bms", "config_pas"}


def test_mean_bms_interval_covers() -> None:
    # The interval profile prints beside mean_bms (t over biases, widened to the Wilson-type
    # bound below 30 biases) covers the true mean BMS: few biases, a mean near 0 or 1, and
    # many biases. The t interval alone covered 83 % at 4 biases of Beta(0.5, 20).
    rng = np.random.default_rng(3)
    reps = 2000  # each replicate a "model" of one call: vectorised
    for n_biases, a, b in ((15, 2.0, 6.0), (4, 0.5, 20.0), (4, 20.0, 0.5), (2, 1.0, 1.0),
                           (40, 0.5, 5.0)):
        truth = a / (a + b)
        frame = pd.DataFrame({"model": np.repeat(np.arange(reps), n_biases).astype(str),
                              "bias": np.tile(np.arange(n_biases), reps).astype(str),
                              "bms": rng.beta(a, b, reps * n_biases)})
        got = mean_bms_interval(frame)
        assert len(got) == reps and (got["n"] == n_biases).all()
        hits = ((got["mean_bms_low"] <= truth) & (truth <= got["mean_bms_high"])).mean()
        assert hits >= 0.93, (n_biases, a, b, hits)
    # and through profile, the same numbers
    frame = frame[frame["model"].isin(["0", "1"])]
    rows = profile([Run(name="sim", kind="bias_summary", frame=frame)])
    rows = rows[rows["metric"] == "mean_bms"].set_index("raw_ids")
    assert rows.loc["0", "value_low"] == pytest.approx(got.set_index("model").loc[
        "0", "mean_bms_low"])


def test_kinds_without_a_profile_and_empty_input(tmp_path) -> None:
    assert profile([]).columns.tolist() == COLUMNS + EXTRA
    with pytest.raises(SystemExit, match="no run given has a profile"):
        finding_rows = tmp_path / "simple_findings.csv"
        finding_rows.write_bytes((REAL / "humanstudy-bench" / "simple_findings.csv")
                                 .read_bytes())
        profile_main([str(finding_rows)])


def test_command_formats_out_and_bad_aliases(tmp_path, capsys) -> None:
    out = tmp_path / "profile.tex"
    assert profile_main([str(REPORTS), "--format", "latex", "--out", str(out)]) == 0
    text = out.read_text()
    assert "claude-haiku-4.5" in text and "\\begin{tabular}" in text
    assert profile_main([str(REPORTS), "--format", "markdown"]) == 0
    shown = capsys.readouterr().out
    assert "| claude-haiku-4.5 | bias | kahnebench |" in shown
    # Wilson's interval of the mean BMS over 15 biases; no pair of the 11 models is decided
    # after Holm over their 55 pairs, so the rank interval spans every rank (issue 38)
    assert "0.2668 [0.1091, 0.5197]" in shown and "11 [1, 11]" in shown
    bad = tmp_path / "bad.toml"
    bad.write_text('[aliases]\n"a" = ["x"]\n"b" = ["x"]\n')
    with pytest.raises(SystemExit, match=r"bad\.toml: raw id 'x' is claimed by two"):
        profile_main([str(REPORTS), "--aliases", str(bad)])


def test_report_and_export_zip_hold_the_profile(real_runs) -> None:
    import zipfile

    from kbench_core.bundle_export import ExportChoice, export_zip
    from kbench_core.report import profile_table, report_html

    reports, results = real_runs
    assert profile_table([reports]) is None                 # one family: no profile section
    joined = profile_table([reports, results])
    assert set(joined["metric"]) == {"mean_bms", "config_pas"}
    # the report of two small runs of two families (the real ones take half a minute)
    small = [load_run(ROOT / "sample_data" / "bias_summary.csv"),
             load_run(ROOT / "sample_data" / "replication_summary.csv")]
    page = report_html(small)
    assert '<h2 id="profile">' in page and 'href="#profile"' in page
    shown = profile_table(small)
    assert len(shown) and all(f"<td>{m}</td>" in page for m in shown["model"])
    assert '<h2 id="profile">' not in report_html(small[:1])
    data = export_zip([reports, results], ExportChoice(items=("profile",),
                                                       table_formats=("csv",)))
    archive = zipfile.ZipFile(_io.BytesIO(data))
    assert sorted(archive.namelist()) == ["profile.csv", "provenance.json"]
    table = pd.read_csv(_io.BytesIO(archive.read("profile.csv")), comment="#")
    assert table.columns.tolist() == COLUMNS + EXTRA
    assert set(table[table["model"] == "claude-haiku-4.5"]["family"]) == {"bias",
                                                                          "replication"}
    one = zipfile.ZipFile(_io.BytesIO(export_zip([reports], ExportChoice(
        items=("profile",), table_formats=("csv",)))))
    assert "profile.csv" not in one.namelist()


def test_headline_without_the_published_pas() -> None:
    # a HumanStudy-Bench study table without configuration-level values whose studies differ
    # between configurations: the leaderboard ranks the mean PAS over the shared studies, and
    # that ranked statistic heads the rows, under its own name
    run = load_run(ROOT / "sample_data" / "replication_summary.csv")
    table = profile([run])
    assert "config_pas" not in set(table["metric"])
    heads = headline_rows(table)
    assert set(heads["metric"]) == {"shared_study_pas"}
    assert len(heads) == run.frame["model"].nunique()
    assert heads["rank"].notna().all()
    board = replication.summary_leaderboard(run.frame).set_index("model")
    assert np.allclose(heads.set_index("raw_ids")["rank"].sort_index(),
                       board["rank"].sort_index())


# --- Ranks agree with the values they sit beside (issue 37.3), resample the family's cluster
# (issue 38.2) and carry the family pages' marks (issue 38.8) -----------------------------------

LOWER_IS_BETTER = {"mean_bms", "susceptibility"}


def assert_ranks_follow_values(table: pd.DataFrame) -> None:
    """Within each run and metric: a better value never has a worse rank, equal values share
    a rank, and every rank lies inside its interval."""
    for (run, metric), rows in table[table["rank"].notna()].groupby(["run", "metric"]):
        sign = 1.0 if metric in LOWER_IS_BETTER else -1.0
        value, rank = sign * rows["value"].to_numpy(), rows["rank"].to_numpy()
        better = value[:, None] < value[None, :] - 1e-12
        assert not (better & (rank[:, None] >= rank[None, :])).any(), (run, metric)
        same = np.abs(value[:, None] - value[None, :]) <= 1e-12
        assert (rank[:, None] == rank[None, :])[same].all(), (run, metric)
        bounded = rows["rank_low"].notna()
        assert (rows.loc[bounded, "rank_low"] <= rows.loc[bounded, "rank"]).all(), (run, metric)
        assert (rows.loc[bounded, "rank"] <= rows.loc[bounded, "rank_high"]).all(), (run, metric)


def failed_on_easy_contracts(tmp_path: Path) -> Path:
    """Four detectors, 30 vulnerable contracts x 3 prompt types. Contracts 0-14 are easy (every
    detector finds the target); on the hard ones 15-29 claude finds c % 5 == 0, gemini c % 4,
    gpt c % 6, deepseek c % 3. Deepseek's judgements failed on every easy contract (its rows
    are missing), as gen-1 BlockBench's deepseek_v3.2."""
    finds = {"claude": 5, "gemini": 4, "gpt": 6, "deepseek_v3.2": 3}
    rows = []
    for c in range(30):
        for prompt in ("direct", "naturalistic", "adversarial"):
            for model, every in finds.items():
                if model == "deepseek_v3.2" and c < 15:
                    continue
                found = c < 15 or c % every == 0
                rows.append({"sample": f"c{c:02d}", "model": model, "judge": "judge-x",
                             "prompt_type": prompt, "is_vulnerable": True,
                             "said_vulnerable": True, "target_found": found})
    path = tmp_path / "failed_on_easy.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_a_rank_is_the_rank_of_the_value_shown(tmp_path) -> None:
    run = load_run(failed_on_easy_contracts(tmp_path))
    table = profile([run])
    tdr = table[table["metric"] == "tdr"].set_index("model")
    # TDR by hand over each detector's own answers: 15 easy contracts x 3 prompt types found,
    # plus the hard contracts it finds x 3
    hard = {"claude": [15, 20, 25], "gemini": [16, 20, 24, 28], "gpt": [18, 24],
            "deepseek-v3.2": [15, 18, 21, 24, 27]}
    expected = {m: ((0 if m == "deepseek-v3.2" else 45) + 3 * len(h))
                / (45 if m == "deepseek-v3.2" else 90) for m, h in hard.items()}
    assert expected == pytest.approx({"claude": 0.6, "gemini": 57 / 90, "gpt": 51 / 90,
                                      "deepseek-v3.2": 1 / 3})
    for model, value in expected.items():
        assert tdr.loc[model, "value"] == pytest.approx(value, abs=1e-12)
    # ranked as the values order them (before: deepseek, lowest TDR, ranked 1st of 4 on the
    # 45 hard answers every detector had)
    assert tdr["rank"].to_dict() == {"gemini": 1.0, "claude": 2.0, "gpt": 3.0,
                                     "deepseek-v3.2": 4.0}
    assert tdr.loc["deepseek-v3.2", "n"] == 45 and tdr.loc["claude", "n"] == 90
    # the profile says which items: the detector's own answers, and that they differ
    assert tdr["items"].str.contains("this detector's vulnerable answers judged by "
                                     "judge-x").all()
    assert tdr["items"].str.contains("30 samples|15 samples").all()
    assert tdr.loc["deepseek-v3.2", "items"].startswith(
        "this detector's vulnerable answers judged by judge-x (15 samples")
    assert tdr["items"].str.endswith("detectors differ in the answers judged").all()
    assert_ranks_follow_values(table)


def test_every_profile_rank_follows_its_value(tmp_path, real_runs) -> None:
    runs = [*real_runs, load_run(failed_on_easy_contracts(tmp_path))]
    runs += [load_run(ROOT / "sample_data" / f"{name}.csv")
             for name in ("judged", "bias", "bias_summary", "replication",
                          "replication_summary")]
    runs.append(load_run(blockbench_run(tmp_path, judge=None)))
    table = profile(runs)
    assert_ranks_follow_values(table)
    assert (table["items"] != "").all()


def test_profile_ranks_carry_the_family_pages_marks(real_runs) -> None:
    reports, results = real_runs
    table = profile([reports, results])
    # 15 biases (< 30): the bias leaderboard writes "few biases" beside every rank
    bms = table[table["metric"] == "mean_bms"]
    assert (bms["rank_note"] == "few biases").all() and len(bms) == 11
    board = bias_reports.leaderboard(reports.frame, reports.meta.get("summary"))
    assert board["few_items"].all()
    # 12 studies (< 30): the replication leaderboard writes "few studies"
    pas = table[(table["metric"] == "config_pas") & table["rank"].notna()]
    assert (pas["rank_note"] == "few studies").all() and len(pas) == 61
    # no mark where there is no rank
    assert (table.loc[table["rank"].isna(), "rank_note"] == "").all()
    # bias trials: the susceptibility table's rank text and the profile's mark agree
    from kbench_core import kahne
    from kbench_core.families.bias import FingerprintOptions, susceptibility_table

    run = load_run(ROOT / "sample_data" / "bias.csv")
    rows = profile([run]).set_index("raw_ids")
    texts = susceptibility_table(kahne.fingerprint(
        run.frame, **FingerprintOptions().fingerprint())).set_index("model")["rank_text"]
    for model, row in rows.iterrows():
        marks = texts[model].split(" · ")[1:]
        assert row["rank_note"] == " · ".join(marks), model
    # judged: "few samples" as the vulnerability leaderboard marks it
    judged = profile([load_run(ROOT / "sample_data" / "judged.csv")])
    tdr = judged[judged["metric"] == "tdr"]
    assert (tdr["rank_note"] == "few samples").all()


def identical_detectors(rng: np.random.Generator, *, missing: float = 0.0) -> pd.DataFrame:
    """Three identical detectors, 30 contracts x 3 prompt types: each contract's difficulty
    p ~ U(0.2, 0.8), and one verdict per contract and detector shared by its prompt types
    (found with probability p); ``missing`` of the answers failed at random."""
    n_contracts, n_prompts, n_models = 30, 3, 3
    p = rng.uniform(0.2, 0.8, n_contracts)
    found = rng.random((n_contracts, n_models)) < p[:, None]
    found = np.repeat(found[:, None, :], n_prompts, axis=1)
    frame = pd.DataFrame({
        "sample": np.repeat(np.arange(n_contracts), n_prompts * n_models).astype(str),
        "prompt_type": np.tile(np.repeat(np.arange(n_prompts), n_models),
                               n_contracts).astype(str),
        "model": np.tile(np.arange(n_models), n_contracts * n_prompts).astype(str),
        "found": found.ravel().astype(float)})
    return frame[rng.random(len(frame)) >= missing].reset_index(drop=True)


def apart(ranks: pd.DataFrame) -> bool:
    """Two models whose rank intervals do not overlap."""
    low, high = ranks["rank_low"].to_numpy(), ranks["rank_high"].to_numpy()
    return bool((high[:, None] < low[None, :]).any())


@pytest.mark.parametrize("missing", [0.0, 0.2])
def test_identical_detectors_are_rarely_ranked_apart(missing) -> None:
    # Resampling answers as if a contract's prompt types were independent ranked three
    # identical detectors apart in 32 % of runs (compare.rank_intervals without the cluster,
    # the profile's call before); resampling contracts (the family's cluster), 4-5 %
    # (docs/statistics.md, "Profile ranks").
    rng = np.random.default_rng(20261206)
    runs = 300
    hits = 0
    for k in range(runs):
        frame = identical_detectors(rng, missing=missing)
        values = frame.groupby("model")["found"].mean()
        hits += apart(ratio_ranks(frame, frame["found"].to_numpy(), np.ones(len(frame)),
                                  values, cluster="sample", random_state=k))
    assert hits / runs <= 0.075, hits / runs


def test_the_profile_resamples_the_family_cluster(tmp_path) -> None:
    assert family_cluster("judged") == "sample"
    assert family_cluster("bias") == "bias" and family_cluster("bias_summary") is None
    frame = identical_detectors(np.random.default_rng(5))
    judged = pd.DataFrame({"sample": "c" + frame["sample"], "model": "d" + frame["model"],
                           "judge": "judge-x", "prompt_type": frame["prompt_type"],
                           "is_vulnerable": True, "said_vulnerable": True,
                           "target_found": frame["found"].astype(bool)})
    path = tmp_path / "identical.csv"
    judged.to_csv(path, index=False)
    table = profile([load_run(path)])
    tdr = table[table["metric"] == "tdr"].set_index("raw_ids").sort_index()
    values = judged.groupby("model")["target_found"].mean()
    ours = ratio_ranks(judged, judged["target_found"].to_numpy(float),
                       np.ones(len(judged)), values, cluster="sample").set_index("model")
    # the profile's interval is the contract bootstrap's (before: answers resampled alone)
    assert tdr["rank_low"].tolist() == ours.loc[tdr.index, "rank_low"].tolist()
    assert tdr["rank_high"].tolist() == ours.loc[tdr.index, "rank_high"].tolist()
    assert tdr["value"].to_numpy() == pytest.approx(values.loc[tdr.index].to_numpy())


def test_kbench_profile_suggests_near_matches(tmp_path, capsys) -> None:
    # KahneBench's grok-4-1-fast-reasoning and HumanStudy-Bench's x_ai_grok_4.1_fast are not
    # joined by rule; the command lists them and the aliases line that would join them
    table = cli_csv(capsys, str(REPORTS), str(RESULTS))
    assert {"grok-4.1-fast-reasoning", "grok-4.1-fast"} <= set(table["model"])
    assert profile_main([str(REPORTS), str(RESULTS)]) == 0
    err = capsys.readouterr().err
    assert "kbench: 1 near-match not joined" in err
    assert ("grok-4.1-fast-reasoning (grok-4-1-fast-reasoning in kahnebench) ~ grok-4.1-fast "
            "(x_ai_grok_4.1_fast_v1-empty in simple_results)") in err
    assert '"grok-4.1-fast" = [\n    "grok-4.1-fast-reasoning",\n]' in err
    # accepted into an aliases file (with the user's own aliases), then passed back: joined
    mine = tmp_path / "mine.toml"
    mine.write_text('[aliases]\n"claude-haiku-4.5" = ["my-haiku"]\n')
    written = tmp_path / "suggested.toml"
    assert profile_main([str(REPORTS), str(RESULTS), "--aliases", str(mine),
                         "--suggest-aliases", str(written)]) == 0
    assert "wrote " in capsys.readouterr().err
    accepted = load_aliases(written)
    assert dict(accepted.aliases) == {"my-haiku": "claude-haiku-4.5",
                                      "grok-4.1-fast-reasoning": "grok-4.1-fast"}
    joined = cli_csv(capsys, str(REPORTS), str(RESULTS), "--aliases", str(written))
    grok = joined[joined["model"] == "grok-4.1-fast"]
    assert set(grok["family"]) == {"bias", "replication"}
    assert set(grok.loc[grok["family"] == "bias", "joined_by"]) == {"alias"}
    assert "near-match" not in capsys.readouterr().err


def test_every_rank_interval_caller_names_its_cluster() -> None:
    # The class of issue 38.2: a rank interval over items of several columns (sample × prompt
    # type) that resamples the items without the family's cluster. Every call of
    # rank_intervals / model_ranks / ratio_ranks / cluster_sums (ratio_ranks_from_sums' sums)
    # in the package and the app passes cluster=, or ranks one value per unit (a one-column
    # item such as "bias" or "study", its own cluster).
    import ast

    calls = []
    for folder in ("kbench_core", "kbench_app", "views"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(), filename=str(path))
            for node in ast.walk(tree):
                if not isinstance(node, ast.Call):
                    continue
                name = getattr(node.func, "attr", getattr(node.func, "id", ""))
                if name not in ("rank_intervals", "model_ranks", "ratio_ranks", "cluster_sums"):
                    continue
                keywords = {k.arg: k.value for k in node.keywords}
                item = keywords.get("item")
                one_unit = isinstance(item, ast.Constant) and isinstance(item.value, str)
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                calls.append(where)
                assert "cluster" in keywords or one_unit, where
    assert any("profile.py" in c for c in calls) and len(calls) >= 5, calls
