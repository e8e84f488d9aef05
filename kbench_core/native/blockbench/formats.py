"""The BlockBench native formats (judge-output folders and multi-record JSON): :data:`FORMATS`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

import numpy as np

from kbench_core.native._base import Converted, NativeError, NativeFormat

from .lines import _MULTI_SIGNATURE, _loads, _text
from .rows import (
    _apply_truth,
    _failed_row,
    _frame,
    _keep_failed,
    _reading_notes,
    _row,
    judgement_problem,
)
from .truth import _given_ground_truth, _ground_truth, _ground_truth_records

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
        entry = None
        if reason is not None:
            detail = record if isinstance(record, dict) else {}
            entry = {"where": path, "reason": reason,
                     "sample": _text(detail.get("sample_id")),
                     "model": detector_folder.name,
                     "prompt_type": _text(detail.get("prompt_type")),
                     "judge": _text(detail.get("judge_model")), "kept": False}
            failed.append(entry)
            if not (entry["sample"] and entry["judge"]):
                continue  # nowhere to place it: counted in the warnings only
            # Kept as a row with its labels missing (docs/formats.md): see _failed_row.
            row = _failed_row(record, reason)
        else:
            row = _row(record, unknown, noise)
        row["model"] = detector_folder.name
        if row["prompt_type"] is None:
            row["prompt_type"] = _prompt_from_name(pure.name, row["sample"])
        sample = str(row["sample"])
        from_metrics = metrics.get((str(detector_folder), sample, row["prompt_type"]))
        if from_metrics is not None:
            used_metrics.add(from_metrics[1])
        if entry is not None and sample not in truth and (
                from_metrics is None or from_metrics[0] is None):
            continue  # a failed judgement of a sample without ground truth: warned only
        if entry is not None:
            row["_entry"] = entry
            entry["kept"] = True
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
    if conflicts:
        warnings.append(f"ground truth from {truth_source} differs from sample_metrics' "
                        f"ground_truth_vulnerable for {len(conflicts)} answer(s); the "
                        f"ground-truth file is used: {', '.join(conflicts[:5])}")
    unmatched = sorted({path for _, path in metrics.values()} - used_metrics)
    if unmatched:
        warnings.append(f"{len(unmatched)} sample_metrics file(s) have no judge output and "
                        f"were ignored: {', '.join(unmatched[:5])}")
    if all(r.get("failed_judgement") is not None for r in rows):
        raise NativeError("every judge record is a failed judgement (" + "; ".join(
            f"{f['where']}: {f['reason']}" for f in failed[:3]) + "): nothing to load")
    keep = _keep_failed(rows)
    rows = [r for r, k in zip(rows, keep, strict=True) if k]
    numbers = [n for n, k in zip(numbers, keep, strict=True) if k]
    for row in rows:
        row.pop("_safe_hint")
    warnings[:0] = _reading_notes(failed, noise, unknown, "file")
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
    good = 0  # readable judgements (a list of failed ones only is not a run)
    for number, record in enumerate(records, start=1):
        reason = judgement_problem(record)
        if reason is None:
            missing = [key for key in ("sample_id", "detector_model", "judge_model")
                       if _text(record.get(key)) == ""]
            if missing:
                reason = f"no {', '.join(missing)}"
        if reason is not None:
            detail = record if isinstance(record, dict) else {}
            entry = {"where": number, "reason": reason,
                     "sample": _text(detail.get("sample_id")),
                     "model": _text(detail.get("detector_model")),
                     "prompt_type": _text(detail.get("prompt_type")),
                     "judge": _text(detail.get("judge_model")), "kept": False}
            failed.append(entry)
            if not (entry["sample"] and entry["model"] and entry["judge"]):
                continue  # nowhere to place it: counted in the warnings only
            if given is not None and entry["sample"] not in given[0]:
                continue  # no ground truth to give it (a readable record there is an error)
            # Kept as a row with its labels missing (docs/formats.md), so both conventions for a
            # failed judgement (missing, or BlockBench's "not found") can count it.
            row = _failed_row(record, reason)
            row["model"] = entry["model"]
            row["_entry"] = entry
            entry["kept"] = True
        else:
            row = _row(record, unknown, noise)
            row["model"] = record.get("detector_model")
            good += 1
        if given is not None:
            truth, name = given
            sample = str(row["sample"])
            if sample not in truth:
                raise NativeError(f"sample {sample!r} is not in the ground-truth file {name}",
                                  where=number, field="sample_id")
            _apply_truth(row, truth[sample])
            if row["_safe_hint"] and truth[sample]["is_vulnerable"] and reason is None:
                conflicts.append(f"record {number} ({sample})")
        else:
            _apply_truth(row, {"is_vulnerable": not row["_safe_hint"]})
        row.pop("_safe_hint")
        rows.append(row)
        numbers.append(number)
    if not good:
        raise NativeError("the list holds no judge record that can be read as a judgement ("
                          + "; ".join(f"record {f['where']}: {f['reason']}"
                                      for f in failed[:3]) + ")")
    keep = _keep_failed(rows)
    rows = [r for r, k in zip(rows, keep, strict=True) if k]
    numbers = [n for n, k in zip(numbers, keep, strict=True) if k]
    warnings = []
    if given is None:
        n_safe = sum(1 for r in rows if r["is_vulnerable"] is False)
        warnings.append(
            "ground truth inferred: these records carry none, so a record is taken as "
            'vulnerable unless it is marked fixed (variant: "differential", or '
            f"false_positive_detected in its target_assessment): {n_safe} safe, "
            f"{len(rows) - n_safe} vulnerable. Give the ground-truth file with "
            "load_run(..., ground_truth=FILE) for severities, types and lines")
    warnings.extend(_reading_notes(failed, noise, unknown, "record"))
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
