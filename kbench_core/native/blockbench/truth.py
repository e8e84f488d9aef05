"""BlockBench's ground truth: read from the sample folders or given beside them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kbench_core.native._base import NativeError

from .lines import _gunzip, _loads, _lower

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
