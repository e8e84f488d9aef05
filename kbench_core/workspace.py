"""Opt-in on-disk store of loaded runs (``kbench app --workspace DIR``).

Each run is kept as ``<slug>-<hash>.parquet`` beside a ``.json`` sidecar with its name, kind,
meta, warnings and the SHA-256 of the Parquet file itself. Reloading goes through
:func:`kbench_core.io.load_run` again and the sidecar is validated like an upload (strict JSON,
an object with a text ``name``, a known ``kind``, an object ``meta``, a list of text
``warnings``, at most 4 MB), so a tampered or damaged workspace file is reported like any other
bad file and skipped, never fatal to the app. A Parquet file whose bytes no longer match the
SHA-256 its sidecar recorded (replaced behind kbench's back) is refused, so exports never carry
the old file's provenance for new content. Without a workspace nothing is written to disk.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from kbench_core import native
from kbench_core.io import Problem, Run, RunFormatError, load_run
from kbench_core.schema import SPECS

__all__ = ["Workspace"]


MAX_SIDECAR_BYTES = 4 * 1024**2
_HEX64 = re.compile(r"[0-9a-f]{64}")


def _bad(file: str, message: str, field: str | None = None) -> RunFormatError:
    return RunFormatError(file, [Problem(None, field, message)])


def _read_sidecar(path: Path) -> dict[str, Any]:
    """The sidecar's fields, validated; RunFormatError naming the file and field otherwise."""
    name = path.name
    try:
        size = path.stat().st_size
        if size > MAX_SIDECAR_BYTES:
            raise _bad(name, f"workspace metadata of {size:,} bytes, over the 4 MB limit")
        text = path.read_bytes().decode("utf-8")
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
    if not isinstance(data.get("name"), str) or not data["name"].strip() \
            or len(data["name"]) > 1000:
        raise _bad(name, "expected the run's name (text)", "name")
    if data.get("kind") not in SPECS:
        raise _bad(name, f"unknown run kind {str(data.get('kind'))[:40]!r}; expected one of "
                         f"{', '.join(SPECS)}", "kind")
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
    return {"name": data["name"], "kind": data["kind"], "meta": meta,
            "warnings": [str(w) for w in warnings], "parquet_sha256": checksum}


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
        buffer = io.BytesIO()
        pq.write_table(table, buffer)
        data = buffer.getvalue()
        tmp = path.with_suffix(".parquet.tmp")
        tmp.write_bytes(data)
        tmp.replace(path)
        sidecar = {"name": run.name, "kind": run.kind, "meta": dict(run.meta),
                   "warnings": list(run.warnings),
                   "parquet_sha256": hashlib.sha256(data).hexdigest()}
        side = path.with_suffix(".json")
        tmp_side = side.with_suffix(".json.tmp")
        tmp_side.write_text(json.dumps(sidecar, indent=1, default=str), encoding="utf-8")
        tmp_side.replace(side)
        return path

    def remove(self, run: Run) -> None:
        stem = self._stem(run)
        for suffix in (".parquet", ".json"):
            (Path(self.directory) / f"{stem}{suffix}").unlink(missing_ok=True)

    def load_all(self) -> tuple[list[Run], list[RunFormatError]]:
        """Every saved run, oldest first, and the errors of files that no longer load (a bad
        sidecar or Parquet file is reported and skipped; the others still load)."""
        runs: list[Run] = []
        errors: list[RunFormatError] = []

        def modified(path: Path) -> float:
            try:
                return path.stat().st_mtime
            except OSError:
                return 0.0

        paths = sorted(Path(self.directory).glob("*.parquet"), key=modified)
        for path in paths:
            try:
                sidecar = _read_sidecar(path.with_suffix(".json"))
                loaded = load_run(path, name=sidecar["name"], kind=sidecar["kind"])
            except RunFormatError as err:
                errors.append(err)
                continue
            notes = list(sidecar["warnings"])
            if sidecar["parquet_sha256"] is None:
                notes.append(f"workspace file {path.name} was saved without its own SHA-256; "
                             "its content could not be checked against what was saved")
            elif sidecar["parquet_sha256"] != loaded.content_hash:
                errors.append(_bad(path.name, "the Parquet file is not the one kbench saved "
                                              "(its SHA-256 differs from the one recorded "
                                              "beside it), so its provenance cannot be trusted; "
                                              "remove it and upload the run again"))
                continue
            meta = {**loaded.meta, **sidecar["meta"], "workspace_file": path.name}
            runs.append(Run(name=sidecar["name"], kind=loaded.kind, frame=loaded.frame,
                            meta=meta, warnings=tuple(notes)))
        return runs, errors
