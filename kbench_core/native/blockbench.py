"""BlockBench judge outputs (``docs/formats.md``): a folder tree or a list of multi-judge records.

Two formats become ``judged`` rows (one per sample × detector × prompt type × judge):

**Judge-output folder** (also as ``.zip``, ``.tar`` or ``.tar.gz``, one top folder allowed)::

    <detector>/judge_outputs/j_<sample>_<prompt_type>.json    judge record
    <detector>/sample_metrics/m_<sample>_<prompt_type>.json   carries ground_truth_vulnerable
    <any>.json                                                 optional ground-truth list

The detector is the sub-folder's name; everything else comes from the record (the key is its
``sample_id``; the prompt type is ``prompt_type``, else the file name's tail).

**Multi-judge records**: a JSON list (optionally ``.gz``) of records carrying
``sample_id, detector_model, judge_model, prompt_type`` besides the judge record's fields.

======================================================  ===================================
BlockBench field                                        kbench column
======================================================  ===================================
``overall_verdict.said_vulnerable``                     ``said_vulnerable``
``overall_verdict.confidence_expressed``                ``confidence``
``target_assessment.found``; newer judges               ``target_found`` (``partial_found``
``complete_found`` or ``partial_found``                 kept: partial credit)
``target_assessment.false_positive_detected`` (key      a fixed (safe) contract; the value
present)                                                is ``claims_fixed_target``
``target_assessment.type_match``                        ``type_match`` (lower case)
``root_cause_identification.score``, ``attack_vector_   ``rcir``, ``ava``, ``fsv`` (target
validity.score``, ``fix_suggestion_validity.score``     found only; null = not assessed)
``findings[].classification`` (else ``summary``)        the ``n_*`` finding counts; other
                                                        classes → ``n_other_invalid``
``location_claimed`` of the target's finding            ``claimed_lines``
ground truth ``is_vulnerable, severity,                 ``is_vulnerable, severity,
vulnerability_type, vulnerable_location.line_numbers``  vuln_type, true_lines``
======================================================  ===================================

The findings themselves are kept as JSON text in ``findings`` for drill-downs.

**Difficulty.** BlockBench's difficulty-stratified ("DS") sample ids carry their tier,
``<set>_t<k>_<nnn>`` (``ds_t1_001``): the reader sets the optional ``difficulty`` column to
``t<k>`` for them (empty for other ids; the column is left out when no id carries a tier), so
``vuln.tiers(..., by=("model", "difficulty"))`` gives the paper's per-tier rates.

**Messy records, as real judges write them.** Judge output always holds some failed or
malformed judgements; they are judge noise, never a load error (only canonical files raise). A
record that cannot be read as a judgement (:func:`judgement_problem`: an ``error`` field, an
unreadable ``overall_verdict``, a ``target_assessment`` that is empty, not an object, or whose
found key is absent, null or not true/false, a missing key field, a judge file that is not JSON)
is a **failed judgement**: left out (missing, never a "no"), counted in the warnings with the
first few named and their reason, and listed in ``meta["failed_judgements"]``. A record with
``variant: "differential"`` or a ``false_positive_detected`` key is a fixed contract even when
its assessment is empty: with a readable verdict it is kept, ``target_found`` false and
``claims_fixed_target`` empty unless the judge said true or false. An unreadable optional field
(a confidence outside [0, 1], an unknown type_match, a score that is not a number in [0, 1], a
finding that is not an object) is left empty and counted; nothing is recovered by guessing.

Ground truth comes from ``load_run(..., ground_truth=FILE)`` first, else a ground-truth JSON in
the bundle, else (folder) the ``sample_metrics`` file's ``ground_truth_vulnerable``, else
(multi-judge records, which carry none) it is inferred: vulnerable unless the record is
marked fixed (``variant: "differential"`` or ``false_positive_detected``), with a warning.
A folder sample with no ground truth anywhere is an error naming it. Values are passed on as
written and validated by :mod:`kbench_core.io`, so a bad confidence is reported as "file
detector_a/judge_outputs/j_x_direct.json, field 'confidence'".
"""

from __future__ import annotations

import json
import math
import re
import zlib
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

import numpy as np
import pandas as pd

from kbench_core.native import Converted, JsonProblem, NativeError, NativeFormat, load_json
from kbench_core.schema import FINDING_COUNTS, TYPE_MATCHES

__all__ = ["FORMATS", "difficulty", "parse_lines"]

CLASSIFICATION_COLUMNS: dict[str, str] = {
    "TARGET_MATCH": "n_target_match", "PARTIAL_MATCH": "n_partial_match",
    "BONUS_VALID": "n_bonus_valid", "HALLUCINATED": "n_hallucinated",
    "MISCHARACTERIZED": "n_mischaracterized", "DESIGN_CHOICE": "n_design_choice",
    "OUT_OF_SCOPE": "n_out_of_scope", "SECURITY_THEATER": "n_security_theater",
    "INFORMATIONAL": "n_informational",
}
SUMMARY_COLUMNS: dict[str, str] = {
    "target_matches": "n_target_match", "partial_matches": "n_partial_match",
    "bonus_valid": "n_bonus_valid", "hallucinated": "n_hallucinated",
    "mischaracterized": "n_mischaracterized", "design_choice": "n_design_choice",
    "out_of_scope": "n_out_of_scope", "security_theater": "n_security_theater",
    "informational": "n_informational",
}
SCORES: dict[str, str] = {"rcir": "root_cause_identification",
                          "ava": "attack_vector_validity", "fsv": "fix_suggestion_validity"}
MAX_LINES_PER_RANGE = 10_000
MAX_GROUND_TRUTH_BYTES = 512 * 1024**2
_MULTI_SIGNATURE = frozenset({"sample_id", "detector_model", "judge_model"})
_RANGE = r"\d+(?:\s*(?:-|–|—|to)\s*L?\d+)?"
_LINES_WORD = re.compile(rf"\blines?\b\s*[:#]?\s*({_RANGE}(?:\s*(?:,|&|and)\s*{_RANGE})*)",
                         re.IGNORECASE)
_L_PREFIX = re.compile(r"(?<![A-Za-z0-9])L(\d+)(?:\s*(?:-|–|—)\s*L?(\d+))?")


# ------------------------------------------------------------------------------ small parsers


def parse_lines(text: object) -> list[int] | None:
    """Line numbers named in a free-text location: ``"line 12"``, ``"lines 12-18"``,
    ``"lines 3, 5 and 9"``, ``"L12, L14"``, ``"#L12-L18"``; ranges are expanded (at most
    10,000 lines each). None when no line number is found (unknown, not "no lines").

    Examples
    --------
    >>> parse_lines("withdraw function, lines 12-14")
    [12, 13, 14]
    >>> parse_lines("L12, L14")
    [12, 14]
    >>> parse_lines("random()") is None
    True
    """
    if not isinstance(text, str) or not text:
        return None
    found: set[int] = set()

    def add(first: int, last: int) -> None:
        low, high = min(first, last), max(first, last)
        found.update(range(low, min(high, low + MAX_LINES_PER_RANGE - 1) + 1))

    for match in _LINES_WORD.finditer(text):
        for piece in re.split(r"\s*(?:,|&|and)\s*", match.group(1)):
            numbers = [int(n) for n in re.findall(r"\d+", piece)]
            if numbers:
                add(numbers[0], numbers[-1])
    for match in _L_PREFIX.finditer(text):
        first = int(match.group(1))
        add(first, int(match.group(2)) if match.group(2) else first)
    return sorted(found) if found else None


def _loads(data: bytes, where: str, unit: str = "file") -> Any:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise NativeError(f"not UTF-8 text ({exc.reason})", where=where, unit=unit) from None
    try:
        # Strict: duplicate keys, lone surrogates and deep nesting are named by their path;
        # NaN/Infinity are kept as marked text so validation names the field.
        return load_json(text)
    except JsonProblem as problem:
        message = problem.message
        if problem.line is not None:  # a syntax error: where in the member file
            message = message.replace("truncated JSON:", "invalid JSON:").replace(
                " (column", f" (line {problem.line}, column")
        field = ".".join(map(str, problem.path)) or None
        raise NativeError(message, where=where, field=field, unit=unit) from None


def _gunzip(data: bytes, name: str) -> bytes:
    if data[:2] != b"\x1f\x8b":
        return data
    decomp = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = decomp.decompress(data, MAX_GROUND_TRUTH_BYTES + 1)
    except zlib.error as exc:
        raise NativeError(f"ground-truth file {name}: corrupt gzip data ({exc})",
                          field="ground_truth") from None
    if decomp.eof and decomp.unused_data.count(0) != len(decomp.unused_data):
        raise NativeError(f"ground-truth file {name}: data after the gzip stream (only one "
                          "gzip member, optionally zero-padded, is read)", field="ground_truth")
    if len(out) > MAX_GROUND_TRUTH_BYTES or decomp.unconsumed_tail:
        raise NativeError(f"ground-truth file {name} decompresses to more than "
                          f"{MAX_GROUND_TRUTH_BYTES // 1024**2} MB", field="ground_truth")
    return out


def _text(value: Any) -> str:
    """A key field as text ("" when absent, null or not a name)."""
    if isinstance(value, str | int) and not isinstance(value, bool):
        return str(value).strip()
    return ""


def _lower(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


# ------------------------------------------------------------------------------ ground truth


def _ground_truth_records(payload: Any) -> list[Any] | None:
    """The records of a ground-truth document, or None if it does not look like one."""
    records = payload
    if isinstance(payload, dict):
        if "id" in payload and "ground_truth" in payload:
            records = [payload]
        else:
            records = next((payload[k] for k in ("samples", "ground_truth", "records", "data")
                            if isinstance(payload.get(k), list)), None)
    if not isinstance(records, list) or not records:
        return None
    first = records[0]
    if not (isinstance(first, dict) and "id" in first
            and ("ground_truth" in first or "is_vulnerable" in first)):
        return None
    return records


def _ground_truth(records: list[Any], name: str) -> dict[str, dict[str, Any]]:
    """``{sample id: {is_vulnerable, severity, vuln_type, true_lines}}`` from ground-truth
    records; structural faults name the file, the record and the field."""
    table: dict[str, dict[str, Any]] = {}
    for number, record in enumerate(records, start=1):
        def fail(message: str, field: str | None = None, number: int = number) -> NativeError:
            return NativeError(f"ground-truth file {name}, record {number}: {message}",
                               field=field)

        if not isinstance(record, dict):
            raise fail(f"expected an object, got {type(record).__name__}")
        sample = record.get("id")
        if not isinstance(sample, str | int) or isinstance(sample, bool) or sample == "":
            raise fail("expected a sample id", "id")
        truth = record.get("ground_truth", record)
        if not isinstance(truth, dict):
            raise fail("expected an object", "ground_truth")
        vulnerable = truth.get("is_vulnerable")
        if not isinstance(vulnerable, bool):
            raise fail(f"expected true or false, got {vulnerable!r}",
                       "ground_truth.is_vulnerable")
        location = truth.get("vulnerable_location")
        lines = None
        if isinstance(location, dict):
            lines = location.get("line_numbers")
        elif location is not None:
            raise fail("expected an object or null", "ground_truth.vulnerable_location")
        entry = {"is_vulnerable": vulnerable, "severity": _lower(truth.get("severity")),
                 "vuln_type": truth.get("vulnerability_type"), "true_lines": lines or None}
        key = str(sample)
        if key in table and table[key] != entry:
            raise fail(f"sample {key!r} appears twice with different ground truth", "id")
        table[key] = entry
    return table


def _given_ground_truth(options: Mapping[str, Any]) -> tuple[dict[str, dict], str] | None:
    given = options.get("ground_truth")
    if given is None:
        return None
    name, data = given
    payload = _loads(_gunzip(bytes(data), name), name)
    records = _ground_truth_records(payload)
    if records is None:
        raise NativeError(f"ground-truth file {name} is not a BlockBench ground truth: "
                          "expected a JSON list of {id, ground_truth{is_vulnerable, severity, "
                          "vulnerability_type, vulnerable_location}}", field="ground_truth")
    return _ground_truth(records, name), name


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
    return row


def _failure_note(failed: list[dict[str, Any]], unit: str) -> str:
    shown = ", ".join(f"{unit} {f['where']} ({f['reason']})" for f in failed[:5])
    more = f" and {len(failed) - 5} more" if len(failed) > 5 else ""
    return (f"{len(failed)} failed judgement{'s' * (len(failed) != 1)} (judge records that "
            f"cannot be read as a judgement) left out as missing, not counted as 'no': "
            f"{shown}{more}")


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
    for optional in ("partial_found", "claims_fixed_target", "findings"):
        if optional in frame and frame[optional].isna().all():
            frame = frame.drop(columns=optional)
    return frame.astype({c: object for c in frame.columns})


def _apply_truth(row: dict[str, Any], truth: Mapping[str, Any]) -> None:
    row["is_vulnerable"] = truth["is_vulnerable"]
    row["severity"] = truth.get("severity")
    row["vuln_type"] = truth.get("vuln_type")
    row["true_lines"] = truth.get("true_lines")


# ------------------------------------------------------------------------------ folder


def _judge_file(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return (len(parts) >= 3 and parts[-2] == "judge_outputs" and parts[-1].startswith("j_")
            and parts[-1].endswith(".json"))


def _metrics_file(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return (len(parts) >= 3 and parts[-2] == "sample_metrics" and parts[-1].startswith("m_")
            and parts[-1].endswith(".json"))


def _matches_files(paths: Sequence[str]) -> bool:
    return any(_judge_file(p) for p in paths)


def _prompt_from_name(name: str, sample: Any) -> str | None:
    stem = name.removesuffix(".json")
    prefix = f"j_{sample}_"
    if stem.startswith(prefix) and len(stem) > len(prefix):
        return stem[len(prefix):]
    return None


def _from_files(filename: str, files: Mapping[str, bytes],
                options: Mapping[str, Any]) -> Converted:
    judge_paths = sorted(p for p in files if _judge_file(p))
    if not judge_paths:
        raise NativeError("no judge_outputs/j_*.json files")
    warnings: list[str] = []
    given = _given_ground_truth(options)
    truth_source = None
    truth: dict[str, dict[str, Any]] = {}
    if given is not None:
        truth, truth_source = given
    else:
        for path in sorted(files):
            parts = PurePosixPath(path).parts
            if (not path.endswith(".json") or _judge_file(path) or _metrics_file(path)
                    or "judge_outputs" in parts or "sample_metrics" in parts):
                continue
            try:
                payload = _loads(files[path], path)
            except NativeError:
                continue  # not ours to judge: only ground-truth documents are read here
            records = _ground_truth_records(payload)
            if records is not None:
                for sample, entry in _ground_truth(records, path).items():
                    if sample in truth and truth[sample] != entry:
                        raise NativeError(f"sample {sample!r} has different ground truth in "
                                          f"{truth_source} and {path}", field="ground_truth")
                    truth[sample] = entry
                truth_source = path if truth_source is None else f"{truth_source}, {path}"
    metrics: dict[tuple[str, str, Any], tuple[Any, str]] = {}
    used_metrics: set[str] = set()
    for path in sorted(p for p in files if _metrics_file(p)):
        record = _loads(files[path], path)
        if not isinstance(record, dict):
            raise NativeError(f"expected an object, got {type(record).__name__}", where=path,
                              unit="file")
        folder = str(PurePosixPath(path).parent.parent)
        metrics[(folder, str(record.get("sample_id")), record.get("prompt_type"))] = (
            record.get("ground_truth_vulnerable"), path)

    unknown: dict[str, int] = {}
    noise: dict[str, int] = {}
    failed: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    numbers: list[str] = []
    conflicts: list[str] = []
    for path in judge_paths:
        pure = PurePosixPath(path)
        detector_folder = pure.parent.parent
        try:
            record = _loads(files[path], path)
        except NativeError as err:  # a judge file that is not JSON: judge noise
            record, reason = None, f"unreadable file: {err.message[:60]}"
        else:
            reason = judgement_problem(record)
            if reason is None and _text(record.get("sample_id")) == "":
                reason = "no sample_id"
        if reason is not None:
            detail = record if isinstance(record, dict) else {}
            failed.append({"where": path, "reason": reason,
                           "sample": _text(detail.get("sample_id")),
                           "model": detector_folder.name,
                           "prompt_type": _text(detail.get("prompt_type")),
                           "judge": _text(detail.get("judge_model"))})
            continue
        row = _row(record, unknown, noise)
        row["model"] = detector_folder.name
        if row["prompt_type"] is None:
            row["prompt_type"] = _prompt_from_name(pure.name, row["sample"])
        sample = str(row["sample"])
        from_metrics = metrics.get((str(detector_folder), sample, row["prompt_type"]))
        if from_metrics is not None:
            used_metrics.add(from_metrics[1])
        if sample in truth:
            _apply_truth(row, truth[sample])
            if from_metrics is not None and isinstance(from_metrics[0], bool) \
                    and from_metrics[0] != truth[sample]["is_vulnerable"]:
                conflicts.append(f"{from_metrics[1]} ({sample})")
        elif from_metrics is not None and from_metrics[0] is not None:
            _apply_truth(row, {"is_vulnerable": from_metrics[0]})
        else:
            where_truth = (f"the ground-truth file {truth_source}" if truth_source
                           else "a ground-truth file (give one with load_run(..., "
                                "ground_truth=FILE) or put it in the folder)")
            raise NativeError(f"sample {sample!r} has no ground truth: it is neither in "
                              f"{where_truth} nor in a sample_metrics/m_{sample}_"
                              f"{row['prompt_type']}.json with ground_truth_vulnerable",
                              where=path, field="ground_truth", unit="file")
        rows.append(row)
        numbers.append(path)
    if failed:
        warnings.append(_failure_note(failed, "file"))
    if noise:
        warnings.append(_noise_note(noise))
    if unknown:
        warnings.append(_unknown_note(unknown))
    if conflicts:
        warnings.append(f"ground truth from {truth_source} differs from sample_metrics' "
                        f"ground_truth_vulnerable for {len(conflicts)} answer(s); the "
                        f"ground-truth file is used: {', '.join(conflicts[:5])}")
    unmatched = sorted({path for _, path in metrics.values()} - used_metrics)
    if unmatched:
        warnings.append(f"{len(unmatched)} sample_metrics file(s) have no judge output and "
                        f"were ignored: {', '.join(unmatched[:5])}")
    if not rows:
        raise NativeError("every judge record is a failed judgement (" + "; ".join(
            f"{f['where']}: {f['reason']}" for f in failed[:3]) + "): nothing to load")
    for row in rows:
        row.pop("_safe_hint")
    meta = {"ground_truth": truth_source or "sample_metrics (ground_truth_vulnerable)",
            "failed_judgements": failed,
            "detectors": sorted({str(r["model"]) for r in rows})}
    return Converted(kind="judged", frame=_frame(rows), numbers=np.asarray(numbers, dtype=object),
                     unit="file", warnings=tuple(warnings), meta=meta)


# ------------------------------------------------------------------------------ multi-judge


def _multi_records(payload: Any) -> list[Any] | None:
    if isinstance(payload, dict) and set(payload) >= _MULTI_SIGNATURE:
        return [payload]
    return payload if isinstance(payload, list) else None


def _matches_json(payload: Any) -> bool:
    records = _multi_records(payload)
    if not records:
        return False
    # The first records that are objects, not the first alone: one broken record (an empty
    # object, a judge's stray output) must not hide a file of judge records (it is then a
    # failed judgement, named in the warnings)
    head = [set(r) >= _MULTI_SIGNATURE for r in records[:20] if isinstance(r, dict)]
    return bool(head) and 2 * sum(head) >= len(head)


def _from_json(filename: str, payload: Any, options: Mapping[str, Any]) -> Converted:
    records = _multi_records(payload) or []
    given = _given_ground_truth(options)
    unknown: dict[str, int] = {}
    noise: dict[str, int] = {}
    failed: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    numbers: list[int] = []
    conflicts: list[str] = []
    for number, record in enumerate(records, start=1):
        reason = judgement_problem(record)
        if reason is None:
            missing = [key for key in ("sample_id", "detector_model", "judge_model")
                       if _text(record.get(key)) == ""]
            if missing:
                reason = f"no {', '.join(missing)}"
        if reason is not None:
            detail = record if isinstance(record, dict) else {}
            failed.append({"where": number, "reason": reason,
                           "sample": _text(detail.get("sample_id")),
                           "model": _text(detail.get("detector_model")),
                           "prompt_type": _text(detail.get("prompt_type")),
                           "judge": _text(detail.get("judge_model"))})
            continue
        row = _row(record, unknown, noise)
        row["model"] = record.get("detector_model")
        if given is not None:
            truth, name = given
            sample = str(row["sample"])
            if sample not in truth:
                raise NativeError(f"sample {sample!r} is not in the ground-truth file {name}",
                                  where=number, field="sample_id")
            _apply_truth(row, truth[sample])
            if row["_safe_hint"] and truth[sample]["is_vulnerable"]:
                conflicts.append(f"record {number} ({sample})")
        else:
            _apply_truth(row, {"is_vulnerable": not row["_safe_hint"]})
        row.pop("_safe_hint")
        rows.append(row)
        numbers.append(number)
    if not rows:
        raise NativeError("the list holds no judge record that can be read as a judgement ("
                          + "; ".join(f"record {f['where']}: {f['reason']}"
                                      for f in failed[:3]) + ")")
    warnings = []
    if given is None:
        n_safe = sum(1 for r in rows if r["is_vulnerable"] is False)
        warnings.append(
            "ground truth inferred: these records carry none, so a record is taken as "
            'vulnerable unless it is marked fixed (variant: "differential", or '
            f"false_positive_detected in its target_assessment): {n_safe} safe, "
            f"{len(rows) - n_safe} vulnerable. Give the ground-truth file with "
            "load_run(..., ground_truth=FILE) for severities, types and lines")
    if failed:
        warnings.append(_failure_note(failed, "record"))
    if noise:
        warnings.append(_noise_note(noise))
    if unknown:
        warnings.append(_unknown_note(unknown))
    if conflicts:
        warnings.append(f"{len(conflicts)} record(s) assess a fixed contract "
                        "(false_positive_detected) whose ground truth says vulnerable: "
                        + ", ".join(conflicts[:5]))
    meta = {"ground_truth": given[1] if given else "inferred", "failed_judgements": failed}
    return Converted(kind="judged", frame=_frame(rows), numbers=np.asarray(numbers),
                     unit="record", warnings=tuple(warnings), meta=meta)


FORMATS = (
    NativeFormat(name="BlockBench judge outputs", kind="judged",
                 matches_files=_matches_files, from_files=_from_files),
    NativeFormat(name="BlockBench multi-judge records", kind="judged",
                 matches_json=_matches_json, from_json=_from_json),
)
