"""One BlockBench judgement to one kbench row: finding counts, scores, claimed lines, notes,
difficulty."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

import pandas as pd

from kbench_core.schema import FINDING_COUNTS, TYPE_MATCHES

from .lines import CLASSIFICATION_COLUMNS, SCORES, SUMMARY_COLUMNS, _lower, _text, parse_lines

# ------------------------------------------------------------------------------ one record


def _finding_counts(record: Mapping[str, Any], unknown: dict[str, int],
                    noise: dict[str, int]) -> dict[str, Any]:
    """Finding counts by judge classification, from ``findings`` (else ``summary``); what a
    judge wrote unreadably is counted as noise and left unknown, never guessed."""
    findings = record.get("findings")
    counts: dict[str, Any] = dict.fromkeys(FINDING_COUNTS, 0)
    if isinstance(findings, list):
        for finding in findings:
            if not isinstance(finding, dict):
                _note(noise, "findings")  # an entry that is not a finding: not counted
                continue
            label = finding.get("classification")
            name = (str(label).strip().upper().replace(" ", "_").replace("-", "_")
                    if label is not None else "")
            column = CLASSIFICATION_COLUMNS.get(name)
            if column is None:
                unknown[name or "(none)"] = unknown.get(name or "(none)", 0) + 1
                column = "n_other_invalid"
            counts[column] += 1
        return counts
    if findings is not None:
        _note(noise, "findings")
        return dict.fromkeys(FINDING_COUNTS)  # unknown
    summary = record.get("summary")
    if not isinstance(summary, dict) or not summary:
        return dict.fromkeys(FINDING_COUNTS)  # unknown
    for key, column in SUMMARY_COLUMNS.items():
        value = summary.get(key, 0)
        if _count(value):
            counts[column] = value
        else:
            _note(noise, f"summary.{key}")
            counts[column] = None
    total = summary.get("total_findings")
    named = [v for v in (counts[c] for c in SUMMARY_COLUMNS.values()) if _count(v)]
    if _count(total) and total > sum(named):
        counts["n_other_invalid"] = total - sum(named)
    return counts


def _count(value: Any) -> bool:
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value) and value >= 0 and float(value).is_integer())


def _unit_number(value: Any) -> bool:
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value) and 0 <= value <= 1)


def _note(noise: dict[str, int], field: str) -> None:
    noise[field] = noise.get(field, 0) + 1


def _score(assessment: Mapping[str, Any], key: str, noise: dict[str, int]) -> Any:
    """A reasoning score in [0, 1] (``{"score": x}`` or a bare number); null is "not
    assessed"; anything else is judge noise, left empty."""
    value = assessment.get(key)
    if isinstance(value, dict):
        value = value.get("score")
    if value is None or _unit_number(value):
        return value
    _note(noise, f"target_assessment.{key}")
    return None


def _claimed_lines(record: Mapping[str, Any], assessment: Mapping[str, Any]) -> Any:
    findings = [f for f in record.get("findings") or [] if isinstance(f, dict)]
    target_id = assessment.get("finding_id")
    chosen = [f for f in findings if target_id is not None and f.get("finding_id") == target_id]
    if not chosen:
        chosen = [f for f in findings if str(f.get("classification", "")).strip().upper()
                  in ("TARGET_MATCH", "PARTIAL_MATCH")]
    lines: set[int] = set()
    for finding in chosen:
        lines.update(parse_lines(finding.get("location_claimed")) or ())
    return sorted(lines) if lines else None


def _fixed(record: Mapping[str, Any]) -> bool:
    """A record of a fixed (patched) contract: ``variant: "differential"`` or a
    ``false_positive_detected`` key in its assessment, whatever its value."""
    assessment = record.get("target_assessment")
    return (str(record.get("variant", "")).strip().lower() == "differential"
            or (isinstance(assessment, dict) and "false_positive_detected" in assessment))


def judgement_problem(record: Any) -> str | None:
    """Why a judge record cannot be read as a judgement (a failed judgement: missing, never
    a "no"), or None. Nothing is recovered by guessing."""
    if not isinstance(record, dict):
        return f"not a record ({type(record).__name__})"
    if record.get("error") not in (None, "", False):
        return "error: " + " ".join(str(record.get("error")).split())[:80]
    verdict = record.get("overall_verdict")
    if not isinstance(verdict, dict) or not isinstance(verdict.get("said_vulnerable"), bool):
        return "unreadable overall_verdict"
    if _fixed(record):
        return None  # kept with a readable verdict even when its assessment is empty
    assessment = record.get("target_assessment")
    if not isinstance(assessment, dict):
        return "target_assessment is not an object"
    if not assessment:
        return "empty target_assessment"
    if "complete_found" in assessment or "partial_found" in assessment:
        values = [assessment.get("complete_found"), assessment.get("partial_found")]
        if any(v is not None and not isinstance(v, bool) for v in values):
            return "complete_found/partial_found not true/false"
        if all(v is None for v in values):
            return "complete_found and partial_found are null"
        return None
    if "found" not in assessment:
        return "no found key in target_assessment"
    if not isinstance(assessment.get("found"), bool):
        return "found is not true/false"
    return None


def _row(record: dict[str, Any], unknown: dict[str, int],
         noise: dict[str, int]) -> dict[str, Any]:
    """One readable judge record (see :func:`judgement_problem`) as canonical columns;
    ``_safe_hint`` marks a fixed contract. Unreadable optional fields are left empty and
    counted in ``noise``."""
    verdict = record["overall_verdict"]
    assessment = record.get("target_assessment")
    assessment = assessment if isinstance(assessment, dict) else {}
    safe_hint = _fixed(record)
    partial = None
    claims_fixed = None
    if safe_hint:
        found = False
        claim = assessment.get("false_positive_detected")
        claims_fixed = claim if isinstance(claim, bool) else None
        if "false_positive_detected" in assessment and claims_fixed is None:
            _note(noise, "target_assessment.false_positive_detected")
    elif "complete_found" in assessment or "partial_found" in assessment:
        complete, part = assessment.get("complete_found"), assessment.get("partial_found")
        found = bool(complete) or bool(part)
        partial = bool(part) and not bool(complete)
    else:
        found = assessment["found"]
    confidence = verdict.get("confidence_expressed")
    if confidence is not None and not _unit_number(confidence):
        _note(noise, "overall_verdict.confidence_expressed")
        confidence = None
    type_match = _lower(assessment.get("type_match"))
    if type_match is not None and type_match not in TYPE_MATCHES:
        _note(noise, "target_assessment.type_match")
        type_match = None
    row: dict[str, Any] = {
        "sample": record.get("sample_id"),
        "judge": record.get("judge_model"),
        "prompt_type": record.get("prompt_type"),
        "said_vulnerable": verdict["said_vulnerable"],
        "confidence": confidence,
        "target_found": found,
        "type_match": type_match,
        "partial_found": partial,
        "claims_fixed_target": claims_fixed,
        "_safe_hint": safe_hint,
    }
    for column, key in SCORES.items():
        score = _score(assessment, key, noise) if found is True else None
        row[column] = score  # scores describe a found target
    row.update(_finding_counts(record, unknown, noise))
    row["claimed_lines"] = _claimed_lines(record, assessment) if found is True else None
    findings = record.get("findings")
    row["findings"] = (json.dumps(findings, ensure_ascii=False, default=str)
                       if isinstance(findings, list) and findings else None)
    row["failed_judgement"] = None
    return row


def _failed_row(record: Any, reason: str) -> dict[str, Any]:
    """A failed judgement (:func:`judgement_problem`) as a row: its key as far as the record
    gives it, every label missing (never a "no"), the reason in ``failed_judgement`` and
    ``_safe_hint`` when the record marks a fixed contract (docs/formats.md: kept, so that "failed =
    not found" can count it and "missing" can say how many are missing)."""
    detail = record if isinstance(record, dict) else {}
    row: dict[str, Any] = {"sample": _text(detail.get("sample_id")) or None,
                           "judge": _text(detail.get("judge_model")) or None,
                           "prompt_type": _text(detail.get("prompt_type")) or None}
    # every column a readable record fills, empty (None, not NaN: a text column would read
    # a NaN as the text "nan")
    row.update(dict.fromkeys(("said_vulnerable", "confidence", "target_found", "type_match",
                              "partial_found", "claims_fixed_target", *SCORES,
                              *FINDING_COUNTS, "claimed_lines", "findings")))
    row.update(failed_judgement=reason, _safe_hint=_fixed(detail))
    return row


def _keep_failed(rows: list[dict[str, Any]]) -> list[bool]:
    """Which of ``rows`` to keep: a failed judgement whose key another row holds (a judge's
    record retried, or written twice) is dropped, so the readable one stands and the key
    stays unique; its entry in the failed list is marked ``kept`` False. Pops ``_entry``."""
    def key(row: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(None if row.get(c) is None else str(row.get(c)).strip()
                     for c in ("sample", "model", "prompt_type", "judge"))

    readable = {key(r) for r in rows if r.get("failed_judgement") is None}
    seen: set[tuple[Any, ...]] = set()
    keep = []
    for row in rows:
        entry = row.pop("_entry", None)
        if row.get("failed_judgement") is not None:
            k = key(row)
            if k in readable or k in seen:
                if entry is not None:
                    entry["kept"] = False
                keep.append(False)
                continue
            seen.add(k)
        keep.append(True)
    return keep


def _failure_note(failed: list[dict[str, Any]], unit: str) -> str:
    shown = ", ".join(f"{unit} {f['where']} ({f['reason']})" for f in failed[:5])
    more = f" and {len(failed) - 5} more" if len(failed) > 5 else ""
    kept = sum(1 for f in failed if f.get("kept"))
    out = len(failed) - kept
    fate = (f"{kept} kept as row{'s' * (kept != 1)} with missing labels (failed_judgement "
            "says why)" if kept else "")
    if out:
        fate += ("; " if fate else "") + (
            f"{out} left out (no sample, detector or judge to place it, or its answer has a "
            "readable judgement)")
    return (f"{len(failed)} failed judgement{'s' * (len(failed) != 1)} (judge records that "
            f"cannot be read as a judgement), missing, never counted as 'no': {fate}: "
            f"{shown}{more}")


def _reading_notes(failed: list[dict[str, Any]], noise: dict[str, int],
                   unknown: dict[str, int], unit: str) -> list[str]:
    """What reading the judge records left out or left empty, as load warnings (each only when
    it happened)."""
    return ([_failure_note(failed, unit)] if failed else []) + \
        ([_noise_note(noise)] if noise else []) + ([_unknown_note(unknown)] if unknown else [])


def _noise_note(noise: dict[str, int]) -> str:
    listed = ", ".join(f"{field} ({count})" for field, count in sorted(noise.items()))
    return f"unreadable judge fields left empty (judge noise, not guessed): {listed}"


def _unknown_note(unknown: dict[str, int]) -> str:
    listed = ", ".join(f"{name} ({count})" for name, count in sorted(unknown.items()))
    return f"finding classifications outside the nine named ones counted as invalid " \
           f"(n_other_invalid): {listed}"


_DIFFICULTY = re.compile(r"^[A-Za-z][A-Za-z0-9]*_(t\d+)_\d+$")


def difficulty(samples: pd.Series) -> pd.Series | None:
    """The difficulty tier ``t<k>`` of each BlockBench sample id ``<set>_t<k>_<nnn>``
    (e.g. ``ds_t3_014`` → ``t3``), missing for other ids; None when no id carries one."""
    tiers = samples.astype(str).str.extract(_DIFFICULTY, expand=False)
    return tiers.astype(object).where(tiers.notna(), None) if tiers.notna().any() else None


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    frame = pd.DataFrame.from_records(rows)
    if "sample" in frame and "difficulty" not in frame:
        tiers = difficulty(frame["sample"])
        if tiers is not None:
            frame["difficulty"] = tiers
    for optional in ("partial_found", "claims_fixed_target", "findings", "failed_judgement"):
        if optional in frame and frame[optional].isna().all():
            frame = frame.drop(columns=optional)
    frame = frame.astype({c: object for c in frame.columns})
    if "failed_judgement" in frame:  # text: an empty cell is None (a NaN would read "nan")
        reason = frame["failed_judgement"]
        frame["failed_judgement"] = reason.where(reason.notna(), None)
    return frame


def _apply_truth(row: dict[str, Any], truth: Mapping[str, Any]) -> None:
    row["is_vulnerable"] = truth["is_vulnerable"]
    row["severity"] = truth.get("severity")
    row["vuln_type"] = truth.get("vuln_type")
    row["true_lines"] = truth.get("true_lines")
