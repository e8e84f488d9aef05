"""Opt-in on-disk store of loaded runs (``kbench app --workspace DIR``).

Each run is kept as ``<slug>-<hash>.parquet`` beside a ``.json`` sidecar with its name, kind,
meta, warnings and the SHA-256 of the Parquet file itself. Reloading goes through
:func:`kbench_core.io.load_run` again and the sidecar is validated like an upload (strict JSON,
an object with a text ``name``, a known ``kind``, an object ``meta``, a list of text
``warnings``, at most 4 MB), so a tampered or damaged workspace file is reported like any other
bad file and skipped, never fatal to the app. A Parquet file whose bytes no longer match the
SHA-256 its sidecar recorded (replaced behind kbench's back), or whose sidecar records none, is
refused, so exports never carry the old file's provenance for new content. The sidecar's
``meta`` values are checked too (sizes, texts, a report's summary), so no page that shows them
can fail on a tampered one. Without a workspace nothing is written to disk.

The app starts with :meth:`Workspace.open_all`, which reads only the sidecars (name, kind,
meta, warnings, rows, models): each run is a :class:`LazyRun` whose Parquet file is read,
checked against its SHA-256 and validated on first use, so a start with 1,500 saved runs does
not validate 1,500 files; a file that fails then raises its own :class:`RunFormatError`.

With an engine (``Workspace(DIR, engine="duckdb")``, the app's default for a workspace; SPEC
6), that first use queries the Parquet file in place instead of reading it with pandas: the
engine validates every cell with the loader's rules and reduces the run to its family's
sufficient table (:mod:`kbench_core.engines`); that small table is kept per (file SHA-256,
kind, engine) in a bounded cache, and the run's frame is its finish
(:func:`kbench_core.engines.reduce.finish`): for a bias run the small table itself, its
counts read as weights (``weighted=True``), for the other families the rows repeated. A
judged or replication run reduces to its rows (item grain): the engine fetches them and the
loader validates and types them once (:func:`kbench_core.engines.reduce.typed_rows`), the
cache keeping that typed frame. Widget
changes recompute from that frame, never from the engine. The columns no metric reads (a bias
run's prompts and responses) stay in the file; the Cognitive biases page fetches one model ×
bias's text from it on demand (:func:`response_rows`, capped).

Several sessions may share one workspace (a demo server). Every save writes its own pair of
files (``<slug>-<hash>-<token>``), recorded in the saved run's ``meta["workspace_file"]``, and
removal deletes exactly that pair: two strangers who upload the same bytes each own a copy, and
neither removes the other's. A save that fails (full disk, file-size limit) leaves no partial
file behind and raises :class:`WorkspaceError`, so the caller can say the run is not kept.
A save keeps a journal while it writes, so one whose process was killed midway is finished
(its files were whole) or rolled back on the next start, which reports what it did, and lists,
never removes, what it cannot vouch for (:func:`kbench_core.workspace_files.recover`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import os
import re
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from kbench_core.io import Run, RunFormatError, load_run
from kbench_core.kahne import repeated
from kbench_core.readers.sources import read_regular
from kbench_core.readonly import freeze
from kbench_core.workspace_files import (  # noqa: F401  (kept importable from here)
    _META_TEXT,
    MAX_COUNT,
    MAX_META_TEXT,
    MAX_SIDECAR_BYTES,
    REMOVAL,
    Recovery,
    SaveJournal,
    _bad,
    _checked_meta,
    _read_sidecar,
    _trusted_sidecar,
    recover,
)

__all__ = ["LazyRun", "Workspace", "WorkspaceError", "check_directory", "clear_caches",
           "response_rows"]


class WorkspaceError(Exception):
    """The workspace folder cannot be used, or a run could not be written to it; the message
    says which and why, in one line."""


# Runs validated once per process, by the SHA-256 of their Parquet bytes and their kind: every
# session of a shared server starts by reading the workspace, and validating 1,500 saved runs
# cell by cell costs tens of seconds each time. The bytes are hashed on every start, so a file
# changed behind kbench's back is validated (and checked against its sidecar) again.
_VALIDATED: OrderedDict[tuple[str, str], tuple[Run, int]] = OrderedDict()  # run, frame bytes
_VALIDATED_BYTES = 0
_VALIDATED_LOCK = threading.Lock()
MAX_VALIDATED_BYTES = 512 * 1024**2  # frames kept at most (the oldest go first)


def _validated(path: Path, name: str, kind: str) -> Run:
    """:func:`~kbench_core.io.load_run` of a saved run, or the run validated earlier from the
    same bytes."""
    try:
        data = read_regular(path)  # a FIFO or a device is refused by name, never read
    except OSError as exc:
        raise _bad(path.name, f"cannot read the saved run ({exc.strerror or exc})") from None
    key = (hashlib.sha256(data).hexdigest(), kind)
    with _VALIDATED_LOCK:
        if key in _VALIDATED:
            _VALIDATED.move_to_end(key)
            return _VALIDATED[key][0]
    run = load_run((path.name, data), name=name, kind=kind)  # type: ignore[arg-type]
    freeze(run.frame)  # every session of a server reading these bytes shares this frame
    size = int(run.frame.memory_usage(deep=False).sum())
    global _VALIDATED_BYTES
    with _VALIDATED_LOCK:
        if key not in _VALIDATED:
            _VALIDATED[key] = (run, size)
            _VALIDATED_BYTES += size
        while _VALIDATED_BYTES > MAX_VALIDATED_BYTES and len(_VALIDATED) > 1:
            _, (_, dropped) = _VALIDATED.popitem(last=False)
            _VALIDATED_BYTES -= dropped
    return run


def _forget_validated(digest: str | None) -> None:
    """Drop the validated runs and reduced tables of these Parquet bytes (the run was
    removed)."""
    global _VALIDATED_BYTES, _REDUCED_BYTES
    with _VALIDATED_LOCK:
        for key in [k for k in _VALIDATED if k[0] == digest]:
            _VALIDATED_BYTES -= _VALIDATED.pop(key)[1]
        for key in [k for k in _REDUCED if k[0] == digest]:
            _REDUCED_BYTES -= _REDUCED.pop(key).nbytes


# Sufficient tables of saved runs queried by an engine, by (Parquet SHA-256, kind, engine):
# small (a bias run's distinct tuples), so many are kept; a second session, or the same run
# opened again, finishes from here without querying the engine.
_REDUCED: OrderedDict[tuple[str, str, str], pa.Table] = OrderedDict()
_REDUCED_BYTES = 0
MAX_REDUCED_BYTES = 256 * 1024**2


def clear_caches() -> None:
    """Forget every validated run and reduced table (tests, benchmarks)."""
    global _VALIDATED_BYTES, _REDUCED_BYTES
    with _VALIDATED_LOCK:
        _VALIDATED.clear()
        _REDUCED.clear()
        _VALIDATED_BYTES = _REDUCED_BYTES = 0


def _not_queried(path: Path, engine: str, exc: Exception) -> RunFormatError:
    """The saved run's error when its engine raised something else than a RunFormatError
    (a damaged file the engine cannot read, a missing backend). A Spark session that could
    not start says why in full: it is the engine's fault, not the file's, and the process
    does not try that session again (:mod:`kbench_core.engines.spark`)."""
    from kbench_core.engines.spark import SparkUnavailable

    if isinstance(exc, SparkUnavailable):
        return _bad(path.name, f"not read: {exc} (kbench does not try Spark again until the "
                               f"app restarts)")
    return _bad(path.name, f"could not be queried by {engine} ({type(exc).__name__}: "
                           f"{str(exc)[:200]})")


def _saved_source(path: Path, sidecar: dict[str, Any]) -> Any:
    """The saved run's Parquet file as an engine source, checked to be the file the sidecar
    records (its SHA-256); RunFormatError naming it when it cannot be read or was changed."""
    from kbench_core.engines.source import file_source

    try:
        src = file_source(path, name=sidecar["name"], kind=sidecar["kind"])
    except OSError as exc:
        raise _bad(path.name, f"cannot read the saved run ({exc.strerror or exc})") from None
    if sidecar["parquet_sha256"] != src.meta["sha256"]:
        raise _bad(path.name, "the Parquet file is not the one kbench saved "
                              "(its SHA-256 differs from the one recorded "
                              "beside it), so its provenance cannot be trusted; "
                              "remove it and upload the run again")
    return src


def _reduced(path: Path, src: Any, engine: str, spark_master: str | None) -> pa.Table:
    """The saved run's sufficient table from the cache, else from the workspace's kept tables
    on disk, else from the engine (kept in both when it succeeds); whatever else the engine
    raises becomes a RunFormatError naming the file."""
    from kbench_core import engines
    from kbench_core.workspace_tables import cached_table, keep_table

    key = (str(src.meta["sha256"]), src.kind, engine)
    with _VALIDATED_LOCK:
        if key in _REDUCED:
            _REDUCED.move_to_end(key)
            return _REDUCED[key]
    # kept on disk by an earlier reduction of the same bytes (this server's before a
    # restart, another's, or `kbench workspace add`): kbench_core.workspace_add
    table = cached_table(path.parent, key[0], src.kind)
    if table is None:
        try:
            table = engines.reduce_source(src, engine=engine,  # type: ignore[arg-type]
                                          spark_master=spark_master)
        except RunFormatError:
            raise
        except Exception as exc:  # a damaged file the engine cannot read, a missing backend
            raise _not_queried(path, engine, exc) from None
        if isinstance(table, pa.Table):
            keep_table(path.parent, key[0], src.kind, table)
    global _REDUCED_BYTES
    with _VALIDATED_LOCK:
        if key not in _REDUCED:
            _REDUCED[key] = table
            _REDUCED_BYTES += table.nbytes
        while _REDUCED_BYTES > MAX_REDUCED_BYTES and len(_REDUCED) > 1:
            _REDUCED_BYTES -= _REDUCED.popitem(last=False)[1].nbytes
    return table


def _slug(name: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")
    return slug[:60] or "run"


def check_directory(directory: str | os.PathLike[str]) -> Path:
    """``directory`` as a usable workspace folder, created if missing; :class:`WorkspaceError`
    with a one-line reason when it is a file, lies under a file, is a dangling link, or cannot
    be written."""
    path = Path(directory).expanduser()
    if path.is_symlink() and not path.exists():
        raise WorkspaceError(f"the workspace {str(path)!r} is a link to "
                             f"{os.readlink(path)!r}, which does not exist")
    if path.exists() and not path.is_dir():
        raise WorkspaceError(f"the workspace {str(path)!r} is a file, not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise WorkspaceError(f"the workspace {str(path)!r} cannot be created: a part of its "
                             f"path is a file, not a folder") from None
    except OSError as exc:
        raise WorkspaceError(f"the workspace {str(path)!r} cannot be created: "
                             f"{exc.strerror or exc}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise WorkspaceError(f"the workspace {str(path)!r} is not writable by this user")
    return path


def _unlink_quietly(*paths: Path) -> None:
    for path in paths:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)


@dataclass(frozen=True)
class Workspace:
    """A folder of saved runs (:func:`check_directory` says why one cannot be used).

    ``engine``: how :meth:`open_all` reads a saved run on first use: ``memory`` (the loader)
    or ``duckdb``/``spark`` (queried in place, see the module docstring); ``spark_master``
    for ``spark``. ValueError naming an unknown engine."""

    directory: Path
    engine: str = "memory"
    spark_master: str | None = None

    def __post_init__(self) -> None:
        from kbench_core.engines import check_engine

        check_engine(self.engine)
        object.__setattr__(self, "directory", check_directory(self.directory))

    def _stem(self, run: Run) -> str:
        return f"{_slug(run.name)}-{run.content_hash[:12] or 'nohash'}"

    def save(self, run: Run) -> Path:
        """Write the run's frame as Parquet and its metadata as JSON, under a name of this save
        alone; returns the Parquet path (its name is what :meth:`remove` needs in
        ``meta["workspace_file"]``). On failure nothing is left behind and
        :class:`WorkspaceError` says why."""
        stem = f"{self._stem(run)}-{secrets.token_hex(4)}"
        path = Path(self.directory) / f"{stem}.parquet"
        # Weighted tuples (a bias run an engine reduced) saved as the rows they stand for:
        # the loader leaves out a file's __kbench_rows (a file cannot pass its own weights).
        frame = repeated(run.frame)
        try:
            table = pa.Table.from_pandas(frame, preserve_index=False)
        except (pa.ArrowException, TypeError, ValueError):
            # Extra columns of mixed Python types: keep their text.
            frame = frame.copy()
            for col in frame.columns:
                if frame[col].dtype == object:
                    frame[col] = frame[col].map(lambda v: None if v is None else str(v))
            table = pa.Table.from_pandas(frame, preserve_index=False)
        buffer = io.BytesIO()
        pq.write_table(table, buffer)
        data = buffer.getvalue()
        side = path.with_suffix(".json")
        meta = {k: v for k, v in run.meta.items() if k != "workspace_file"}
        for key in _META_TEXT:  # the limit the reload checks (a 5,000-character file name)
            if isinstance(meta.get(key), str) and len(meta[key]) > MAX_META_TEXT:
                meta[key] = meta[key][:MAX_META_TEXT - 1] + "\u2026"
        sidecar = {"name": run.name, "kind": run.kind, "meta": meta,
                   "warnings": list(run.warnings),
                   "parquet_sha256": hashlib.sha256(data).hexdigest(),
                   # what the Runs page lists, so a start reads no Parquet file (open_all)
                   "models": run.models, "rows": len(run)}
        text = json.dumps(sidecar, indent=1, default=str)
        tmp, tmp_side = path.with_suffix(".parquet.tmp"), side.with_suffix(".json.tmp")
        journal = None
        try:
            # the journal first, so a start after a crash at any later step finishes or
            # rolls back this save (kbench_core.workspace_files.recover)
            journal = SaveJournal.begin(Path(self.directory), stem, name=run.name,
                                        parquet_sha256=sidecar["parquet_sha256"],
                                        sidecar=text.encode("utf-8"))
            tmp.write_bytes(data)
            tmp_side.write_text(text, encoding="utf-8")
            # the sidecar first: load_all lists runs by their Parquet file, so another session
            # starting meanwhile never sees a run without its metadata
            tmp_side.replace(side)
            tmp.replace(path)
        except OSError as exc:
            _unlink_quietly(tmp, tmp_side, path, side)
            raise WorkspaceError(f"run {run.name!r} could not be saved in the workspace "
                                 f"({exc.strerror or exc}); it stays in this session only and "
                                 f"will not come back on the next start") from None
        finally:
            if journal is not None:
                journal.end()
        return path

    def remove(self, run: Run) -> None:
        """Delete exactly the files of this run's save (``meta["workspace_file"]``); a run
        that was never saved here deletes nothing."""
        saved = run.meta.get("workspace_file")
        if not isinstance(saved, str) or Path(saved).name != saved \
                or not saved.endswith(".parquet"):
            return
        path = Path(self.directory) / saved
        try:  # the validated copy goes too (other sessions keep their own runs)
            digest = hashlib.sha256(read_regular(path)).hexdigest()
        except (OSError, RunFormatError):
            digest = None
        _forget_validated(digest)
        from kbench_core.workspace_tables import forget_tables

        forget_tables(Path(self.directory), digest)
        journal = None
        with contextlib.suppress(OSError, RunFormatError):  # without one the files still go
            journal = SaveJournal.begin(
                Path(self.directory), path.stem, name=run.name,
                parquet_sha256=digest or "0" * 64,
                sidecar=read_regular(path.with_suffix(".json")), suffix=REMOVAL)
        try:
            _unlink_quietly(path, path.with_suffix(".json"))
        finally:
            if journal is not None:
                journal.end()

    def _paths(self) -> list[Path]:
        """The saved runs' Parquet files, oldest first."""

        def modified(path: Path) -> float:
            try:
                return path.stat().st_mtime
            except OSError:
                return 0.0

        return sorted(Path(self.directory).glob("*.parquet"), key=modified)

    def recover(self) -> Recovery:
        """Finish or roll back the saves a dead process left half done, and list the files
        an interrupted save may have left that kbench cannot vouch for (never removed;
        :func:`kbench_core.workspace_files.recover`). :meth:`load_all` and :meth:`open_all`
        call it first and report what it did."""
        return recover(Path(self.directory))

    def load_all(self) -> tuple[list[Run], list[RunFormatError]]:
        """Every saved run, oldest first, and the errors of files that no longer load (a bad
        sidecar or Parquet file is reported and skipped; the others still load)."""
        runs: list[Run] = []
        recovered = self.recover()
        errors = _recovery_errors(recovered)
        for path in self._paths():
            try:
                runs.append(_noted(_saved_run(path, _trusted_sidecar(path)), recovered))
            except RunFormatError as err:
                if path.exists():  # else another server removed the run meanwhile
                    errors.append(err)
        return runs, errors

    def open_all(self) -> tuple[list[LazyRun], list[RunFormatError]]:
        """Every saved run as a :class:`LazyRun`, oldest first, reading only the sidecars
        (a start with 1,500 saved runs read and validated 1,500 Parquet files); the errors of
        bad sidecars. A run's Parquet file is read, checked against its SHA-256 and validated
        cell by cell on its first use, which raises the per-file error if it fails."""
        runs: list[LazyRun] = []
        recovered = self.recover()
        errors = _recovery_errors(recovered)
        for path in self._paths():
            try:
                runs.append(_noted(LazyRun(_Saved(path, _trusted_sidecar(path),
                                                  engine=self.engine,
                                                  spark_master=self.spark_master)), recovered))
            except RunFormatError as err:
                if path.exists():  # else another server removed the run meanwhile
                    errors.append(err)
        return runs, errors


def _recovery_errors(recovered: Recovery) -> list[RunFormatError]:
    """A start's report of saves rolled back and files left in place, one error per file."""
    return [_bad(name, message) for name, message in
            (*recovered.rolled_back.items(), *recovered.left.items())]


def _noted(run: Run, recovered: Recovery) -> Any:
    """``run`` with a warning saying its interrupted save was finished on this start."""
    note = recovered.finished.get(str(run.meta.get("workspace_file")))
    if note is None:
        return run
    warnings = (*run.warnings, note)
    return run.changed(warnings=warnings) if isinstance(run, LazyRun) \
        else dataclasses.replace(run, warnings=warnings)


def _saved_run(path: Path, sidecar: dict[str, Any]) -> Run:
    """The saved run of ``path``: its bytes checked against the sidecar's SHA-256, its frame
    validated (or found validated from the same bytes); RunFormatError naming the file."""
    loaded = _validated(path, sidecar["name"], sidecar["kind"])
    if sidecar["parquet_sha256"] != loaded.content_hash:
        raise _bad(path.name, "the Parquet file is not the one kbench saved "
                              "(its SHA-256 differs from the one recorded "
                              "beside it), so its provenance cannot be trusted; "
                              "remove it and upload the run again")
    meta = {**loaded.meta, **sidecar["meta"], "workspace_file": path.name}
    return Run(name=sidecar["name"], kind=loaded.kind, frame=loaded.frame,
               meta=meta, warnings=tuple(sidecar["warnings"]))


def _queried_run(path: Path, sidecar: dict[str, Any], engine: str,
                 spark_master: str | None) -> Run:
    """The saved run of ``path`` through ``engine``: its bytes checked against the sidecar's
    SHA-256, its cells validated and its rows reduced by the engine (or the reduced table
    found in the cache), its frame the finish of that table; RunFormatError naming the
    file."""
    from kbench_core.engines.reduce import WEIGHTED, finish

    src = _saved_source(path, sidecar)
    # A bias run stays its distinct tuples with their counts as weights: the pages read
    # the weights (kbench_core.kahne.row_weights), so a widget change recomputes from the
    # small table, never from a frame of every row; sidecar's ``rows`` stays the run's rows.
    queried = finish(_reduced(path, src, engine, spark_master), src,
                     weighted=src.kind in WEIGHTED)
    meta = {**queried.meta, **sidecar["meta"], "workspace_file": path.name, "engine": engine}
    return Run(name=sidecar["name"], kind=queried.kind, frame=queried.frame, meta=meta,
               warnings=tuple(sidecar["warnings"]))


def response_rows(run: Run, *, model: str, bias: str, search: str = "",
                  limit: int | None = None) -> Any:
    """A saved run's rows of one ``model`` × ``bias``, text included, fetched from its
    Parquet file through the workspace's engine (:func:`kbench_core.engines.rows.text_rows`:
    the first ``limit`` rows in file order, default
    :data:`~kbench_core.engines.rows.DRILL_LIMIT`, and how many match ``search``): the text
    a bias run queried by an engine leaves in the file. None when ``run`` is not a saved run
    read through an engine (its frame holds its text). The file must still be the one the
    sidecar records (its SHA-256), else :class:`RunFormatError` naming it, as on first use;
    an engine failure is one too."""
    from kbench_core.engines.rows import DRILL_LIMIT, text_rows

    saved = getattr(run, "_saved", None)
    if not isinstance(run, LazyRun) or saved is None or saved.engine == "memory":
        return None
    src = _saved_source(saved.path, saved.sidecar)
    try:
        return text_rows(src, model=model, bias=bias, search=search,
                         limit=DRILL_LIMIT if limit is None else limit,
                         engine=saved.engine, spark_master=saved.spark_master)
    except Exception as exc:  # a damaged file the engine cannot read, a missing backend
        raise _not_queried(saved.path, saved.engine, exc) from None


class _Saved:
    """One saved run's files, read and validated once, on first use (thread-safe: sessions
    of a shared server may share it); a failure is kept and raised again. ``engine``:
    ``memory`` reads the file with the loader, another engine queries it
    (:func:`_queried_run`)."""

    def __init__(self, path: Path, sidecar: dict[str, Any], *, engine: str = "memory",
                 spark_master: str | None = None) -> None:
        self.path = path
        self.sidecar = sidecar
        self.engine = engine
        self.spark_master = spark_master
        self.lock = threading.Lock()
        self.run: Run | None = None
        self.error: RunFormatError | None = None

    def resolve(self) -> Run:
        with self.lock:
            if self.run is None and self.error is None:
                try:
                    self.run = (_saved_run(self.path, self.sidecar) if self.engine == "memory"
                                else _queried_run(self.path, self.sidecar, self.engine,
                                                  self.spark_master))
                    freeze(self.run.frame)  # sessions of a server may share this run
                except RunFormatError as err:
                    self.error = err
            if self.error is not None:
                raise self.error
            assert self.run is not None
            return self.run


class LazyRun(Run):
    """A saved run known by its sidecar until its rows are needed.

    Name, kind, meta (hash, sizes, source), warnings, rows and models come from the sidecar;
    ``frame`` reads the Parquet file, checks it against the SHA-256 recorded beside it and
    validates it cell by cell on first access (:func:`Workspace.open_all`), raising the
    file's :class:`RunFormatError` if it fails. Change one with :meth:`changed`, not
    ``dataclasses.replace`` (which would read the frame).
    """

    def __init__(self, saved: _Saved, *, name: str | None = None,
                 meta: Any = None, warnings: tuple[str, ...] | None = None) -> None:
        object.__setattr__(self, "_saved", saved)
        side = saved.sidecar
        super().__init__(
            name=side["name"] if name is None else name, kind=side["kind"],
            frame=None,  # type: ignore[arg-type]  # the property below reads the file
            meta={**side["meta"], "workspace_file": saved.path.name} if meta is None else meta,
            warnings=tuple(side["warnings"]) if warnings is None else warnings)

    @property  # type: ignore[override]
    def frame(self) -> pd.DataFrame:
        return self._saved.resolve().frame

    @frame.setter
    def frame(self, value: Any) -> None:
        """Set by Run's initialiser (to None): the frame is the saved file's."""

    def changed(self, **changes: Any) -> LazyRun:
        """This run with another ``name``, ``meta`` or ``warnings``, still lazy."""
        kept = {"name": self.name, "meta": self.meta, "warnings": self.warnings}
        return LazyRun(self._saved, **{**kept, **changes})

    def resolve(self) -> Run:
        """The loaded run (frame validated), under this run's name, meta and warnings."""
        run = self._saved.resolve()
        return Run(name=self.name, kind=self.kind, frame=run.frame,
                   meta={**run.meta, **self.meta}, warnings=self.warnings)

    @property
    def loaded(self) -> bool:
        return self._saved.run is not None

    @property
    def error(self) -> RunFormatError | None:
        """The error of a first use that failed, else None."""
        return self._saved.error

    @property
    def models(self) -> list[str]:
        if self._saved.run is None and self._saved.sidecar["models"] is not None:
            return sorted(self._saved.sidecar["models"])
        if self._saved.run is None:
            return []  # an older sidecar: known once the run is used
        return super().models

    def __len__(self) -> int:
        if self._saved.run is None:
            rows = self._saved.sidecar["rows"]
            return int(rows if rows is not None else self.meta.get("rows") or 0)
        return super().__len__()

    __eq__ = object.__eq__  # type: ignore[assignment]
    __hash__ = object.__hash__  # type: ignore[assignment]
