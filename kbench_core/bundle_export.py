"""One ZIP of chosen figures and tables of chosen runs (the app's Export page).

The same :mod:`kbench_core.catalog` items as ``kbench figures``, written into an in-memory ZIP
with a ``provenance.json`` that lists every file, the runs (name, SHA-256) and the kbench
version. One kaleido render server serves the whole ZIP. Member names are unique
(:class:`kbench_core.text.FileNamer`): runs or items whose names differ only in characters a file
name cannot hold get a short hash, long names are cut, so no member is written twice.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import plotly.graph_objects as go

from kbench_core.export import FigureExporter, provenance_of, table_bytes
from kbench_core.families import items_for, unavailable
from kbench_core.io import Run
from kbench_core.text import FileNamer

__all__ = ["ExportChoice", "export_zip", "not_made", "planned_files"]

_TABLE_SUFFIX = {"csv": "csv", "latex": "tex", "markdown": "md"}


@dataclass(frozen=True)
class ExportChoice:
    """What to export: item names (empty = every item), figure and table formats, size."""

    items: tuple[str, ...] = ()
    figure_formats: tuple[str, ...] = ("pdf", "png")
    table_formats: tuple[str, ...] = ("csv", "latex")
    width: int | None = None
    height: int | None = None
    scale: float = 2.0


def planned_files(runs: Sequence[Run], choice: ExportChoice) -> list[tuple[Run, str, str]]:
    """``(run, item name, what)`` of every chosen item, in export order (for a preview)."""
    plan = []
    for run in runs:
        if unavailable(run.kind, run.frame):
            continue
        for item in items_for(run.kind):
            if not choice.items or item.name in choice.items:
                plan.append((run, item.name, item.what))
    return plan


def export_zip(runs: Sequence[Run], choice: ExportChoice,
               progress: Callable[[float, str], None] | None = None) -> bytes:
    """The ZIP file (bytes). ``progress(fraction, label)`` is called as files are written.

    An item that cannot be made from a run's data (a ``ValueError`` of the core: e.g. a
    ranking when no bias was answered by every model) is left out and listed, with why, under
    ``not_made`` in ``provenance.json`` (:func:`not_made`); the other files are written."""
    from kbench_core.families.judged import majority_provenance
    from kbench_core.profile import benchmark_of, profile

    jobs = []
    not_made: list[dict[str, str]] = []
    folders = FileNamer()
    for index, run in enumerate(runs):
        if unavailable(run.kind, run.frame):
            continue
        folder = folders.name(run.name, key=f"{index}\0{run.name}")
        names = FileNamer()
        seen: dict[str, int] = {}
        for item in items_for(run.kind):
            if choice.items and item.name not in choice.items:
                continue
            try:
                made = list(item.objects(run.frame, meta=run.meta))
            except ValueError as exc:
                # Valid data a statistic cannot use (models that share no bias to rank on):
                # that one item is left out and said so, the rest of the ZIP is made.
                not_made.append({"run": run.name, "item": item.name, "why": str(exc)[:300]})
                continue
            for stem, obj in made:
                seen[stem] = seen.get(stem, 0) + 1
                key = stem if seen[stem] == 1 else f"{stem}\0{seen[stem]}"
                jobs.append((run, item, f"{folder}/{names.name(stem, key=key)}", obj))
    total = sum(len(choice.figure_formats) if isinstance(obj, go.Figure)
                else len(choice.table_formats) for *_, obj in jobs) or 1
    listing = []
    buffer = io.BytesIO()
    done = 0
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive, \
            FigureExporter() as exporter:
        for run, item, path, obj in jobs:
            # a multi-judge run's tables are the majority's first: record how it was made
            prov = provenance_of([run], what=path,
                                 options=majority_provenance(run.kind, run.frame))
            if isinstance(obj, go.Figure):
                outputs = [(fmt, lambda f=fmt, o=obj, p=prov: exporter.to_bytes(
                    o, f, width=choice.width, height=choice.height, scale=choice.scale,
                    provenance=p)) for fmt in choice.figure_formats]
            else:
                outputs = [(_TABLE_SUFFIX[fmt], lambda f=fmt, o=obj, p=prov, i=item: table_bytes(
                    o, f, best=i.best, provenance=p, caption=i.title))
                    for fmt in choice.table_formats]
            for suffix, make in outputs:
                name = f"{path}.{suffix}"
                archive.writestr(name, make())
                listing.append({"file": name, "run": run.name, "item": item.name})
                done += 1
                if progress:
                    progress(done / total, name)
        # Runs of several benchmark families: each model across them (kbench_core.profile)
        if (not choice.items or "profile" in choice.items) and len(
                {benchmark_of(r.kind) for r in runs} - {None}) >= 2:
            joined = profile(runs)
            prov = provenance_of(runs, what="profile")
            for fmt in choice.table_formats:
                name = f"profile.{_TABLE_SUFFIX[fmt]}"
                archive.writestr(name, table_bytes(
                    joined, fmt, provenance=prov,
                    caption="Profile: each model's headline metrics per run"))
                listing.append({"file": name, "run": "", "item": "profile"})
        manifest = provenance_of(runs, what="export").to_dict()
        manifest["files"] = listing
        manifest["not_made"] = not_made
        archive.writestr("provenance.json", json.dumps(manifest, indent=1))
    return buffer.getvalue()


def not_made(data: bytes) -> list[dict[str, str]]:
    """The items an :func:`export_zip` ZIP left out (``run``, ``item``, ``why``), from its
    ``provenance.json``."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        manifest = json.loads(archive.read("provenance.json"))
    return list(manifest.get("not_made", []))
