"""BlockBench's column sets, limits, and the parsing of line ranges and (gzipped) JSON."""

from __future__ import annotations

import re
import zlib
from typing import Any

from kbench_core.native._base import JsonProblem, NativeError, load_json

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
