"""What the loader refuses, and its limits: :class:`Problem`, :class:`RunFormatError` and the
size limits every reader checks before the work they bound (see :mod:`kbench_core.io`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from kbench_core import native
from kbench_core.text import escape_controls

__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_MAX_DECOMPRESSED", "MAX_CELL_CHARS", "MAX_COLUMNS",
           "MAX_JSON_DEPTH", "MAX_LISTED_PROBLEMS", "MAX_ROWS", "Format", "OnError", "Problem",
           "RunFormatError", "Source", "fail", "show_value"]

DEFAULT_MAX_BYTES = 200 * 1024**2
DEFAULT_MAX_DECOMPRESSED = 1024**3
MAX_LISTED_PROBLEMS = 20
MAX_JSON_DEPTH = native.MAX_JSON_DEPTH
MAX_CELL_CHARS = 1_000_000
MAX_COLUMNS = 2_000
# Ten times the largest benchmark run (1M bias rows); a loaded row costs ~100 bytes or more.
MAX_ROWS = 10_000_000

Format = Literal["csv", "tsv", "json", "jsonl", "parquet"]
OnError = Literal["raise", "skip"]
Source = str | Path | tuple[str, bytes]

@dataclass(frozen=True)
class Problem:
    """One invalid cell, row or file-level fault.

    ``row`` is 1-based (or, for a folder of native files, the member path a row came from); None
    for a file-level fault.
    """

    row: int | str | None
    field: str | None
    message: str
    unit: str = "row"

    def __str__(self) -> str:
        where = []
        if self.row is not None:
            where.append(f"{self.unit} {self.row}")
        if self.field is not None:
            where.append(f"field '{self.field}'")
        # Names and values come from the file: never a raw control character in a message.
        return escape_controls((", ".join(where) + ": " if where else "") + self.message)


class RunFormatError(ValueError):
    """A file that is not a valid run; the message names file, row and field.

    ``problems`` holds at most :data:`MAX_LISTED_PROBLEMS` entries; ``total`` counts them all.
    """

    def __init__(self, file: str, problems: Sequence[Problem], total: int | None = None) -> None:
        self.file = file
        self.problems = list(problems)[:MAX_LISTED_PROBLEMS]
        self.total = len(problems) if total is None else total
        super().__init__(self._render())

    def _render(self) -> str:
        file = escape_controls(self.file)
        if self.total == 1:
            return f"{file}: {self.problems[0]}"
        lines = [f"{file}: {self.total} problems"]
        lines += [f"  - {p}" for p in self.problems]
        if self.total > len(self.problems):
            lines.append(f"  ... and {self.total - len(self.problems)} more")
        return "\n".join(lines)


def fail(file: str, message: str, *, row: int | None = None, field: str | None = None,
          unit: str = "row") -> RunFormatError:
    return RunFormatError(file, [Problem(row, field, message, unit)])


def show_value(value: Any) -> str:
    """A value from a file, short and printable, for an error message."""
    try:
        text = repr(str(value)) if isinstance(value, str) else str(value)
    except (ValueError, TypeError):  # e.g. an integer too long to print
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 60 else text[:57] + "..."
