"""Synthetic runs with planted effects whose metric values are known in closed form.

One generator per run kind. Each is seeded and vectorised (numpy over all cells at once), so
the same code writes the small bundled ``sample_data/`` files and the million-row runs of
``benchmarks/``. Model names are plainly synthetic (``synthetic-...``): no real model's name
ever stands beside made-up numbers.

Planted, exactly (not in expectation):

* ``bias``: scores are 0/1 and every cell (model × bias × domain × condition) of ``n_trials``
  trials holds exactly ``round(rate · n_trials)`` ones, in a seeded random order, so each cell
  mean equals the planted rate returned by :func:`planted_bias_rates`.
* ``replication``: agent effects are functions of the human effects (identical, shifted by 0.3,
  or zero), and agent posteriors are functions of the human posteriors.
* ``replication_summary``: PAS and ECS are linear in the configuration and study index.
* ``judged``: each detector behaves by a fixed rule per sample; two judges agree everywhere and
  the third flips ``target_found`` on a known set of items.

Run ``python -m kbench_core.samples DIR`` to (re)write the bundled files.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from kbench_core.schema import INTENSITIES

__all__ = [
    "BIAS_MODELS", "DETECTORS", "JUDGES", "REPLICATION_MODELS", "SAMPLE_BIASES",
    "bias_trials", "bias_trials_of_size", "judged_samples", "planted_bias_rates",
    "replication_summary", "replication_tests", "write_samples",
]

DOMAINS: tuple[str, ...] = ("individual", "professional", "social", "temporal", "risk")
SAMPLE_BIASES: dict[str, str] = {  # bias id -> category
    "anchoring_effect": "anchoring",
    "gain_loss_framing": "framing",
    "base_rate_neglect": "representativeness",
    "availability_bias": "availability",
    "loss_aversion": "loss_aversion",
    "confirmation_bias": "confirmation",
}
BIAS_MODELS: tuple[str, ...] = ("synthetic-alpha", "synthetic-beta", "synthetic-gamma")
METHODS: dict[str, tuple[str, float]] = {  # method -> (method_kind, share of treatment rate)
    "chain_of_thought_prompt": ("chain_of_thought", 0.5),
    "bias_warning": ("warning", 0.75),
}
# Rates of the three model profiles: control, then weak, moderate, strong, adversarial.
_PROFILES: tuple[tuple[float, tuple[float, float, float, float]], ...] = (
    (0.0, (0.8, 0.8, 0.8, 0.8)),   # alpha: a flat 0.8 over a clean control
    (0.1, (0.3, 0.5, 0.7, 0.9)),   # beta: rises with intensity
    (0.2, (0.2, 0.2, 0.2, 0.2)),   # gamma: no effect at all
)
# beta's treatment rates move by domain, so its BCI consistency is below 1.
_DOMAIN_OFFSETS = {"individual": 0.1, "professional": 0.0, "social": -0.1, "temporal": 0.0,
                   "risk": 0.0}
# The treatment - control gap is scaled per bias, cycling over the bias list.
_BIAS_FACTORS = (1.0, 0.75, 0.5)
_CONFIDENCE = (0.9, 0.7, np.nan)  # stated confidence per profile; gamma states none


def _profile(model_index: int) -> int:
    return model_index % len(_PROFILES)


def planted_bias_rates(*, models: Sequence[str] = BIAS_MODELS,
                       biases: Sequence[str] = tuple(SAMPLE_BIASES),
                       domains: Sequence[str] = DOMAINS, n_trials: int = 10) -> pd.DataFrame:
    """The exact score mean of every cell of :func:`bias_trials`.

    Treatment rate of model profile p, intensity i, bias b, domain d:
    ``control_p + f_b · (rate_{p,i} − control_p) + offset_{p,d}``, clipped to [0, 1] and rounded
    to a multiple of ``1/n_trials``; debiasing rates are 0.5 (chain of thought) and 0.75
    (warning) of the cell's mean treatment rate, rounded the same way.

    With the defaults, ``synthetic-alpha`` on ``anchoring_effect`` has control 0 and treatment
    0.8 at every intensity, so SPEC 2.1 gives magnitudes min(w·0.8, 1) = 1, 0.8, 0.536, 0.4 for
    w = 2, 1, 0.67, 0.5, and BMS = 0.1·1 + 0.3·0.8 + 0.4·0.536 + 0.2·0.4 = 0.6344 (weights sum
    to 1). ``synthetic-gamma`` has treatment = control = 0.2, so every magnitude and its BMS are
    0, and one extra unknown trial per cell gives ``unknown_rate`` = 1/(n_trials + 1).
    """
    rows = []
    for m_idx, model in enumerate(models):
        p = _profile(m_idx)
        control, rates = _PROFILES[p]
        for b_idx, bias in enumerate(biases):
            factor = _BIAS_FACTORS[b_idx % len(_BIAS_FACTORS)]
            for domain in domains:
                offset = _DOMAIN_OFFSETS.get(domain, 0.0) if p == 1 else 0.0
                treat = [_round_rate(control + factor * (r - control) + offset, n_trials)
                         for r in rates]
                rows.append((model, bias, domain, "control", None, None,
                             _round_rate(control, n_trials)))
                rows += [(model, bias, domain, "treatment", intensity, None, rate)
                         for intensity, rate in zip(INTENSITIES, treat, strict=True)]
                mean_treat = float(np.mean(treat))
                rows += [(model, bias, domain, "debiasing", None, method,
                          _round_rate(share * mean_treat, n_trials))
                         for method, (_, share) in METHODS.items()]
    return pd.DataFrame(rows, columns=["model", "bias", "domain", "condition", "intensity",
                                       "method", "rate"])


def _round_rate(rate: float, n_trials: int) -> float:
    return round(min(max(rate, 0.0), 1.0) * n_trials) / n_trials


def _within_group_rank(group: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random rank 0..k-1 of each element inside its group (groups are contiguous)."""
    order = np.lexsort((rng.random(group.size), group))
    rank = np.empty(group.size, dtype=np.int64)
    starts = np.r_[0, np.flatnonzero(np.diff(group[order])) + 1]
    sizes = np.diff(np.r_[starts, group.size])
    rank[order] = np.arange(group.size) - np.repeat(starts, sizes)
    return rank


def bias_trials(*, models: Sequence[str] = BIAS_MODELS,
                biases: Sequence[str] = tuple(SAMPLE_BIASES),
                domains: Sequence[str] = DOMAINS, n_trials: int = 10,
                seed: int = 0) -> pd.DataFrame:
    """Cognitive-bias trials (kind ``bias``) with the rates of :func:`planted_bias_rates`.

    One row per model × bias × domain × condition × trial; models of the gamma profile get one
    extra trial per cell whose score is empty (unknown). Confidence is 0.9, 0.7 or absent by
    profile, so CAS is closed form too.
    """
    if n_trials < 1:
        raise ValueError(f"n_trials must be at least 1, got {n_trials}")
    rng = np.random.default_rng(seed)
    cells = planted_bias_rates(models=models, biases=biases, domains=domains, n_trials=n_trials)
    profile = np.array([_profile(i) for i in range(len(models))])[
        pd.Categorical(cells["model"], categories=list(models)).codes]
    per_cell = np.where(profile == 2, n_trials + 1, n_trials)
    cell = np.repeat(np.arange(len(cells)), per_cell)
    frame = cells.iloc[cell].reset_index(drop=True)
    trial = np.arange(cell.size) - np.repeat(np.cumsum(per_cell) - per_cell, per_cell)
    ones = np.rint(cells["rate"].to_numpy() * n_trials).astype(np.int64)[cell]
    unknown = trial >= n_trials
    # The unknown trial must not displace a planted one: rank only the known trials.
    known_rank = _within_group_rank(np.where(unknown, -1, cell), rng)
    score = np.where(unknown, np.nan, (known_rank < ones).astype(float))
    method = frame["method"]
    frame = frame.drop(columns="rate")
    frame.insert(0, "id", [f"b{i:07d}" for i in range(len(frame))])
    frame["method_kind"] = method.map({m: kind for m, (kind, _) in METHODS.items()})
    frame["category"] = frame["bias"].map(lambda b: SAMPLE_BIASES.get(b, "other"))
    frame["trial"] = trial
    frame["score"] = score
    frame["confidence"] = np.asarray(_CONFIDENCE)[profile[cell]]
    biased = score == 1.0
    frame["answer"] = np.where(unknown, "", np.where(biased, "A", "B"))
    frame["response"] = np.where(unknown, "Synthetic response with no extractable answer.",
                                 np.where(biased, "Synthetic response: option A (biased).",
                                          "Synthetic response: option B (unbiased)."))
    frame["prompt"] = ("Synthetic " + frame["condition"].astype(str) + " prompt for "
                       + frame["bias"].astype(str) + " in the " + frame["domain"].astype(str)
                       + " domain.")
    columns = ["id", "model", "bias", "category", "domain", "condition", "intensity", "method",
               "method_kind", "trial", "score", "confidence", "prompt", "response", "answer"]
    return frame[columns]


def bias_trials_of_size(n_rows: int, *, seed: int = 0) -> pd.DataFrame:
    """Exactly ``n_rows`` bias trials over 10 synthetic models and all 69 baseline biases, for
    benchmarks: enough whole cells are generated, then a seeded random subset of rows is kept
    (so cell means are close to, not exactly, the planted rates)."""
    import json
    from importlib.resources import files

    baselines = json.loads(files("kbench_core").joinpath("data/human_baselines.json")
                           .read_text(encoding="utf-8"))
    models = [f"synthetic-model-{i:02d}" for i in range(10)]
    biases = list(baselines["baselines"])
    cells = len(models) * len(biases) * len(DOMAINS) * (1 + len(INTENSITIES) + len(METHODS))
    n_trials = max(1, -(-n_rows // cells))
    frame = bias_trials(models=models, biases=biases, n_trials=n_trials, seed=seed)
    if len(frame) > n_rows:
        keep = np.sort(np.random.default_rng(seed).choice(len(frame), n_rows, replace=False))
        frame = frame.iloc[keep]
    return frame.reset_index(drop=True)


REPLICATION_MODELS: tuple[str, ...] = (
    "synthetic-agent-mirror", "synthetic-agent-shifted", "synthetic-agent-flat")
_REPLICATION_DOMAINS = ("Cognition", "Social", "Strategic")


def replication_tests(*, models: Sequence[str] = REPLICATION_MODELS, n_studies: int = 6,
                      seed: int = 0) -> pd.DataFrame:
    """Replication tests (kind ``replication``), one row per model × test.

    Study k has 2 + (k mod 2) findings, finding j has 2 + (j mod 2) tests. Human d is drawn
    from U(−0.2, 1.2) and the human posterior π_h from U(0.05, 0.99) (3 decimals), the same
    for every model. Planted by model profile (cycling):

    * mirror: agent d = human d (Lin's CCC = 1), π_a = π_h (test PAS = π_h² + (1 − π_h)²);
    * shifted: agent d = human d + 0.3, so CCC = 2s²/(2s² + 0.09) with s² the (weighted)
      variance of human d; π_a = 0.5, so every test PAS is exactly 0.5;
    * flat: agent d = 0 (zero variance and covariance, CCC = 0); π_a = 1 − π_h
      (test PAS = 2π_h(1 − π_h)).
    """
    rng = np.random.default_rng(seed)
    study_idx = np.arange(n_studies)
    n_findings = 2 + study_idx % 2
    f_study = np.repeat(study_idx, n_findings)
    f_index = np.concatenate([np.arange(n) for n in n_findings])
    n_tests = 2 + f_index % 2
    t_study = np.repeat(f_study, n_tests)
    t_finding = np.repeat(f_index, n_tests)
    t_index = np.concatenate([np.arange(n) for n in n_tests])
    n = t_study.size
    human_d = np.round(rng.uniform(-0.2, 1.2, n), 3)
    human_pi = np.round(rng.uniform(0.05, 0.99, n), 3)
    n_eff = rng.integers(20, 201, n).astype(float)
    base = pd.DataFrame({
        "study": [f"study_{s + 1:02d}" for s in t_study],
        "finding": [f"study_{s + 1:02d}_F{f + 1}" for s, f in zip(t_study, t_finding,
                                                                  strict=True)],
        "test": [f"test_{t + 1}" for t in t_index],
        "domain": np.asarray(_REPLICATION_DOMAINS)[t_study % len(_REPLICATION_DOMAINS)],
        "test_type": "t",
        "human_d": human_d,
        "human_pi": human_pi,
        "n_eff": n_eff,
    })
    frames = []
    for m_idx, model in enumerate(models):
        p = m_idx % 3
        frame = base.copy()
        frame.insert(0, "model", model)
        frame["agent_d"] = (human_d, np.round(human_d + 0.3, 3), np.zeros(n))[p]
        frame["agent_pi"] = (human_pi, np.full(n, 0.5), np.round(1 - human_pi, 3))[p]
        frames.append(frame)
    columns = ["model", "study", "finding", "test", "domain", "test_type", "human_d",
               "agent_d", "human_pi", "agent_pi", "n_eff"]
    return pd.concat(frames, ignore_index=True)[columns]


SUMMARY_CONFIGS: tuple[str, ...] = (
    "synthetic-agent-v1-empty", "synthetic-agent-v2-persona", "synthetic-agent-v3-reasoning")


def replication_summary(*, configs: Sequence[str] = SUMMARY_CONFIGS, n_studies: int = 6,
                        seed: int = 0) -> pd.DataFrame:
    """Study-level results (kind ``replication_summary``): config c, study s (0-based) has
    PAS = 0.4 + 0.1c + 0.02s and ECS = 0.1c + 0.05s − 0.1, except that config 0 has no ECS
    for study 3 and config 2 no PAS for study 5 (empty cells); cost = tokens · (1 + c) / 10⁶
    dollars."""
    rng = np.random.default_rng(seed)
    c, s = np.meshgrid(np.arange(len(configs)), np.arange(n_studies), indexing="ij")
    c, s = c.ravel(), s.ravel()
    tokens = rng.integers(100_000, 900_000, c.size)
    pas = np.round(0.4 + 0.1 * c + 0.02 * s, 4)
    ecs = np.round(0.1 * c + 0.05 * s - 0.1, 4)
    ecs = np.where((c == 0) & (s == 3), np.nan, ecs)
    pas = np.where((c == 2) & (s == n_studies - 1), np.nan, pas)
    return pd.DataFrame({
        "model": np.asarray(configs)[c],
        "study": [f"study_{k + 1:02d}" for k in s],
        "title": [f"Synthetic study {k + 1}" for k in s],
        "pas": pas,
        "ecs": ecs,
        "tokens": tokens.astype(float),
        "cost": np.round(tokens * (1 + c) / 1e6, 6),
    })


DETECTORS: tuple[str, ...] = (
    "synthetic-detector-sharp", "synthetic-detector-eager", "synthetic-detector-timid")
JUDGES: tuple[str, ...] = ("judge-one", "judge-two", "judge-three")
PROMPT_TYPES: tuple[str, ...] = ("direct", "naturalistic", "adversarial")
_SEVERITIES = ("critical", "high", "medium", "low")
_VULN_TYPES = ("reentrancy", "access_control", "integer_overflow", "unchecked_call")


def judged_samples(*, n_samples: int = 40, detectors: Sequence[str] = DETECTORS,
                   judges: Sequence[str] = JUDGES, prompt_types: Sequence[str] = PROMPT_TYPES,
                   seed: int = 0) -> pd.DataFrame:
    """Judged vulnerability detections (kind ``judged``), one row per sample × detector ×
    prompt type × judge.

    Samples ``c0001``...: the first 70% (rounded down) are vulnerable, with severity and type
    cycling. Detector profiles (cycling) as the first judge reads them:

    * sharp: says vulnerable exactly on vulnerable samples, finds every target (type ``exact``,
      rcir/ava/fsv 0.9/0.8/0.7), confidence 0.9, one bonus valid finding on every 7th sample;
    * eager: says vulnerable on every sample, finds the target on vulnerable samples with an
      even index only (``semantic``, 0.6/0.5/0.4) — a lucky guess on the odd ones — with one
      hallucinated finding on every sample, confidence 0.8;
    * timid: says vulnerable on every third sample only, finds the target where it does and
      the sample is vulnerable (``partial``, 0.5/0.5/0.5), confidence 0.4.

    Judges agree everywhere except that the third judge (when there are three or more) flips
    ``target_found`` on vulnerable samples whose index is a multiple of 5 and the detector
    said vulnerable. Every value is planted, so ``seed`` changes nothing; it is accepted so
    that all generators share one signature.
    """
    del seed  # every value is planted; nothing random is needed
    s = np.arange(n_samples)
    n_vuln = int(n_samples * 0.7)
    vulnerable = s < n_vuln
    grid = pd.MultiIndex.from_product(
        [s, np.arange(len(detectors)), np.arange(len(prompt_types)), np.arange(len(judges))],
        names=["s", "d", "p", "j"]).to_frame(index=False)
    si, di, pi, ji = (grid[c].to_numpy() for c in ("s", "d", "p", "j"))
    profile = di % 3
    vul = vulnerable[si]
    said = np.select([profile == 0, profile == 1], [vul, np.ones_like(vul)], si % 3 == 0)
    found = np.select([profile == 0, profile == 1], [vul, vul & (si % 2 == 0)], said & vul)
    flipped = (ji == 2) & vul & said & (si % 5 == 0)
    found = np.where(flipped, ~found, found)
    match = np.select([~vul, found & (profile == 0), found & (profile == 1), found,
                       said], ["", "exact", "semantic", "partial", "wrong"], "not_mentioned")
    scores = np.array([[0.9, 0.8, 0.7], [0.6, 0.5, 0.4], [0.5, 0.5, 0.5]])[profile]
    scores = np.where(found[:, None], scores, np.nan)
    true_lines = np.where(vul, [f"{10 + k};{11 + k}" for k in si], "")
    zeros = np.zeros(si.size, dtype=np.int64)
    frame = pd.DataFrame({
        "sample": [f"c{k + 1:04d}" for k in si],
        "model": np.asarray(detectors)[di],
        "judge": np.asarray(judges)[ji],
        "prompt_type": np.asarray(prompt_types)[pi],
        "is_vulnerable": vul,
        "severity": np.where(vul, np.asarray(_SEVERITIES)[si % 4], ""),
        "vuln_type": np.where(vul, np.asarray(_VULN_TYPES)[si % 4], ""),
        "said_vulnerable": said,
        "confidence": np.array([0.9, 0.8, 0.4])[profile],
        "target_found": found,
        "type_match": match,
        "rcir": scores[:, 0], "ava": scores[:, 1], "fsv": scores[:, 2],
        "n_target_match": found.astype(np.int64),
        "n_partial_match": zeros,
        "n_bonus_valid": ((profile == 0) & (si % 7 == 0)).astype(np.int64),
        "n_hallucinated": (profile == 1).astype(np.int64),
        "n_mischaracterized": zeros, "n_design_choice": zeros, "n_out_of_scope": zeros,
        "n_security_theater": zeros, "n_informational": zeros,
        "claimed_lines": np.where(found, true_lines, ""),
        "true_lines": true_lines,
    })
    return frame


def _to_csv(frame: pd.DataFrame, path: Path) -> None:
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype == bool:
            out[col] = np.where(out[col], "true", "false")
    out.to_csv(path, index=False, lineterminator="\n", float_format="%.10g")


def write_samples(directory: str | Path) -> list[Path]:
    """Write the bundled sample runs (one small CSV per kind) into ``directory``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    frames = {
        "bias.csv": bias_trials(),
        "replication.csv": replication_tests(),
        "replication_summary.csv": replication_summary(),
        "judged.csv": judged_samples(),
    }
    paths = []
    for name, frame in frames.items():
        _to_csv(frame, directory / name)
        paths.append(directory / name)
    return paths


if __name__ == "__main__":
    target = sys.argv[1] if len(sys.argv) > 1 else "sample_data"
    for written in write_samples(target):
        print(f"wrote {written} ({written.stat().st_size / 1024:.1f} KB)")
