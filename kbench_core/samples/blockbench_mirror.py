"""Synthetic mirrors of BlockBench's real judge records: the schemas, names and messiness of the
real files, with made-up answers and planted numbers.

BlockBench's own judge records cannot be shipped (no licence), but a walkthrough of kbench with
"every real file" needs files that look like them. :func:`write_mirrors` writes four runs in the
real native formats kbench reads (``docs/formats.md``, :mod:`kbench_core.native.blockbench`):

============================================  ==================================================
file                                          what it mirrors
============================================  ==================================================
``blockbench_mirror_gen1/`` and its ``.zip``  a first-generation judge-output folder: one
                                              sub-folder per detector (8, with the real files'
                                              mixed spellings: ``deepseek_v3.2``,
                                              ``gemini_3_pro_preview``, ``claude-opus-4-5``, ...),
                                              ``judge_outputs/j_<sample>_<prompt>.json`` and
                                              ``sample_metrics/m_<sample>_<prompt>.json``
                                              (``ground_truth_vulnerable``); one judge, three
                                              prompt types, 36 contracts (28 vulnerable, 8 safe),
                                              two failed judge files
``blockbench_mirror_ds.json``                 second generation, difficulty-stratified (DS): a
                                              JSON list of multi-judge records, judges
                                              ``glm-4.7``, ``mimo-v2-flash``, ``mistral-large``,
                                              7 detectors, contracts ``ds_t<k>_<nnn>`` in four
                                              tiers of 20, 10, 5 and 3; about 5 % failed records
                                              (an ``error`` field), among them every judge of one
                                              contract for two detectors; ``complete_found`` /
                                              ``partial_found`` and ``WRONG_ROOT_CAUSE`` findings
``blockbench_mirror_tc.json``                 second generation, TC: five judges (``codestral``,
                                              ``gemini-3-flash``, ``glm-4.7``, ``mimo-v2-flash``,
                                              ``mistral-large``), 20 vulnerable contracts
                                              ``tc_<nnn>`` and 8 fixed ones ``df_tc_<nnn>``
                                              (``variant: "differential"``,
                                              ``false_positive_detected``)
============================================  ==================================================

The names are real-style on purpose (they test the canonical-id joins of ``kbench profile``);
the numbers are not BlockBench's, and every record says so in its ``notes``, as does the
``README.txt`` written beside the files.

**Planted numbers** (the same for every seed; the seed chooses which contracts, judges and
records, never how many). Each detector has a planted number of contracts whose target it finds,
per prompt type (gen-1, :data:`GEN1_HITS`), per difficulty tier (DS, :data:`DS_HITS`) or over the
vulnerable contracts (TC, :data:`TC_HITS`), and (TC) of fixed contracts where it still claims the
fixed vulnerability (:data:`TC_FIXED_CLAIMS`). Judges disagree only in a minority (one judge of
three, at most two of five), and a record that fails is never on an answer where another judge
disagrees, so the majority of every answer is the planted one under either convention for failed
judgements; the contracts every judge failed (:data:`DS_ALL_FAILED`, never a found target) are
missing by default and "not found" under ``failed_as="not_found"``. For example
``llama-4-maverick`` on DS tier ``t1``: 9 found of 19 judged contracts (TDR 9/19) by default, of
20 with ``failed_as="not_found"`` (9/20).

``python -m kbench_core.samples.blockbench_mirror DIR [--seed S]`` writes them.
"""

from __future__ import annotations

import io
import json
import shutil
import sys
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kbench_core.samples._common import _rng

NOTE = ("synthetic mirror of a BlockBench judge record (kbench_core.samples.blockbench_mirror): "
        "made-up answers, not BlockBench's results")

# ------------------------------------------------------------------------------ the plan

GEN1_JUDGE = "gpt-4.1"
GEN1_PROMPT_TYPES: tuple[str, ...] = ("direct", "naturalistic", "adversarial")
GEN1_VULNERABLE: tuple[str, ...] = (*(f"ds_{i:03d}" for i in range(1, 17)),
                                    *(f"tc_{i:03d}" for i in range(1, 13)))
GEN1_SAFE: tuple[str, ...] = tuple(f"safe_{i:03d}" for i in range(1, 9))
GEN1_HITS: dict[str, tuple[int, int, int]] = {
    # targets found of the 28 vulnerable contracts, per prompt type (direct, naturalistic,
    # adversarial); TDR over the three = sum / 84
    "deepseek_v3.2": (14, 12, 10),         # 36/84 = 0.4286
    "gemini_3_pro_preview": (19, 17, 15),  # 51/84 = 0.6071
    "claude-opus-4-5": (18, 16, 15),       # 49/84 = 0.5833
    "gpt-5.2": (18, 16, 14),               # 48/84 = 0.5714
    "llama-4-maverick": (12, 10, 8),       # 30/84
    "qwen3-coder-plus": (15, 13, 12),      # 40/84
    "grok_4_fast": (16, 15, 13),           # 44/84
    "kimi-k2": (14, 13, 11),               # 38/84
}
GEN1_FALSE_ALARMS: dict[str, int] = {  # safe contracts (of 8) said vulnerable, per prompt type
    "deepseek_v3.2": 3, "gemini_3_pro_preview": 2, "claude-opus-4-5": 1, "gpt-5.2": 2,
    "llama-4-maverick": 5, "qwen3-coder-plus": 4, "grok_4_fast": 3, "kimi-k2": 3}
GEN1_FAILED: tuple[tuple[str, str, str], ...] = (  # (detector, safe contract, prompt type)
    ("kimi-k2", "safe_002", "direct"), ("kimi-k2", "safe_005", "adversarial"))

DS_JUDGES: tuple[str, ...] = ("glm-4.7", "mimo-v2-flash", "mistral-large")
DS_TIERS: dict[str, int] = {"t1": 20, "t2": 10, "t3": 5, "t4": 3}  # contracts per tier
DS_HITS: dict[str, tuple[int, int, int, int]] = {
    # contracts whose target the majority finds, per tier t1..t4
    "claude-opus-4-5": (16, 7, 3, 1),
    "gemini-3-pro": (17, 6, 2, 2),
    "gpt-5.2": (15, 7, 2, 1),
    "deepseek-v3-2": (12, 5, 2, 0),
    "llama-4-maverick": (9, 3, 1, 0),
    "qwen3-coder-plus": (11, 4, 2, 1),
    "grok-4-fast": (13, 6, 3, 1),
}
DS_ALL_FAILED: dict[str, str] = {"llama-4-maverick": "t1", "qwen3-coder-plus": "t3"}
"""Detector → the tier of the one contract on which all three of its judges failed."""
DS_ONE_FAILED = 34  # answers with one failed judge (with the 6 above: 40 of 798 records, 5 %)
DS_MINORITY = 40  # answers with one dissenting judge

PARTIAL_RATE = 0.2  # chance that a judge who finds a target calls it found only partially

TC_JUDGES: tuple[str, ...] = ("codestral", "gemini-3-flash", "glm-4.7", "mimo-v2-flash",
                              "mistral-large")
TC_VULNERABLE: tuple[str, ...] = tuple(f"tc_{i:03d}" for i in range(1, 21))
TC_FIXED: tuple[str, ...] = tuple(f"df_tc_{i:03d}" for i in range(1, 9))
TC_HITS: dict[str, int] = {  # vulnerable contracts (of 20) whose target the majority finds
    "claude-opus-4-5": 14, "gemini-3-pro": 15, "gpt-5.2": 13, "deepseek-v3.2": 10,
    "llama-4-maverick": 6, "qwen3-coder-plus": 9, "grok-4-fast": 11}
TC_FIXED_CLAIMS: dict[str, int] = {  # fixed contracts (of 8) where the majority says the
    # detector still claims the fixed vulnerability (false_positive_detected)
    "claude-opus-4-5": 2, "gemini-3-pro": 3, "gpt-5.2": 2, "deepseek-v3.2": 4,
    "llama-4-maverick": 6, "qwen3-coder-plus": 5, "grok-4-fast": 3}
TC_ONE_FAILED = 10  # answers with one failed judge (10 of 980 records)
TC_MINORITY = 50  # answers with one or two dissenting judges

VULN_TYPES: tuple[str, ...] = ("Reentrancy", "Access Control", "Integer Overflow",
                               "Unchecked External Call", "Front Running", "Weak Randomness",
                               "Oracle Manipulation", "Denial of Service")
ERROR = "Failed to parse JSON response. Raw: ```json\n{\"overall_verdict\": {\"said_vuln"

# ------------------------------------------------------------------------------ one answer


def _answer(rng: np.random.Generator, hit: bool, said: bool, *,
            newer: bool = True) -> dict[str, Any]:
    """The detector's answer to one contract, as every judge reads it: its findings (the first
    is the one that matches the target when ``hit``), its confidence, and how each judge
    classifies findings it does not dispute (``WRONG_ROOT_CAUSE`` only by ``newer`` judges,
    the second generation's prompt)."""
    wrong = "WRONG_ROOT_CAUSE" if newer else "MISCHARACTERIZED"
    n_findings = 0 if not said else int(rng.integers(1, 4))
    findings = []
    for index in range(n_findings):
        first = int(rng.integers(5, 180))
        where = (f"line {first}" if rng.random() < 0.5
                 else f"lines {first}-{first + int(rng.integers(1, 9))}")
        kind = VULN_TYPES[int(rng.integers(len(VULN_TYPES)))]
        function = f"f{int(rng.integers(1, 30))}"
        findings.append({
            "finding_id": index, "description": f"{kind} in function {function}()",
            "vulnerability_type_claimed": kind,
            "severity_claimed": ("critical", "high", "medium", "low")[int(rng.integers(4))],
            "location_claimed": f"{where} (function {function})",
            # the judges' class of a finding that is not the target
            "_class": ("BONUS_VALID", "HALLUCINATED", "INFORMATIONAL", "DESIGN_CHOICE",
                       "OUT_OF_SCOPE", wrong, "MISCHARACTERIZED",
                       "SECURITY_THEATER")[int(rng.integers(8))]})
    if findings and not hit:  # the first finding misses the target: how, the judges agree
        findings[0]["_class"] = (wrong, "HALLUCINATED",
                                 "MISCHARACTERIZED")[int(rng.integers(3))]
    confidence = float(np.clip(rng.normal(0.8 if said else 0.6, 0.12), 0.05, 1.0))
    return {"findings": findings, "confidence": round(confidence, 2), "said": said,
            "exact": bool(rng.random() < 0.7),
            "scores": [round(float(rng.choice((0.5, 0.6, 0.7, 0.8, 0.9, 1.0))), 2)
                       for _ in range(3)]}


def _judged_findings(answer: dict[str, Any], target_class: str | None) -> list[dict[str, Any]]:
    out = []
    for finding in answer["findings"]:
        label = finding["_class"]
        if finding["finding_id"] == 0 and target_class is not None:
            label = target_class
        out.append({**{k: v for k, v in finding.items() if k != "_class"},
                    "classification": label,
                    "reasoning": f"The judge reads this finding as {label.lower()}."})
    return out


def _summary(findings: list[dict[str, Any]]) -> dict[str, int]:
    names = {"TARGET_MATCH": "target_matches", "PARTIAL_MATCH": "partial_matches",
             "BONUS_VALID": "bonus_valid", "HALLUCINATED": "hallucinated",
             "MISCHARACTERIZED": "mischaracterized", "DESIGN_CHOICE": "design_choice",
             "OUT_OF_SCOPE": "out_of_scope", "SECURITY_THEATER": "security_theater",
             "INFORMATIONAL": "informational"}
    summary = {"total_findings": len(findings), **dict.fromkeys(names.values(), 0)}
    for finding in findings:
        if finding["classification"] in names:
            summary[names[finding["classification"]]] += 1
    return summary


def _scores(answer: dict[str, Any], found: bool, partial: bool) -> dict[str, Any]:
    keys = ("root_cause_identification", "attack_vector_validity", "fix_suggestion_validity")
    out = {}
    for key, score in zip(keys, answer["scores"], strict=True):
        value = (round(score * (0.6 if partial else 1.0), 2) if found else None)
        out[key] = {"score": value, "reasoning": "Assessed against the documented root cause."
                    if found else "Target not found."}
    return out


def _verdict(answer: dict[str, Any]) -> dict[str, Any]:
    return {"said_vulnerable": answer["said"], "confidence_expressed": answer["confidence"]}


def _gen1_record(sample: str, prompt: str, answer: dict[str, Any], hit: bool,
                 when: str) -> dict[str, Any]:
    """A first-generation judge record (``target_assessment.found``)."""
    findings = _judged_findings(answer, "TARGET_MATCH" if hit else None)
    return {
        "sample_id": sample, "transformed_id": sample, "prompt_type": prompt,
        "judge_model": GEN1_JUDGE, "timestamp": when,
        "overall_verdict": _verdict(answer), "findings": findings,
        "target_assessment": {
            "found": hit, "finding_id": 0 if hit else None,
            "type_match": ("exact" if answer["exact"] else "semantic") if hit
            else "not_mentioned",
            "type_match_reasoning": "Compared with the documented vulnerability.",
            **(_scores(answer, True, False) if hit else dict.fromkeys(
                ("root_cause_identification", "attack_vector_validity",
                 "fix_suggestion_validity")))},
        "summary": _summary(findings), "notes": NOTE, "judge_latency_ms": 1800.0}


def _multi_record(sample: str, detector: str, judge: str, answer: dict[str, Any],
                  found: bool, partial: bool, when: str) -> dict[str, Any]:
    """A second-generation multi-judge record (``complete_found`` / ``partial_found``)."""
    if found:
        target_class = "PARTIAL_MATCH" if partial else "TARGET_MATCH"
    elif answer["findings"] and answer.get("hit"):
        target_class = "WRONG_ROOT_CAUSE"  # a dissenting judge on a found target
    else:
        target_class = None
    findings = _judged_findings(answer, target_class)
    type_match = ("partial" if partial else "exact" if answer["exact"] else "semantic") \
        if found else ("wrong" if findings and findings[0]["classification"] in (
            "WRONG_ROOT_CAUSE", "MISCHARACTERIZED") else "not_mentioned")
    return {
        "sample_id": sample, "detector_model": detector, "judge_model": judge,
        "prompt_type": "direct", "timestamp": when,
        "overall_verdict": _verdict(answer), "findings": findings,
        "target_assessment": {
            "complete_found": found and not partial, "partial_found": found and partial,
            "finding_id": 0 if found else None, "type_match": type_match,
            **_scores(answer, found, partial)},
        "summary": _summary(findings), "notes": NOTE}


def _fixed_record(sample: str, detector: str, judge: str, answer: dict[str, Any],
                  claims: bool, when: str) -> dict[str, Any]:
    """A record of a fixed (patched) TC contract: ``variant: "differential"`` and
    ``false_positive_detected`` (the detector still claims the fixed vulnerability)."""
    findings = _judged_findings(answer, "HALLUCINATED" if claims else None)
    return {
        "sample_id": sample, "detector_model": detector, "judge_model": judge,
        "prompt_type": "direct", "variant": "differential", "timestamp": when,
        "overall_verdict": _verdict(answer), "findings": findings,
        "target_assessment": {"false_positive_detected": claims, "type_match": "not_mentioned",
                              "reasoning": "The patched vulnerability is "
                              + ("still reported." if claims else "not reported.")},
        "summary": _summary(findings), "notes": NOTE}


def _failed_record(sample: str, detector: str, judge: str, when: str,
                   prompt: str = "direct") -> dict[str, Any]:
    """A failed judgement as the real files hold it: an ``error``, a null verdict."""
    return {"sample_id": sample, "detector_model": detector, "judge_model": judge,
            "prompt_type": prompt, "timestamp": when, "error": ERROR,
            "overall_verdict": {"said_vulnerable": None, "confidence_expressed": None},
            "findings": [], "target_assessment": {"found": False,
                                                  "type_match": "not_mentioned"},
            "summary": {"total_findings": 0}, "notes": NOTE}


def _clock(start: int):
    """Deterministic ISO timestamps, one a minute from 2026-01-``start`` 08:00."""
    state = {"minute": 0}

    def tick() -> str:
        minute = state["minute"]
        state["minute"] += 1
        day, rest = divmod(minute, 24 * 60)
        return f"2026-01-{start + day:02d}T{8 + rest // 60 % 24:02d}:{rest % 60:02d}:00"

    return tick


def _chosen(rng: np.random.Generator, pool: Sequence[Any], count: int) -> list[Any]:
    picks = rng.choice(len(pool), size=count, replace=False)
    return [pool[int(i)] for i in sorted(picks)]


# ------------------------------------------------------------------------------ gen-1


def gen1_files(seed: int = 0) -> dict[str, bytes]:
    """The gen-1 judge-output folder as ``{relative path: bytes}`` (no top folder)."""
    rng = _rng(seed)
    tick = _clock(10)
    files: dict[str, bytes] = {}
    failed = set(GEN1_FAILED)
    for detector, hits in GEN1_HITS.items():
        for prompt, n_hits in zip(GEN1_PROMPT_TYPES, hits, strict=True):
            found = set(_chosen(rng, GEN1_VULNERABLE, n_hits))
            alarms = set(_chosen(rng, GEN1_SAFE, GEN1_FALSE_ALARMS[detector]))
            for sample in (*GEN1_VULNERABLE, *GEN1_SAFE):
                vulnerable = sample in GEN1_VULNERABLE
                hit = sample in found
                said = hit or (sample in alarms) or (vulnerable and bool(rng.random() < 0.7))
                answer = _answer(rng, hit, said, newer=False)
                when = tick()
                if (detector, sample, prompt) in failed:
                    # a folder's record names no detector (its sub-folder does)
                    record = _failed_record(sample, detector, GEN1_JUDGE, when, prompt)
                    del record["detector_model"]
                    record["transformed_id"] = sample
                else:
                    record = _gen1_record(sample, prompt, answer, hit, when)
                metrics = {
                    "sample_id": sample, "transformed_id": sample, "prompt_type": prompt,
                    "detection_correct": said == vulnerable,
                    "ground_truth_vulnerable": vulnerable, "response_said_vulnerable": said,
                    "target_found": hit, "lucky_guess": vulnerable and said and not hit,
                    "total_findings": len(answer["findings"]),
                    "confidence": answer["confidence"]}
                files[f"{detector}/judge_outputs/j_{sample}_{prompt}.json"] = _dump(record)
                files[f"{detector}/sample_metrics/m_{sample}_{prompt}.json"] = _dump(metrics)
    return files


# ------------------------------------------------------------------------------ gen-2


def ds_records(seed: int = 0) -> list[dict[str, Any]]:
    """The gen-2 difficulty-stratified (DS) multi-judge records."""
    rng = _rng(seed)
    tick = _clock(20)
    contracts = {tier: [f"ds_{tier}_{i:03d}" for i in range(1, size + 1)]
                 for tier, size in DS_TIERS.items()}
    plan: dict[tuple[str, str], dict[str, Any]] = {}
    for detector, hits in DS_HITS.items():
        for (tier, names), n_hits in zip(contracts.items(), hits, strict=True):
            pool = list(names)
            if DS_ALL_FAILED.get(detector) == tier:
                lost = pool.pop(int(rng.integers(len(pool))))
                plan[(detector, lost)] = {"hit": False, "fate": "all_failed"}
            found = set(_chosen(rng, pool, n_hits))
            for sample in pool:
                plan[(detector, sample)] = {"hit": sample in found, "fate": "clean"}
    return _multi(rng, tick, plan, DS_JUDGES, DS_ONE_FAILED, DS_MINORITY, max_dissent=1)


def tc_records(seed: int = 0) -> list[dict[str, Any]]:
    """The gen-2 TC multi-judge records: vulnerable and fixed (differential) contracts."""
    rng = _rng(seed)
    tick = _clock(25)
    plan: dict[tuple[str, str], dict[str, Any]] = {}
    for detector, n_hits in TC_HITS.items():
        found = set(_chosen(rng, TC_VULNERABLE, n_hits))
        claims = set(_chosen(rng, TC_FIXED, TC_FIXED_CLAIMS[detector]))
        for sample in TC_VULNERABLE:
            plan[(detector, sample)] = {"hit": sample in found, "fate": "clean"}
        for sample in TC_FIXED:
            plan[(detector, sample)] = {"hit": sample in claims, "fate": "clean",
                                        "fixed": True}
    return _multi(rng, tick, plan, TC_JUDGES, TC_ONE_FAILED, TC_MINORITY, max_dissent=2)


def _multi(rng: np.random.Generator, tick, plan: dict[tuple[str, str], dict[str, Any]],
           judges: Sequence[str], n_failed: int, n_minority: int,
           max_dissent: int) -> list[dict[str, Any]]:
    """Records of every answer in ``plan`` by every judge: the planted majority, ``n_failed``
    answers with one failed judge, ``n_minority`` others with 1..``max_dissent`` dissenting
    judges (never both on one answer, so the majority stands under either convention)."""
    keys = [k for k, v in plan.items() if v["fate"] == "clean"]
    for key in _chosen(rng, keys, n_failed):
        plan[key]["fate"] = "one_failed"
    for key in _chosen(rng, [k for k in keys if plan[k]["fate"] == "clean"], n_minority):
        plan[key]["fate"] = "dissent"
    records = []
    for (detector, sample), item in plan.items():
        fixed = item.get("fixed", False)
        hit = item["hit"]
        said = hit or bool(rng.random() < (0.5 if fixed else 0.85))
        answer = _answer(rng, hit and not fixed, said)
        answer["hit"] = hit
        failing = (int(rng.integers(len(judges))) if item["fate"] == "one_failed" else None)
        dissent: set[int] = set()
        if item["fate"] == "dissent":
            size = int(rng.integers(1, max_dissent + 1))
            dissent = {int(i) for i in rng.choice(len(judges), size=size, replace=False)}
        for index, judge in enumerate(judges):
            when = tick()
            partial = bool(rng.random() < PARTIAL_RATE)
            if item["fate"] == "all_failed" or index == failing:
                record = _failed_record(sample, detector, judge, when)
                if fixed:  # the pipeline, not the judge, writes the variant
                    record["variant"] = "differential"
                records.append(record)
                continue
            says = hit != (index in dissent)
            if fixed:
                says = says and said  # no claim without an answer that claims something
                records.append(_fixed_record(sample, detector, judge, answer, says, when))
            elif says and not said:  # a judge cannot find a target in an empty answer
                records.append(_multi_record(sample, detector, judge, answer, False, False,
                                             when))
            else:
                records.append(_multi_record(sample, detector, judge, answer, says,
                                             says and partial, when))
    return records


# ------------------------------------------------------------------------------ writing


def _dump(payload: Any) -> bytes:
    return (json.dumps(payload, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


README = """\
Synthetic mirrors of BlockBench's judge records, written by
kbench_core.samples.blockbench_mirror (seed {seed}).

The schemas, file layout and model names follow BlockBench's real files; every answer and every
number is made up (planted), so nothing here is a BlockBench result. See the module's docstring
(and docs/formats.md, "Synthetic mirrors of BlockBench's records").
"""


def write_mirrors(directory: str | Path, seed: int = 0) -> list[Path]:
    """Write the synthetic BlockBench mirrors into ``directory`` (created if needed).

    Parameters
    ----------
    directory
        Where to write; files of an earlier call are replaced.
    seed
        Chooses the contracts, judges and records behind the planted counts; the same seed
        gives the same bytes.

    Returns
    -------
    list of Path
        The four runs: the gen-1 folder ``blockbench_mirror_gen1``, its zip
        ``blockbench_mirror_gen1.zip`` (one top folder), ``blockbench_mirror_ds.json`` and
        ``blockbench_mirror_tc.json``. A ``README.txt`` says what they are.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    top = "blockbench_mirror_gen1"
    folder = directory / top
    if folder.exists():
        shutil.rmtree(folder)
    files = gen1_files(seed)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for relative in sorted(files):
            path = folder / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(files[relative])
            info = zipfile.ZipInfo(f"{top}/{relative}", date_time=(2026, 1, 10, 8, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, files[relative])
    archive_path = directory / f"{top}.zip"
    archive_path.write_bytes(buffer.getvalue())
    ds = directory / "blockbench_mirror_ds.json"
    ds.write_bytes(_dump(ds_records(seed)))
    tc = directory / "blockbench_mirror_tc.json"
    tc.write_bytes(_dump(tc_records(seed)))
    (directory / "README.txt").write_text(README.format(seed=seed), encoding="utf-8")
    return [folder, archive_path, ds, tc]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m kbench_core.samples.blockbench_mirror DIR [--seed S]``."""
    args = list(sys.argv[1:] if argv is None else argv)
    usage = "usage: python -m kbench_core.samples.blockbench_mirror DIR [--seed S]"
    if any(a in ("-h", "--help") for a in args):
        print(usage)
        return 0
    seed = 0
    if "--seed" in args:
        at = args.index("--seed")
        try:
            seed = int(args[at + 1])
        except (IndexError, ValueError):
            print(usage, file=sys.stderr)
            return 2
        del args[at:at + 2]
    if len(args) != 1:
        print(usage, file=sys.stderr)
        return 2
    for path in write_mirrors(args[0], seed=seed):
        size = (sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
                if path.is_dir() else path.stat().st_size)
        print(f"wrote {path} ({size / 1024:.0f} KB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
