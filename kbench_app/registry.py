"""The runs a dashboard session has loaded, and what failed to load.

Plain Python so it is tested without Streamlit. Adding a file never touches the runs already
loaded: a bad file only adds an entry to ``errors``.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from kbench_core.io import Run, RunFormatError, load_files, load_run
from kbench_core.workspace import LazyRun, Workspace, WorkspaceError

Loader = Callable[[str, bytes], Run]
GroupLoader = Callable[[list[tuple[str, bytes]]], Run]


def _size_kb(value: object) -> float | None:
    """A run's size in KB for the list, or None when ``meta["bytes"]`` is not a plain size: the
    workspace checks it, but one bad value must never stop the Runs page for every user."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    # The range first: math.isfinite(10**400) itself overflows.
    if not 0 <= value < 2**53 or not math.isfinite(value):
        return None
    return round(float(value) / 1024, 1)


def _changed(run: Run, **changes: object) -> Run:
    """``run`` with other fields; a saved run not yet used stays unread."""
    if isinstance(run, LazyRun):
        return run.changed(**changes)
    return replace(run, **changes)  # type: ignore[arg-type]


_RECENT_NS = 1_000_000_000  # a listing this soon after the folder's time may miss a change
_RELIST_NS = 200_000_000  # ... so the folder is listed again, at most this often


def default_loader(filename: str, data: bytes) -> Run:
    return load_run((filename, data))


def default_group_loader(files: list[tuple[str, bytes]]) -> Run:
    return load_files(files)


@dataclass
class LoadReport:
    """What one batch of files did: runs added, duplicates skipped, errors by file."""

    added: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    # the runs the duplicates are already loaded as (what the user meant to look at)
    existing: list[str] = field(default_factory=list)


@dataclass
class RunRegistry:
    """Ordered runs by unique name, plus the last error of each file that failed."""

    runs: dict[str, Run] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    workspace: Workspace | None = None
    # the workspace folder's modification time when :meth:`drop_stale` last listed it, and
    # when that was (nanoseconds)
    _listed: tuple[int, int] | None = field(default=None, repr=False, compare=False)

    def unique_name(self, name: str) -> str:
        if name not in self.runs:
            return name
        k = 2
        while f"{name} ({k})" in self.runs:
            k += 1
        return f"{name} ({k})"

    def find_hash(self, sha256: str) -> str | None:
        for name, run in self.runs.items():
            if run.content_hash and run.content_hash == sha256:
                return name
        return None

    def add(self, run: Run, *, persist: bool = True) -> str:
        """Add a run under a unique name; returns that name. A run the workspace could not
        keep stays in the session, with a warning that says so."""
        name = self.unique_name(run.name)
        if name != run.name:
            run = _changed(run, name=name)
        if persist and self.workspace is not None:
            try:
                saved = self.workspace.save(run)
            except WorkspaceError as err:
                run = _changed(run, warnings=(*run.warnings, str(err)))
            else:  # removal deletes exactly this save's files, whatever the run is called
                run = _changed(run, meta={**run.meta, "workspace_file": saved.name})
        self.runs[name] = run
        return name

    def add_files(self, files: Iterable[tuple[str, bytes]], loader: Loader = default_loader,
                  *, persist: bool = True) -> LoadReport:
        """Load each ``(filename, bytes)``; good ones join, bad ones are reported by name."""
        import hashlib

        report = LoadReport()
        for filename, data in files:
            sha = hashlib.sha256(data).hexdigest()
            existing = self.find_hash(sha)
            if existing is not None:
                report.duplicates.append(f"{filename} is already loaded as '{existing}'")
                report.existing.append(existing)
                continue
            try:
                run = loader(filename, data)
            except RunFormatError as err:
                report.errors[filename] = str(err)
                self.errors[filename] = str(err)
                continue
            self.errors.pop(filename, None)
            report.added.append(self.add(run, persist=persist))
        return report

    def add_group(self, files: list[tuple[str, bytes]],
                  loader: GroupLoader = default_group_loader, *,
                  persist: bool = True) -> LoadReport:
        """Load files of one native format as one run (:func:`kbench_core.io.load_files`),
        as the folder holding them would be; a failure is reported under the run's name."""
        from kbench_core.io import batch_hash, batch_name

        report = LoadReport()
        label = batch_name(files)
        existing = self.find_hash(batch_hash(files))
        if existing is not None:
            report.duplicates.append(f"these {len(files)} files ({label}) are already loaded "
                                     f"as '{existing}'")
            report.existing.append(existing)
            return report
        try:
            run = loader(files)
        except RunFormatError as err:
            report.errors[label] = self.errors[label] = str(err)
            return report
        self.errors.pop(label, None)
        report.added.append(self.add(run, persist=persist))
        return report

    def add_paths(self, paths: Iterable[str | Path], loader: Loader = default_loader,
                  *, persist: bool = True) -> LoadReport:
        """Load files by path; a folder (a benchmark's output tree, e.g. BlockBench judge
        outputs) is read by :func:`kbench_core.io.load_run` directly."""
        files = []
        report = LoadReport()
        for path in map(Path, paths):
            if path.is_dir():
                try:
                    report.added.append(self.add(load_run(path), persist=persist))
                    self.errors.pop(path.name, None)
                except RunFormatError as err:
                    report.errors[path.name] = self.errors[path.name] = str(err)
                continue
            try:
                files.append((path.name, path.read_bytes()))
            except OSError as exc:
                report.errors[path.name] = f"{path.name}: cannot read {path} ({exc.strerror})"
                self.errors[path.name] = report.errors[path.name]
        more = self.add_files(files, loader, persist=persist)
        more.errors.update(report.errors)
        more.added[:0] = report.added
        return more

    def remove(self, name: str) -> None:
        run = self.runs.pop(name)
        if self.workspace is not None:
            self.workspace.remove(run)

    def drop_stale(self) -> list[tuple[str, str]]:
        """Drop the saved runs whose file is no longer in the workspace (another session on
        the same workspace removed them, or someone deleted the files); returns their
        ``(name, kind)``. Several sessions share one workspace and each holds its own
        registry: without this, a session kept listing, and serving the numbers of, a run
        another user had removed (issue 37.8).

        Called on every script run, so it must cost nothing when nothing changed: one
        ``stat`` of the folder, whose modification time changes whenever a file in it is
        created, renamed or deleted; the folder is listed only then. A listing made within
        :data:`_RECENT_NS` of that time is not trusted for long (a later change in the same
        clock tick would not move it): the folder is listed again, at most every
        :data:`_RELIST_NS`, until a listing is made later than that. A folder that cannot be
        listed drops nothing (a passing error must not empty every session)."""
        if self.workspace is None:
            return []
        directory = Path(self.workspace.directory)
        try:
            changed = directory.stat().st_mtime_ns
        except OSError:
            return []
        if self._listed is not None and self._listed[0] == changed:
            listed_when = self._listed[1]
            if listed_when - changed > _RECENT_NS or time.time_ns() - listed_when < _RELIST_NS:
                return []
        listed_when = time.time_ns()
        try:
            present = {entry.name for entry in os.scandir(directory)}
        except OSError:
            return []
        self._listed = (changed, listed_when)
        gone = [name for name, run in self.runs.items()
                if isinstance(saved := run.meta.get("workspace_file"), str)
                and saved not in present]
        return [(name, self.runs.pop(name).kind) for name in gone]

    def dismiss_error(self, filename: str) -> None:
        self.errors.pop(filename, None)

    def load_workspace(self) -> LoadReport:
        report = LoadReport()
        if self.workspace is None:
            return report
        # only the sidecars: each run's Parquet file is read and validated on first use
        runs, errors = self.workspace.open_all()
        for run in runs:
            report.added.append(self.add(run, persist=False))
        for err in errors:
            report.errors[err.file] = str(err)
            self.errors[err.file] = str(err)
        return report

    def usable(self, names: Iterable[str]) -> dict[str, Run]:
        """The runs of ``names`` whose rows can be used, by name: a saved run is read and
        validated here on first use; one whose file is damaged or changed is left out, its
        message kept in ``errors`` under its file's name (the Runs page shows it)."""
        usable: dict[str, Run] = {}
        for name in names:
            run = self.runs[name]
            if isinstance(run, LazyRun):
                try:
                    run.frame  # noqa: B018 - reads and validates the saved file once
                except RunFormatError as err:
                    self.errors[err.file] = str(err)
                    continue
            usable[name] = run
        return usable

    def problem(self, name: str) -> str:
        """Why the run ``name`` cannot be used (its saved file failed at first use), or ''."""
        run = self.runs[name]
        return str(run.error) if isinstance(run, LazyRun) and run.error else ""

    def summary(self) -> pd.DataFrame:
        """One row per run: what the Runs page lists."""
        rows = [{
            "name": name,
            "kind": run.kind,
            "models": ", ".join(run.models),
            "n_models": len(run.models),
            "rows": len(run),
            "warnings": len(run.warnings),
            "source": str(run.meta.get("source", ""))[:1000],
            "format": str(run.meta.get("format", ""))[:1000],
            "size_kb": _size_kb(run.meta.get("bytes")),
            "sha256": run.content_hash[:12],
            # a saved run whose file failed at its first use
            "problem": self.problem(name),
        } for name, run in self.runs.items()]
        columns = ["name", "kind", "models", "n_models", "rows", "warnings", "source",
                   "format", "size_kb", "sha256", "problem"]
        return pd.DataFrame(rows, columns=columns)
