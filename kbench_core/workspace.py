"""Opt-in on-disk store of loaded runs (``kbench app --workspace DIR``).

Each run is kept as ``<slug>-<hash>.parquet`` beside a ``.json`` sidecar with its name, kind,
meta and warnings. Reloading goes through :func:`kbench_core.io.load_run` again, so a tampered
or damaged workspace file is reported like any other bad file instead of being trusted.
Without a workspace nothing is written to disk.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from kbench_core.io import Problem, Run, RunFormatError, load_run

__all__ = ["Workspace"]


def _slug(name: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")
    return slug[:60] or "run"


@dataclass(frozen=True)
class Workspace:
    """A folder of saved runs."""

    directory: Path

    def __post_init__(self) -> None:
        Path(self.directory).mkdir(parents=True, exist_ok=True)

    def _stem(self, run: Run) -> str:
        return f"{_slug(run.name)}-{run.content_hash[:12] or 'nohash'}"

    def save(self, run: Run) -> Path:
        """Write the run's frame as Parquet and its metadata as JSON; returns the Parquet path."""
        stem = self._stem(run)
        path = Path(self.directory) / f"{stem}.parquet"
        frame = run.frame
        try:
            table = pa.Table.from_pandas(frame, preserve_index=False)
        except (pa.ArrowException, TypeError, ValueError):
            # Extra columns of mixed Python types: keep their text.
            frame = frame.copy()
            for col in frame.columns:
                if frame[col].dtype == object:
                    frame[col] = frame[col].map(lambda v: None if v is None else str(v))
            table = pa.Table.from_pandas(frame, preserve_index=False)
        tmp = path.with_suffix(".parquet.tmp")
        pq.write_table(table, tmp)
        tmp.replace(path)
        sidecar = {"name": run.name, "kind": run.kind, "meta": dict(run.meta),
                   "warnings": list(run.warnings)}
        path.with_suffix(".json").write_text(json.dumps(sidecar, indent=1, default=str))
        return path

    def remove(self, run: Run) -> None:
        stem = self._stem(run)
        for suffix in (".parquet", ".json"):
            (Path(self.directory) / f"{stem}{suffix}").unlink(missing_ok=True)

    def load_all(self) -> tuple[list[Run], list[RunFormatError]]:
        """Every saved run, oldest first, and the errors of files that no longer load."""
        runs: list[Run] = []
        errors: list[RunFormatError] = []
        paths = sorted(Path(self.directory).glob("*.parquet"), key=lambda p: p.stat().st_mtime)
        for path in paths:
            sidecar_path = path.with_suffix(".json")
            try:
                sidecar = json.loads(sidecar_path.read_text())
                name, kind = str(sidecar["name"]), sidecar["kind"]
            except (OSError, ValueError, KeyError, TypeError):
                errors.append(RunFormatError(sidecar_path.name, [Problem(
                    None, None, "missing or unreadable workspace metadata; remove this file "
                                "and its .parquet twin")]))
                continue
            try:
                loaded = load_run(path, name=name, kind=kind)
            except RunFormatError as err:
                errors.append(err)
                continue
            meta = {**loaded.meta, **sidecar.get("meta", {}), "workspace_file": path.name}
            runs.append(Run(name=name, kind=loaded.kind, frame=loaded.frame, meta=meta,
                            warnings=tuple(sidecar.get("warnings", ()))))
        return runs, errors
