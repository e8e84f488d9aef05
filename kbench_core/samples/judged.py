"""Synthetic LLM-judged vulnerability detections with planted tiers and judge agreement."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from kbench_core.samples._common import (
    _ceil_div,
    _count,
    _labels,
    _names,
    _numbered,
    _rng,
)
from kbench_core.schema import FINDING_COUNTS, SEVERITIES

# =================================================================================== judged

DETECTORS: tuple[str, ...] = (
    "synthetic-detector-sharp", "synthetic-detector-eager", "synthetic-detector-timid")
JUDGES: tuple[str, ...] = ("judge-one", "judge-two", "judge-three")
PROMPT_TYPES: tuple[str, ...] = ("direct", "naturalistic", "adversarial")
VULN_TYPES: tuple[str, ...] = (
    "reentrancy", "access_control", "integer_overflow", "unchecked_call", "front_running")

_CONFIDENCE_BY_DETECTOR = np.array([0.9, 0.8, 0.4])
_TYPE_BY_DETECTOR = ("exact", "semantic", "partial")
_REASONING_BY_DETECTOR = np.array([[0.9, 0.8, 0.7], [0.6, 0.5, 0.4], [0.5, 0.5, 0.5]])
_LOCATION_BY_DETECTOR = (1.0, 0.5, 0.0)


def _n_vulnerable(n_samples: int) -> int:
    return (7 * n_samples + 5) // 10  # 70 %, rounded half up


def _flipper(judge_index: np.ndarray | int) -> np.ndarray:
    """Judge *j* flips ``target_found`` when *j* mod 3 = 2 (the third of each three)."""
    return np.asarray(judge_index) % 3 == 2


def judged_samples(*, n_samples: int = 40, models: Sequence[str] = DETECTORS,
                   prompt_types: Sequence[str] = PROMPT_TYPES, judges: Sequence[str] = JUDGES,
                   seed: int = 0) -> pd.DataFrame:
    """Judged vulnerability detections (kind ``judged``, ``docs/formats.md``), one row per sample ×
    detector × prompt type × judge.

    Samples ``c0001``...: V = round(0.7 · n_samples) are vulnerable, S = n − V safe; which
    ones, and the order *p* = 0..V−1 of the vulnerable and *q* = 0..S−1 of the safe samples,
    come from the seed. Vulnerable sample *p* has severity ``SEVERITIES[p mod 4]``, type
    ``VULN_TYPES[p mod 5]`` and true lines L;L+1 (L seeded). Every prompt type gets the same
    answers. Detector *i* follows profile *i* mod 3:

    * sharp: says vulnerable exactly on the vulnerable samples and finds every target (type
      ``exact``, rcir/ava/fsv 0.9/0.8/0.7, claims lines L;L+1), confidence 0.9, one bonus valid
      finding when *p* mod 7 = 0;
    * eager: says vulnerable on every sample, finds the target when *p* is even (``semantic``,
      0.6/0.5/0.4, claims line L only: location accuracy 0.5), confidence 0.8; one
      hallucinated finding on every sample and one security-theater finding on safe samples;
    * timid: says vulnerable when *p* mod 3 = 0 or *q* mod 3 = 0 and then finds the target
      of a vulnerable sample (``partial``, 0.5/0.5/0.5, a partial-match finding, claims line
      L+40: location accuracy 0), confidence 0.4; a design-choice finding on safe samples it
      flags.

    A detector that says vulnerable on a vulnerable sample reports one finding about the
    target: a target (timid: partial) match when the judge finds the target, else a
    mischaracterized one. Judges agree everywhere except that judge *j* with *j* mod 3 = 2
    (``judge-three``) flips ``target_found`` (with type, scores, lines and the target
    finding's class) on vulnerable samples with *p* mod 5 = 0 that the detector flagged.
    Counts and rates are in :func:`planted_judged`, agreement in :func:`planted_agreement`.

    Returns
    -------
    pandas.DataFrame
        ``sample, model, judge, prompt_type, is_vulnerable, severity, vuln_type,
        said_vulnerable, confidence, target_found, type_match, rcir, ava, fsv``, the ten
        finding counts, ``claimed_lines, true_lines`` (``"12;13"``, missing when unknown); the
        key (sample, model, prompt_type, judge) is unique.
    """
    n_samples = _count("n_samples", n_samples, 2)
    models = _names("models", models)
    prompt_types = _names("prompt_types", prompt_types)
    judges = _names("judges", judges)
    rng = _rng(seed)
    n_vulnerable = _n_vulnerable(n_samples)
    # Sample level: position in the seeded order decides everything.
    position = np.empty(n_samples, dtype=np.int64)
    position[rng.permutation(n_samples)] = np.arange(n_samples)
    vulnerable_s = position < n_vulnerable
    p_s = np.where(vulnerable_s, position, -1)
    q_s = np.where(vulnerable_s, -1, position - n_vulnerable)
    first_line = 10 + rng.integers(0, 290, n_samples)
    line = pd.Series(first_line).astype(str)
    next_line = pd.Series(first_line + 1).astype(str)
    true_lines_s = np.where(vulnerable_s, (line + ";" + next_line).to_numpy(dtype=object), None)
    claims_s = np.stack([(line + ";" + next_line).to_numpy(dtype=object),
                         line.to_numpy(dtype=object),
                         pd.Series(first_line + 40).astype(str).to_numpy(dtype=object)])

    s, m, t, j = (a.ravel() for a in np.indices(
        (n_samples, len(models), len(prompt_types), len(judges))))
    profile = m % 3
    vulnerable = vulnerable_s[s]
    p, q = p_s[s], q_s[s]
    sharp, eager, timid = profile == 0, profile == 1, profile == 2
    said = np.select([sharp, eager], [vulnerable, np.ones_like(vulnerable)],
                     (vulnerable & (p % 3 == 0)) | (~vulnerable & (q % 3 == 0)))
    found_first = vulnerable & said & np.select([eager], [p % 2 == 0], True)
    flip = _flipper(j) & vulnerable & said & (p % 5 == 0)
    found = found_first ^ flip
    target_finding = vulnerable & said
    match_code = np.select([found, target_finding, vulnerable], [profile, 3, 4], -1)
    reasoning = np.where(found[:, None], _REASONING_BY_DETECTOR[profile], np.nan)
    counts = {name: np.zeros(s.size, dtype=np.int64) for name in FINDING_COUNTS}
    counts["n_target_match"] = (found & ~timid).astype(np.int64)
    counts["n_partial_match"] = (found & timid).astype(np.int64)
    counts["n_bonus_valid"] = (sharp & vulnerable & (p % 7 == 0)).astype(np.int64)
    counts["n_hallucinated"] = eager.astype(np.int64)
    counts["n_mischaracterized"] = (target_finding & ~found).astype(np.int64)
    counts["n_design_choice"] = (timid & ~vulnerable & said).astype(np.int64)
    counts["n_security_theater"] = (eager & ~vulnerable).astype(np.int64)
    sample_names = _numbered("c", n_samples, width=max(4, len(str(n_samples))))
    return pd.DataFrame({
        "sample": _labels(sample_names, s),
        "model": _labels(models, m),
        "judge": _labels(judges, j),
        "prompt_type": _labels(prompt_types, t),
        "is_vulnerable": vulnerable,
        "severity": _labels(SEVERITIES, np.where(vulnerable, p % len(SEVERITIES), -1)),
        "vuln_type": _labels(VULN_TYPES, np.where(vulnerable, p % len(VULN_TYPES), -1)),
        "said_vulnerable": said,
        "confidence": _CONFIDENCE_BY_DETECTOR[profile],
        "target_found": found,
        "type_match": _labels((*_TYPE_BY_DETECTOR, "wrong", "not_mentioned"), match_code),
        "rcir": reasoning[:, 0], "ava": reasoning[:, 1], "fsv": reasoning[:, 2],
        **counts,
        "claimed_lines": _labels(claims_s.ravel(),
                                 np.where(found, profile * n_samples + s, -1)),
        "true_lines": _labels(true_lines_s, s),
    })


def big_judged_samples(n_rows: int, *, seed: int = 0) -> pd.DataFrame:
    """About ``n_rows`` judged rows for benchmarks (``benchmarks/README.md``: 600k, 3 judges):
    the default detectors, prompt types and judges over ``round(n_rows / 27)`` samples (exact when
    ``n_rows`` is a multiple of 27)."""
    n_rows = _count("n_rows", n_rows, 1)
    per_sample = len(DETECTORS) * len(PROMPT_TYPES) * len(JUDGES)
    return judged_samples(n_samples=max(2, round(n_rows / per_sample)), seed=seed)


def _detector_counts(profile: int, flipped: bool, v: int, s: int) -> dict[str, float]:
    """Per-prompt-type counts of one detector profile as one judge reads them."""
    n = v + s
    c = {k: _ceil_div(v, k) for k in (2, 3, 5, 7, 10, 15)}
    s3 = _ceil_div(s, 3)
    if profile == 0:    # sharp
        tp, fp = v, 0
        found = v - c[5] if flipped else v
        bonus_findings = bonus_samples = c[7]
        other_invalid = hallucinated = 0
    elif profile == 1:  # eager
        tp, fp = v, s
        found = c[2] + c[5] - 2 * c[10] if flipped else c[2]
        bonus_findings = bonus_samples = 0
        hallucinated = n
        other_invalid = n + s            # hallucinated everywhere, security theater on safe
    else:               # timid
        tp, fp = c[3], s3
        found = c[3] - c[15] if flipped else c[3]
        bonus_findings = bonus_samples = 0
        hallucinated = 0
        other_invalid = s3               # design choice on the safe samples it flags
    return {"n": n, "tp": tp, "fp": fp, "fn": v - tp, "tn": s - fp, "vulnerable": v,
            "found": found, "lucky": tp - found, "valid": found + bonus_findings,
            "invalid": other_invalid + (tp - found), "hallucinated": hallucinated,
            "bonus_samples": bonus_samples}


def planted_judged(*, n_samples: int = 40, models: Sequence[str] = DETECTORS,
                   prompt_types: Sequence[str] = PROMPT_TYPES,
                   judges: Sequence[str] = JUDGES) -> pd.DataFrame:
    r"""Closed-form tier values of :func:`judged_samples`, per detector × judge.

    They do not depend on the seed (it only decides which samples play which part), nor on
    the prompt type (every prompt type gets the same answers, so the rates per prompt type
    are these, with the counts divided by the number of prompt types).

    Returns
    -------
    pandas.DataFrame
        ``model, judge, n, tp, tn, fp, fn, accuracy, precision, recall, f1, f2, fpr, fnr,
        targets_found, tdr, lucky_guesses, lucky_guess_rate, bonus_discovery_rate,
        valid_findings, invalid_findings, hallucinated_findings, finding_precision,
        invalid_rate, hallucination_rate, over_flagging, type_match, mean_rcir, mean_ava,
        mean_fsv, avg_reasoning, confidence, ece, brier, location_accuracy, lgi, tus, sui``.

    Notes
    -----
    With V vulnerable and S safe samples (28 and 12 of 40) and :math:`c_k = \lceil V/k
    \rceil` the number of positions *p* < V with *p* mod k = 0 (:math:`s_3 = \lceil S/3
    \rceil`), per prompt type, N = V + S:

    ======  =======  =======  =============================  ===========================
    model   TP       FP       findings: valid / invalid      found (judge-one / -three)
    ======  =======  =======  =============================  ===========================
    sharp   V        0        found + c₇ / V − found         V / V − c₅
    eager   V        S        found / N + S + V − found      c₂ / c₂ + c₅ − 2c₁₀
    timid   c₃       s₃       found / s₃ + c₃ − found        c₃ / c₃ − c₁₅
    ======  =======  =======  =============================  ===========================

    A target lost to the flip turns its finding from valid to invalid (mischaracterized),
    and back. Then accuracy = (TP + TN)/N, TDR = found/V, lucky-guess rate = (TP − found)/TP,
    finding precision = valid/(valid + invalid), hallucination rate = hallucinated/findings,
    LGI = accuracy − TDR, TUS = TDR · avg_reasoning · (1 − invalid rate), and with one
    confidence per detector ECE = MCE = |confidence − accuracy| (a single bin), Brier =
    acc·(1 − conf)² + (1 − acc)·conf². SUI = 0.25·F2 + 0.25·TDR + 0.15·finding precision +
    0.25·avg_reasoning + 0.10·(1 − ECE). For 40 samples: sharp accuracy 1, TDR 1 (22/28
    under judge-three), ECE 0.1; eager accuracy 0.7, TDR 0.5, lucky-guess rate 0.5, ECE 0.1;
    timid TP 10, FP 4, TN 8, FN 18, accuracy 0.45, TDR 10/28 (8/28 under judge-three).
    """
    n_samples = _count("n_samples", n_samples, 2)
    models = _names("models", models)
    prompt_types = _names("prompt_types", prompt_types)
    judges = _names("judges", judges)
    v = _n_vulnerable(n_samples)
    s = n_samples - v
    rows = []
    for i, model in enumerate(models):
        profile = i % 3
        for k, judge in enumerate(judges):
            per = _detector_counts(profile, bool(_flipper(k)), v, s)
            c = {key: value * len(prompt_types) for key, value in per.items()}
            rows.append(_tiers_from_counts(model, judge, profile, c))
    return pd.DataFrame(rows)


def _ratio(num: float, den: float) -> float:
    return num / den if den else math.nan


def _tiers_from_counts(model: str, judge: str, profile: int,
                       c: dict[str, float]) -> dict[str, object]:
    n, tp, tn, fp, fn = c["n"], c["tp"], c["tn"], c["fp"], c["fn"]
    accuracy = (tp + tn) / n
    precision, recall = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    f1 = _ratio(2 * precision * recall, precision + recall)
    f2 = _ratio(5 * precision * recall, 4 * precision + recall)
    findings = c["valid"] + c["invalid"]
    tdr = c["found"] / c["vulnerable"]
    finding_precision = c["valid"] / findings if findings else 1.0
    invalid_rate = _ratio(c["invalid"], findings) if findings else 0.0
    has_found = c["found"] > 0
    rcir, ava, fsv = (_REASONING_BY_DETECTOR[profile] if has_found else [math.nan] * 3)
    avg_reasoning = (rcir + ava + fsv) / 3
    confidence = float(_CONFIDENCE_BY_DETECTOR[profile])
    ece = abs(confidence - accuracy)
    return {
        "model": model, "judge": judge, "n": int(n), "tp": int(tp), "tn": int(tn),
        "fp": int(fp), "fn": int(fn), "accuracy": accuracy, "precision": precision,
        "recall": recall, "f1": f1, "f2": f2, "fpr": _ratio(fp, fp + tn),
        "fnr": _ratio(fn, fn + tp), "targets_found": int(c["found"]), "tdr": tdr,
        "lucky_guesses": int(c["lucky"]), "lucky_guess_rate": _ratio(c["lucky"], tp),
        "bonus_discovery_rate": c["bonus_samples"] / n,
        "valid_findings": int(c["valid"]), "invalid_findings": int(c["invalid"]),
        "hallucinated_findings": int(c["hallucinated"]),
        "finding_precision": finding_precision, "invalid_rate": invalid_rate,
        "hallucination_rate": _ratio(c["hallucinated"], findings) if findings else 0.0,
        "over_flagging": c["invalid"] / n,
        "type_match": _TYPE_BY_DETECTOR[profile] if has_found else None,
        "mean_rcir": float(rcir), "mean_ava": float(ava), "mean_fsv": float(fsv),
        "avg_reasoning": float(avg_reasoning), "confidence": confidence, "ece": ece,
        "brier": accuracy * (1 - confidence) ** 2 + (1 - accuracy) * confidence ** 2,
        "location_accuracy": _LOCATION_BY_DETECTOR[profile] if has_found else math.nan,
        "lgi": accuracy - tdr,
        "tus": tdr * avg_reasoning * (1 - invalid_rate),
        "sui": (0.25 * f2 + 0.25 * tdr + 0.15 * finding_precision + 0.25 * avg_reasoning
                + 0.10 * (1 - ece)),
    }


def planted_agreement(*, n_samples: int = 40, models: Sequence[str] = DETECTORS,
                      prompt_types: Sequence[str] = PROMPT_TYPES,
                      judges: Sequence[str] = JUDGES) -> pd.DataFrame:
    r"""Closed-form agreement of the judges of :func:`judged_samples` on ``target_found``.

    Items are (sample, model, prompt_type). Returns one row per pair of judges: ``judge_a,
    judge_b, n, n_disagree, percent_agreement, kappa`` (Cohen's κ), then one row with
    ``judge_a`` = ``judge_b`` = ``"all"`` whose ``kappa`` is Fleiss' κ over every judge and
    whose ``percent_agreement`` is the share of items on which all judges agree.
    (``said_vulnerable`` and every other label except those that follow the flip agree
    everywhere.)

    Notes
    -----
    A flipping judge disagrees with the others on the flip items: per prompt type c₅ for
    sharp, c₅ for eager and c₁₅ for timid (42 of 360 items for the defaults). Cohen's κ
    between a plain and a flipping judge comes from the 2×2 table (found by both: V − c₅,
    c₂ − c₁₀, c₃ − c₁₅; by the plain judge only: c₅, c₁₀, c₁₅; by the flipping judge only: 0,
    c₅ − c₁₀, 0, per profile), :math:`\kappa = (p_o - p_e)/(1 - p_e)`. Fleiss' κ: an item
    with a split of :math:`J_N` plain against :math:`J_F` flipping judges has agreement
    :math:`P_i = (J_N(J_N-1) + J_F(J_F-1)) / (J(J-1))`, others 1;
    :math:`\kappa = (\bar P - P_e)/(1 - P_e)` with :math:`P_e = p^2 + (1-p)^2` and *p* the
    share of "found" among all judgements.
    """
    n_samples = _count("n_samples", n_samples, 2)
    models = _names("models", models)
    prompt_types = _names("prompt_types", prompt_types)
    judges = _names("judges", judges)
    v = _n_vulnerable(n_samples)
    c = {k: _ceil_div(v, k) for k in (2, 3, 5, 10, 15)}
    # Per profile: found by a plain judge only (TF), a flipping judge only (FT), both (TT).
    table = {0: (v - c[5], c[5], 0), 1: (c[2] - c[10], c[10], c[5] - c[10]),
             2: (c[3] - c[15], c[15], 0)}
    both = plain_only = flip_only = 0
    for i in range(len(models)):
        tt, tf, ft = table[i % 3]
        both, plain_only, flip_only = both + tt, plain_only + tf, flip_only + ft
    k_types = len(prompt_types)
    both, plain_only, flip_only = both * k_types, plain_only * k_types, flip_only * k_types
    n_items = n_samples * len(models) * k_types
    flips = plain_only + flip_only
    found_plain, found_flip = both + plain_only, both + flip_only

    def kappa(found_a: int, found_b: int, disagree: int) -> float:
        p_o = 1 - disagree / n_items
        pa, pb = found_a / n_items, found_b / n_items
        p_e = pa * pb + (1 - pa) * (1 - pb)
        return (p_o - p_e) / (1 - p_e) if p_e < 1 else math.nan

    flipping = [bool(_flipper(k)) for k in range(len(judges))]
    rows = []
    for a in range(len(judges)):
        for b in range(a + 1, len(judges)):
            differ = flipping[a] != flipping[b]
            disagree = flips if differ else 0
            found_a = found_flip if flipping[a] else found_plain
            found_b = found_flip if flipping[b] else found_plain
            rows.append((judges[a], judges[b], n_items, disagree, 1 - disagree / n_items,
                         kappa(found_a, found_b, disagree)))
    n_flip, n_judges = sum(flipping), len(judges)
    n_plain = n_judges - n_flip
    split = 0 < n_flip < n_judges
    if n_judges > 1:
        disagree = flips if split else 0
        p_split = ((n_plain * (n_plain - 1) + n_flip * (n_flip - 1))
                   / (n_judges * (n_judges - 1)))
        p_bar = 1 - disagree / n_items * (1 - p_split)
        p = (n_plain * found_plain + n_flip * found_flip) / (n_judges * n_items)
        p_e = p * p + (1 - p) * (1 - p)
        fleiss = (p_bar - p_e) / (1 - p_e) if p_e < 1 else math.nan
        rows.append(("all", "all", n_items, disagree, 1 - disagree / n_items, fleiss))
    return pd.DataFrame(rows, columns=["judge_a", "judge_b", "n", "n_disagree",
                                       "percent_agreement", "kappa"])


