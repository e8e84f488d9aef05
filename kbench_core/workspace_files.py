"""The files of a workspace (:mod:`kbench_core.workspace`): each saved run's JSON sidecar,
read and validated like an upload (strict JSON, an object with a text ``name``, a known
``kind``, an object ``meta`` whose values are checked, a list of text ``warnings``, at most
4 MB), so a tampered or damaged sidecar is a :class:`~kbench_core.io.RunFormatError` naming the
file and field, never a crash."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kbench_core import families, native
from kbench_core.io import Problem, RunFormatError, run_name
from kbench_core.readers.sources import open_regular, read_regular

MAX_SIDECAR_BYTES = 4 * 1024**2
_HEX64 = re.compile(r"[0-9a-f]{64}")
MAX_META_TEXT = 4096
MAX_COUNT = 2**53  # a count a float holds exactly: sizes and row counts are far below it
_META_TEXT = ("source", "format", "ground_truth")
_META_COUNTS = ("bytes", "rows")


def _bad(file: str, message: str, field: str | None = None) -> RunFormatError:
    return RunFormatError(file, [Problem(None, field, message)])


def _read_sidecar(path: Path) -> dict[str, Any]:
    """The sidecar's fields, validated; RunFormatError naming the file and field otherwise."""
    name = path.name
    try:
        size = path.stat().st_size
        if size > MAX_SIDECAR_BYTES:
            raise _bad(name, f"workspace metadata of {size:,} bytes, over the 4 MB limit")
        text = read_regular(path).decode("utf-8")  # a FIFO or device refused, not read
    except FileNotFoundError:
        raise _bad(name, "missing workspace metadata; remove the .parquet twin or upload the "
                         "run again") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise _bad(name, f"unreadable workspace metadata ({exc})") from None
    try:
        data = native.load_json(text)
    except native.JsonProblem as problem:
        raise _bad(name, f"invalid workspace metadata: {problem.message}",
                   ".".join(map(str, problem.path)) or None) from None
    if not isinstance(data, dict):
        raise _bad(name, f"workspace metadata must be a JSON object, got {type(data).__name__}")
    if not isinstance(data.get("name"), str) or len(data["name"]) > 100_000:
        raise _bad(name, "expected the run's name (text)", "name")
    if not isinstance(data.get("kind"), str) or not families.is_registered(data["kind"]):
        raise _bad(name, f"unknown run kind {str(data.get('kind'))[:40]!r}; expected one of "
                         f"{', '.join(families.kinds())}", "kind")
    meta = data.get("meta", {})
    if not isinstance(meta, dict):
        raise _bad(name, f"expected an object, got {type(meta).__name__}", "meta")
    warnings = data.get("warnings", [])
    if not isinstance(warnings, list) or not all(isinstance(w, str) for w in warnings):
        raise _bad(name, "expected a list of text", "warnings")
    checksum = data.get("parquet_sha256")
    if checksum is not None and not (isinstance(checksum, str) and _HEX64.fullmatch(checksum)):
        raise _bad(name, "expected a SHA-256 (64 hex digits)", "parquet_sha256")
    if "sha256" in meta and not (isinstance(meta["sha256"], str)
                                 and _HEX64.fullmatch(meta["sha256"])):
        raise _bad(name, "expected a SHA-256 (64 hex digits)", "meta.sha256")
    meta = _checked_meta(name, meta)
    models = data.get("models")
    if models is not None and not (isinstance(models, list) and len(models) <= MAX_COUNT
                                   and all(isinstance(m, str) and len(m) <= MAX_META_TEXT
                                           for m in models)):
        raise _bad(name, "expected a list of model names", "models")
    rows = data.get("rows")
    if rows is not None and (not isinstance(rows, int) or isinstance(rows, bool)
                             or not 0 <= rows < MAX_COUNT):
        raise _bad(name, f"expected a count (a whole number from 0 to 2**53), got "
                         f"{str(rows)[:40]!r}", "rows")
    # the loader's rule for names, so a name kbench saved always comes back as it was
    return {"name": run_name(data["name"]), "kind": data["kind"], "meta": meta,
            "warnings": [str(w) for w in warnings], "parquet_sha256": checksum,
            "models": models, "rows": rows}


def _checked_meta(name: str, meta: dict[str, Any]) -> dict[str, Any]:
    """The sidecar's ``meta`` with every value kbench reads checked as an upload's would be:
    counts (``bytes``, ``rows``) non-negative integers below 2**53, texts short text, the
    column list a list of text, a report summary checked like the report's own
    (:func:`kbench_core.native.kahnebench_report.clean_summary`). A tampered value is a
    :class:`RunFormatError` naming ``meta.<key>``, never a crash of a page that shows it."""
    from kbench_core.native.kahnebench_report import clean_summary

    out = dict(meta)
    for key in _META_COUNTS:
        value = meta.get(key)
        # JsonBigInt (a 400-digit integer) is text, so it is refused with the other text.
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                  or not 0 <= value < MAX_COUNT):
            raise _bad(name, f"expected a count (a whole number from 0 to 2**53), got "
                             f"{str(value)[:40]!r}", f"meta.{key}")
    for key in _META_TEXT:
        value = meta.get(key)
        if value is not None and (not isinstance(value, str) or len(value) > MAX_META_TEXT):
            raise _bad(name, f"expected text of at most {MAX_META_TEXT:,} characters",
                       f"meta.{key}")
    columns = meta.get("columns")
    if columns is not None and not (isinstance(columns, list)
                                    and all(isinstance(c, str) for c in columns)):
        raise _bad(name, "expected a list of column names", "meta.columns")
    published = meta.get("published")
    if published is not None and not (isinstance(published, dict)
                                      and all(isinstance(v, str) for v in published.values())):
        raise _bad(name, "expected an object of text", "meta.published")
    summaries = meta.get("summary")
    if summaries is not None:
        if not isinstance(summaries, dict):
            raise _bad(name, f"expected an object of summaries by model, got "
                             f"{type(summaries).__name__}", "meta.summary")
        notes: list[str] = []
        try:
            out["summary"] = {model: clean_summary(value, model, notes)
                              for model, value in summaries.items()}
        except native.NativeError as err:
            raise _bad(name, err.message, f"meta.{err.field}") from None
        if notes:  # a field the importer never writes: the sidecar was edited
            raise _bad(name, notes[0], "meta.summary")
    return out


def _trusted_sidecar(path: Path) -> dict[str, Any]:
    """The validated sidecar of a saved Parquet file, which must record that file's hash."""
    sidecar = _read_sidecar(path.with_suffix(".json"))
    if sidecar["parquet_sha256"] is None:
        # Without the file's own hash nothing ties the sidecar's provenance (its
        # meta.sha256) to this content: a replaced file would carry the old hash.
        raise _bad(path.with_suffix(".json").name,
                   "the workspace metadata records no SHA-256 of the Parquet "
                   "file, so its content cannot be checked against what was "
                   "saved and its provenance cannot be trusted; remove it and "
                   "upload the run again", "parquet_sha256")
    return sidecar


# ------------------------------------------------------------------------------------------
# Interrupted saves. A save writes, in this order: its journal ``<stem>.saving`` (written as
# ``<stem>.saving.tmp``, locked, then renamed: a journal under its final name is complete),
# ``<stem>.parquet.tmp``, ``<stem>.json.tmp``, renames the sidecar then the Parquet file into
# place, and removes the journal. The journal records the SHA-256 of both files, and its lock
# (flock) is held until the save ends, so a journal nobody holds is a save whose process died
# (a lock goes with its process, even on SIGKILL). On start, each such save is finished when
# both files' bytes are there as kbench wrote them, else rolled back; a file under a final
# name is removed only when its bytes are those the journal records, so kbench never deletes a
# file it did not write. What it cannot tell is listed, never touched.

JOURNAL = ".saving"
# A removal keeps a journal too (the Parquet file goes first, then the sidecar): another
# server starting meanwhile does not report the sidecar as left over, and a removal whose
# process died is finished on the next start (each file only if its bytes are the recorded).
REMOVAL = ".removing"
MAX_JOURNAL_BYTES = 64 * 1024
_STEM = re.compile(r"[A-Za-z0-9._-]+-(?:[0-9a-f]{12}|nohash)-[0-9a-f]{8}")

try:
    import fcntl
except ImportError:  # pragma: no cover - not Linux or macOS: a journal is dead after an hour
    fcntl = None  # type: ignore[assignment]
ORPHAN_SECONDS = 3600.0


def _try_lock(handle: int, *, wait: bool) -> bool:
    if fcntl is None:  # pragma: no cover
        return True
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except OSError:
        return False
    return True


class SaveJournal:
    """The journal of one save in progress (:meth:`begin`), held locked until :meth:`end`."""

    def __init__(self, path: Path, handle: int) -> None:
        self.path = path
        self.handle = handle

    @classmethod
    def begin(cls, directory: Path, stem: str, *, name: str, parquet_sha256: str,
              sidecar: bytes, suffix: str = JOURNAL) -> SaveJournal:
        """Write and lock the journal of the save of ``stem`` (OSError when it cannot);
        ``suffix=REMOVAL``: of its removal."""
        record = json.dumps({"name": name, "stem": stem, "parquet_sha256": parquet_sha256,
                             "sidecar_sha256": hashlib.sha256(sidecar).hexdigest()})
        tmp = directory / f"{stem}{suffix}.tmp"
        handle = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            _try_lock(handle, wait=True)
            os.write(handle, record.encode("utf-8"))
            os.replace(tmp, directory / f"{stem}{suffix}")
        except OSError:
            os.close(handle)
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        return cls(directory / f"{stem}{suffix}", handle)

    def end(self) -> None:
        """The save is over (done or undone): the journal goes, then its lock."""
        with contextlib.suppress(OSError):
            self.path.unlink()
        os.close(self.handle)


@dataclass
class Recovery:
    """What :func:`recover` found: saves it finished (their Parquet file names), saves it
    rolled back and files it left in place (each a message by file name)."""

    finished: dict[str, str] = field(default_factory=dict)
    rolled_back: dict[str, str] = field(default_factory=dict)
    left: dict[str, str] = field(default_factory=dict)


def _beginning(handle: int) -> bool:
    """Whether a journal nobody locks is a save or removal beginning now: created, not yet
    locked nor written (an empty file, younger than :data:`ORPHAN_SECONDS`)."""
    try:
        info = os.fstat(handle)
    except OSError:
        return False
    return info.st_size == 0 and time.time() - info.st_mtime < ORPHAN_SECONDS


def _ended(handle: int) -> bool:
    """Whether the journal open as ``handle`` was removed since it was opened: its save or
    removal ended (renamed into place, then deleted, then unlocked) between the listing of
    the folder and the lock, so its name now holds nothing, and nothing is to be done."""
    try:
        return os.fstat(handle).st_nlink == 0
    except OSError:
        return False


def _digest(path: Path) -> str | None:
    """The SHA-256 of a regular file's bytes (a FIFO or a device is never opened for reading:
    None, as for a file that cannot be read)."""
    try:
        _, handle = open_regular(path)
        with handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except (OSError, RunFormatError):
        return None


def _open_journal(path: Path) -> int | None:
    """A descriptor of the journal ``path`` to lock, or None when it is gone or is not a
    regular file (opened without blocking: a FIFO named like a journal never stalls a
    start)."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if stat.S_ISREG(os.fstat(handle).st_mode):
            return handle
    except OSError:
        pass
    os.close(handle)
    return None


def _journal(path: Path, stem: str) -> dict[str, str] | None:
    """A journal's record when it is one kbench writes for ``stem``, else None."""
    try:
        if path.stat().st_size > MAX_JOURNAL_BYTES:
            return None
        record = json.loads(read_regular(path).decode("utf-8"))
    except (OSError, ValueError, RunFormatError):
        return None
    if not (isinstance(record, dict) and record.get("stem") == stem
            and isinstance(record.get("name"), str)
            and all(isinstance(record.get(k), str) and _HEX64.fullmatch(record[k])
                    for k in ("parquet_sha256", "sidecar_sha256"))):
        return None
    return record


def _settle(directory: Path, journal: Path, record: dict[str, str], found: Recovery) -> None:
    """Finish or roll back the interrupted save ``journal`` records (its lock is held)."""
    stem, name = record["stem"], record["name"]
    files = {kind: (directory / f"{stem}.{kind}", directory / f"{stem}.{kind}.tmp")
             for kind in ("parquet", "json")}
    wanted = {"parquet": record["parquet_sha256"], "json": record["sidecar_sha256"]}
    ours = {kind: [p for p in pair if p.exists() and _digest(p) == wanted[kind]]
            for kind, pair in files.items()}
    parquet = f"{stem}.parquet"
    if ours["parquet"] and ours["json"]:
        moved = False
        for kind in ("json", "parquet"):  # the sidecar first, as a save does
            final, tmp = files[kind]
            if final not in ours[kind]:
                os.replace(tmp, final)
                moved = True
            elif tmp.exists() and tmp in ours[kind]:
                tmp.unlink()
        if moved:
            found.finished[parquet] = (
                f"the save of run {name!r} was interrupted (kbench stopped while writing "
                f"it); its files were complete, so it was finished on this start")
    else:
        removed = []
        for kind, (final, tmp) in files.items():
            # the temporary files bear this save's own name (an unguessable token)
            for path in ([final] if final in ours[kind] else []) + [tmp]:
                if path.exists():
                    path.unlink()
                    removed.append(path.name)
        found.rolled_back[parquet] = (
            f"run {name!r} was not saved: kbench stopped while saving it, before its files "
            f"were complete; its partial files were removed "
            f"({', '.join(removed) or 'none were written'}); upload it again to keep it")
        for final, _ in files.values():
            if final.exists():
                found.left[final.name] = (
                    "left in place: an interrupted save of this name did not write these "
                    "bytes")
    journal.unlink()


def recover(directory: Path) -> Recovery:
    """Finish or roll back the saves of ``directory`` whose process died (see above), and
    list what an interrupted save may have left that kbench cannot vouch for (temporary
    files without a journal, metadata without its Parquet file): never removed."""
    found = Recovery()
    try:
        names = set(os.listdir(directory))
    except OSError:
        return found
    handled: set[str] = set()
    for entry in sorted(n for n in names if n.endswith((REMOVAL, REMOVAL + ".tmp"))):
        _finish_removal(directory, entry, found)
    for entry in sorted(n for n in names if n.endswith((JOURNAL, JOURNAL + ".tmp"))):
        journal = directory / entry
        stem = entry[:-len(JOURNAL)] if entry.endswith(JOURNAL) else entry[:-len(JOURNAL) - 4]
        if not _STEM.fullmatch(stem) or stem in handled:
            continue  # not a name kbench gives
        handle = _open_journal(journal)
        if handle is None:
            continue  # finished meanwhile, or not a file kbench writes
        try:
            if not _try_lock(handle, wait=False) or _beginning(handle):
                handled.add(stem)  # a save in progress in another process
                continue
            if _ended(handle):
                continue  # the save ended since the folder was listed
            if fcntl is None and time.time() - os.fstat(handle).st_mtime < ORPHAN_SECONDS:
                handled.add(stem)  # pragma: no cover
                continue
            record = _journal(journal, stem)
            handled.add(stem)
            if record is not None and entry.endswith(".tmp"):
                # the process died before the journal was in place: nothing else was written
                journal.unlink()
                found.rolled_back[f"{stem}.parquet"] = (
                    f"run {record['name']!r} was not saved: kbench stopped as it began saving "
                    f"it; nothing of it was kept; upload it again to keep it")
                continue
            if record is None:
                found.left[entry] = ("left in place: not a journal kbench can read (an "
                                     "interrupted save's files, if any, are listed too)")
                handled.discard(stem)
                continue
            try:
                _settle(directory, journal, record, found)
            except OSError as exc:
                found.left[entry] = (f"an interrupted save could not be finished or rolled "
                                     f"back ({exc.strerror or exc})")
        finally:
            os.close(handle)

    def listed() -> list[tuple[str, str, str]]:
        """(entry, stem, suffix) of every file named as a save's that no journal covers."""
        try:
            entries = sorted(os.listdir(directory))
        except OSError:
            return []
        present = set(entries)
        out = []
        for entry in entries:
            suffix = next((s for s in (".parquet.tmp", ".json.tmp", JOURNAL + ".tmp",
                                       JOURNAL, REMOVAL + ".tmp", REMOVAL, ".json")
                           if entry.endswith(s)), None)
            stem = entry[:-len(suffix)] if suffix else ""
            if suffix == ".json" and f"{stem}.parquet" in present:
                continue  # a saved run (the start's common case: no file opened)
            if suffix and stem not in handled and _STEM.fullmatch(stem) \
                    and not _saving_now(directory, stem):
                out.append((entry, stem, suffix))
        return out

    # A save or removal may end between the listing and here: what it left is looked at
    # again, after its journal (if any) was found unlocked.
    for entry, stem, suffix in listed():
        if suffix == ".json" and not (directory / f"{stem}.parquet").exists() \
                and (directory / entry).exists():
            message = _orphan_sidecar(directory, stem, found)
            if message:
                found.left[entry] = message
    for entry, _, suffix in listed():
        if suffix != ".json" and (directory / entry).exists():
            found.left.setdefault(entry, "left in place: the temporary file of a save that "
                                         "did not finish (an earlier kbench, or one saving "
                                         "now); remove it when no kbench is saving")
    return found


def _saving_now(directory: Path, stem: str) -> bool:
    """Whether a save of ``stem`` runs now (it began after the journals were read): its
    journal, under either name, is held by a live process."""
    for name in (f"{stem}{JOURNAL}", f"{stem}{JOURNAL}.tmp", f"{stem}{REMOVAL}",
                 f"{stem}{REMOVAL}.tmp"):
        handle = _open_journal(directory / name)
        if handle is None:
            continue
        try:
            if not _try_lock(handle, wait=False) or _beginning(handle):
                return True
        finally:
            os.close(handle)
    return False


def _finish_removal(directory: Path, entry: str, found: Recovery) -> None:
    """Finish the removal ``entry`` journals when its process died: each of the run's two
    files goes if its bytes are those recorded; a removal running now is left alone."""
    stem = entry.removesuffix(".tmp").removesuffix(REMOVAL)
    if not _STEM.fullmatch(stem):
        return
    journal = directory / entry
    handle = _open_journal(journal)
    if handle is None:
        return
    try:
        if not _try_lock(handle, wait=False) or _beginning(handle) or _ended(handle):
            return  # a removal in progress, or one that ended since the folder was listed
        record = _journal(journal, stem)
        if record is None:
            found.left[entry] = "left in place: not a journal kbench can read"
            return
        for kind, digest in (("parquet", record["parquet_sha256"]),
                             ("json", record["sidecar_sha256"])):
            path = directory / f"{stem}.{kind}"
            if path.exists() and _digest(path) == digest:
                path.unlink()
        journal.unlink()
    except OSError as exc:
        found.left[entry] = f"an interrupted removal could not be finished ({exc.strerror})"
    finally:
        os.close(handle)


def _orphan_sidecar(directory: Path, stem: str, found: Recovery) -> str:
    """An earlier kbench's interrupted save (it kept no journal): the sidecar was renamed,
    the Parquet file was not. Finished when ``<stem>.parquet.tmp`` holds the bytes the
    sidecar records; otherwise the sidecar is listed, never removed."""
    sidecar = directory / f"{stem}.json"
    tmp = directory / f"{stem}.parquet.tmp"
    try:
        recorded = _read_sidecar(sidecar)
    except RunFormatError:
        recorded = None
    if recorded and recorded["parquet_sha256"] and _digest(tmp) == recorded["parquet_sha256"]:
        try:
            os.replace(tmp, directory / f"{stem}.parquet")
        except OSError as exc:
            return f"an interrupted save could not be finished ({exc.strerror or exc})"
        found.finished[f"{stem}.parquet"] = (
            f"the save of run {recorded['name']!r} was interrupted (kbench stopped between "
            f"its two renames); its Parquet file was complete, so it was finished on this "
            f"start")
        return ""
    return ("left in place: workspace metadata without its Parquet file (a save or a removal "
            "that did not finish); remove it if no kbench is saving")
