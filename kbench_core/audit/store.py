"""A workspace's labels, kept beside its runs (``<workspace>/labels/<run sha256>/``):
append-only files, one per reviewer and session, so that two reviewers (or two sessions of
one) never write to the same file and nothing already labelled is ever rewritten.

Each label is one CSV line added with a single ``write`` on a file opened in append mode and
flushed to disk (``fsync``) before the page says it is saved: a crash loses at most the line
being written, and a torn last line is left out on reading, with a warning.
"""

from __future__ import annotations

import csv
import errno
import io
import os
import re
import secrets
import stat
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from kbench_core.audit.labels import (
    LABEL_FRAME_COLUMNS,
    MAX_LABEL_BYTES,
    MAX_NOTE_CHARS,
    LabelError,
    _cell,
    empty_labels,
    read_labels,
)
from kbench_core.text import csv_cell, safe_name

STORE_COLUMNS: tuple[str, ...] = LABEL_FRAME_COLUMNS
# Files parsed, by (path, inode, size, modification time): a label appended changes its own
# file only, so a page that re-reads the store parses that one again.
_PARSED: OrderedDict[tuple, tuple[pd.DataFrame | None, list[str]]] = OrderedDict()
_PARSED_LOCK = threading.Lock()
_PARSED_FILES = 256
_SHA = re.compile(r"[0-9a-f]{64}")


def _read_regular(path: Path) -> bytes | None:
    """The bytes of ``path`` when it is a regular file (opened without following a link and
    without waiting on a FIFO; checked on the open file, so a swap after a check is caught),
    at most one byte past :data:`MAX_LABEL_BYTES`; None when it is anything else."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EMLINK):  # a link; a FIFO, no writer
            return None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks, size = [], 0
        while size <= MAX_LABEL_BYTES:
            chunk = os.read(fd, min(1 << 20, MAX_LABEL_BYTES + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _fitting_note(note: object) -> object:
    """A note cut so that what the file holds (controls and bidi characters written as
    visible escapes, :func:`kbench_core.text.csv_cell`) stays within
    :data:`~kbench_core.audit.labels.MAX_NOTE_CHARS`, which reading checks."""
    if not isinstance(note, str):
        return note
    while len(str(csv_cell(note))) > MAX_NOTE_CHARS:
        note = note[:max(len(note) - max((len(str(csv_cell(note))) - MAX_NOTE_CHARS) // 10, 1),
                         0)]
    return note


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
        if self.folder.is_symlink() or self.folder.parent.is_symlink():
            raise OSError(f"labels/{self.run_sha256[:12]}… is a link, not the workspace's own "
                          "folder: no label is written through it")
        path = self.file_for(reviewer, session)
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        for row in rows:
            writer.writerow([_cell(_fitting_note(row.get(c)) if c == "note" else row.get(c))
                             for c in STORE_COLUMNS])
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

    def _parse(self, path: Path, judged: pd.DataFrame | pd.Index | None
               ) -> tuple[pd.DataFrame | None, list[str]]:
        """One file's labels (None when it cannot be read) and its warnings."""
        warnings: list[str] = []
        try:
            data = _read_regular(path)
        except OSError as exc:
            return None, [f"{path.name}: cannot be read ({exc.strerror or exc})"]
        if data is None:  # swapped for a link, a FIFO or a device since the check
            return None, [f"{path.name}: not a regular file, skipped"]
        if len(data) > MAX_LABEL_BYTES:
            return None, [f"{path.name}: over {MAX_LABEL_BYTES // 1024**2} MB, skipped"]
        if data and not data.endswith(b"\n"):
            data = data[:data.rfind(b"\n") + 1]
            warnings.append(f"{path.name}: its last line was cut short (a save "
                            "interrupted) and is left out")
        try:
            frame, more = read_labels((path.name, data), run_sha256=self.run_sha256,
                                      judged=judged, on_error="skip")
        except LabelError as exc:
            return None, [*warnings, str(exc)]
        return frame, warnings + more

    def read(self, judged: pd.DataFrame | pd.Index | None = None
             ) -> tuple[pd.DataFrame, list[str]]:
        """Every reviewer's labels of this run (all files), with warnings: a file that cannot
        be read is named and skipped (the others still count), a torn last line left out."""
        if not self.folder.is_dir():
            return empty_labels(), []
        if self.folder.is_symlink() or self.folder.parent.is_symlink():
            return empty_labels(), [f"labels/{self.run_sha256[:12]}…: a link, not the "
                                    "workspace's own folder; its labels are not read"]
        frames, warnings = [], []
        for path in sorted(self.folder.glob("*.csv")):
            try:
                info = path.lstat()
            except OSError as exc:
                warnings.append(f"{path.name}: cannot be read ({exc.strerror or exc})")
                continue
            if not stat.S_ISREG(info.st_mode):
                warnings.append(f"{path.name}: not a regular file, skipped")
                continue
            # a file is parsed again only when it changed (each label re-reads the store)
            key = (str(path), info.st_ino, info.st_size, info.st_mtime_ns, judged is None)
            with _PARSED_LOCK:
                found = _PARSED.get(key)
                if found is not None:
                    _PARSED.move_to_end(key)
            if found is None:
                found = self._parse(path, judged)
                with _PARSED_LOCK:
                    _PARSED[key] = found
                    while len(_PARSED) > _PARSED_FILES:
                        _PARSED.popitem(last=False)
            frame, more = found
            if frame is not None:
                frames.append(frame)
            warnings += more
        if not frames:
            return empty_labels(), warnings
        return pd.concat(frames, ignore_index=True), warnings
