"""A workspace's labels, kept beside its runs (``<workspace>/labels/<run sha256>/``):
append-only files, one per reviewer and session, so that two reviewers (or two sessions of
one) never write to the same file and nothing already labelled is ever rewritten.

Each label is one CSV line added with a single ``write`` on a file opened in append mode and
flushed to disk (``fsync``) before the page says it is saved: a crash loses at most the line
being written, and a torn last line is left out on reading, with a warning.
"""

from __future__ import annotations

import csv
import io
import os
import re
import secrets
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from kbench_core.audit.labels import (
    LABEL_FRAME_COLUMNS,
    MAX_LABEL_BYTES,
    LabelError,
    _cell,
    empty_labels,
    read_labels,
)
from kbench_core.text import safe_name

STORE_COLUMNS: tuple[str, ...] = LABEL_FRAME_COLUMNS
_SHA = re.compile(r"[0-9a-f]{64}")


class LabelStore:
    """The labels of one run in one workspace.

    Parameters
    ----------
    workspace : path
        The workspace folder (it must exist).
    run_sha256 : str
        The run's content hash (64 hex digits): the labels' folder name.
    """

    def __init__(self, workspace: str | os.PathLike[str], run_sha256: str) -> None:
        if not _SHA.fullmatch(str(run_sha256)):
            raise ValueError("a run's labels are kept by its SHA-256 (64 hex digits); got "
                             f"{str(run_sha256)[:80]!r}")
        self.run_sha256 = str(run_sha256)
        self.folder = Path(workspace) / "labels" / self.run_sha256

    def file_for(self, reviewer: str, session: str) -> Path:
        """This reviewer's file for this session (``session``: any short token)."""
        token = re.sub(r"[^0-9A-Za-z]", "", str(session))[:32] or secrets.token_hex(8)
        return self.folder / f"{safe_name(reviewer)[:60]}-{token}.csv"

    def append(self, rows: Sequence[Mapping[str, object]], *, reviewer: str,
               session: str) -> Path:
        """Add labels (dicts with :data:`STORE_COLUMNS`) to this reviewer's session file, in
        one write, flushed to disk. Returns the file."""
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.file_for(reviewer, session)
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        for row in rows:
            writer.writerow([_cell(row.get(c)) for c in STORE_COLUMNS])
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(path, flags, 0o600)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(f"{path.name} is not a regular file")
            if os.fstat(fd).st_size == 0:
                header = io.StringIO()
                csv.writer(header, lineterminator="\n").writerow(STORE_COLUMNS)
                os.write(fd, (header.getvalue() + out.getvalue()).encode("utf-8"))
            else:
                os.write(fd, out.getvalue().encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        return path

    def read(self, judged: pd.DataFrame | pd.MultiIndex | None = None
             ) -> tuple[pd.DataFrame, list[str]]:
        """Every reviewer's labels of this run (all files), with warnings: a file that cannot
        be read is named and skipped (the others still count), a torn last line left out."""
        if not self.folder.is_dir():
            return empty_labels(), []
        frames, warnings = [], []
        for path in sorted(self.folder.glob("*.csv")):
            try:
                info = path.lstat()
                if not stat.S_ISREG(info.st_mode):
                    warnings.append(f"{path.name}: not a regular file, skipped")
                    continue
                if info.st_size > MAX_LABEL_BYTES:
                    warnings.append(f"{path.name}: over {MAX_LABEL_BYTES // 1024**2} MB, "
                                    "skipped")
                    continue
                data = path.read_bytes()
            except OSError as exc:
                warnings.append(f"{path.name}: cannot be read ({exc.strerror or exc})")
                continue
            if data and not data.endswith(b"\n"):
                data = data[:data.rfind(b"\n") + 1]
                warnings.append(f"{path.name}: its last line was cut short (a save "
                                "interrupted) and is left out")
            try:
                frame, more = read_labels((path.name, data), run_sha256=self.run_sha256,
                                          judged=judged)
            except LabelError as exc:
                warnings.append(str(exc))
                continue
            frames.append(frame)
            warnings += more
        if not frames:
            return empty_labels(), warnings
        return pd.concat(frames, ignore_index=True), warnings
