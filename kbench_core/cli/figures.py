"""``kbench figures``: every figure (and table) of each run, drawn by kaleido."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from kbench_core.engines.cli import add_arguments as add_engine_arguments

from ._common import (
    _bounded,
    _browser_failed,
    _engine_choice,
    _judge_arguments,
    _judge_choice,
    _judges,
    _load_all,
    _make_folder,
    _progress,
    _safe,
    _write,
)


def write_figures(paths: Sequence[str], *, out: str, formats: Sequence[str],
                  width: int | None, height: int | None, scale: float,
                  tables: bool = True, only: Sequence[str] = (),
                  judges: dict | None = None, engine: str | None = None,
                  spark_master: str | None = None, labels: str | None = None
                  ) -> list[Path]:
    """Every figure (and table) of each run into ``out`` as ``<run>_<item>[-<suffix>].<fmt>``;
    one kaleido render server for the whole command. ``only`` keeps the items (or file stems,
    e.g. ``bms_curves-anchoring_effect``) named."""
    from kbench_core import families
    from kbench_core.export import FigureExporter, provenance_of, table_bytes
    from kbench_core.families import items_for, unavailable
    from kbench_core.text import FileNamer

    # An engine's bias run stays its small weighted table (every bias item reads the counts:
    # kbench_core.kahne.row_weights), so memory is bounded by it, not by the run's rows.
    # The judge audit (--labels) reads the answers its labels are of: the rows are fetched.
    runs = _load_all(paths, engine=engine, spark_master=spark_master, weighted=True,
                     summed=labels is None)
    folder = Path(out)
    _make_folder(folder)
    jobs = []
    # Unique, short names: "x/y", "x y" and "x_y" would all be "x_y" (short hash on a
    # collision), and a 300-character id would be too long for the file system (cut + hash).
    namer = FileNamer()
    seen: dict[str, int] = {}
    for index, run in enumerate(runs):
        why = unavailable(run.kind, run.frame)
        if why:
            print(f"kbench: {_safe(run.name)}: nothing to draw, skipped. {why}",
                  file=sys.stderr)
            continue
        empty: dict[str, list[str]] = {}  # why -> the items it leaves empty, said once
        options, chosen = _judges(run, judges)
        for item in items_for(run.kind):
            if item.what == "table" and not tables:
                continue
            if only and item.name not in only and not any(o.startswith(item.name + "-")
                                                            for o in only):
                continue
            made = 0
            for stem, obj in item.objects(run.frame, options, meta=run.meta,
                                          tables=getattr(run, "tables", None)):
                made += 1
                if only and item.name not in only and stem not in only:
                    continue
                label = f"{run.name}_{stem}"
                seen[label] = seen.get(label, 0) + 1
                key = f"{index}\0{label}\0{seen[label]}"
                jobs.append((run, item, namer.name(label, key=key), obj, chosen))
            if not made and item.empty:
                empty.setdefault(item.empty, []).append(item.name)
        for why, names in empty.items():
            print(f"kbench: {_safe(run.name)}: no {_safe(', '.join(names))}: {_safe(why)}",
                  file=sys.stderr)
        if labels and families.get(run.kind).judges:
            # the judge audit (docs/metrics/audit.md): the labels must be this run's
            for stem, what, obj, title, recorded in _audit_jobs(run, labels, judges):
                if only and stem not in only:
                    continue
                item = _AuditItem(what, title)
                jobs.append((run, item, namer.name(f"{run.name}_{stem}",
                                                   key=f"{index}\0audit\0{stem}\0{what}"),
                             obj, {**chosen, **recorded}))
    n_files = sum(len(formats) if item.what == "figure" else 2 for _, item, _, _, _ in jobs)
    written: list[Path] = []
    try:
        with FigureExporter() as exporter:
            for run, item, stem, obj, chosen in jobs:
                prov = provenance_of([run], what=stem, options=chosen)
                if item.what == "figure":
                    for fmt in formats:
                        path = folder / f"{stem}.{fmt}"
                        _write(path, exporter.to_bytes(obj, fmt, width=width, height=height,
                                                       scale=scale, provenance=prov))
                        written.append(path)
                        _progress(len(written), n_files, path.name)
                else:
                    for fmt, suffix in (("csv", "csv"), ("latex", "tex")):
                        path = folder / f"{stem}.{suffix}"
                        _write(path, table_bytes(obj, fmt, best=item.best, provenance=prov,
                                                 caption=item.title))
                        written.append(path)
                        _progress(len(written), n_files, path.name)
    except Exception as exc:
        if not _browser_failed(exc):
            raise
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        raise SystemExit("kbench: cannot draw figures: kaleido could not start Chromium"
                         + (f" ({_safe(first)})" if first else "") + ". Install Chromium "
                         "(Debian: apt install chromium) or run `kbench report` for figures "
                         "drawn in the browser") from None
    return written


class _AuditItem:
    """What an export job needs of a catalog item, for the audit's figures and tables."""

    def __init__(self, what: str, title: str) -> None:
        self.what, self.title, self.best = what, title, None


def _audit_jobs(run, labels: str, judges: dict | None):
    """The audit's figures and tables of ``run`` with the labels in the file ``labels``."""
    from kbench_core.audit import judge_choices, read_labels
    from kbench_core.audit.exports import audit_objects, audit_provenance

    frame, warnings = read_labels(labels, run_sha256=run.content_hash, judged=run.frame)
    for line in warnings:
        print(f"kbench: {_safe(line)}", file=sys.stderr)
    if frame.empty:
        print(f"kbench: {_safe(Path(labels).name)}: no label yet, no audit figures",
              file=sys.stderr)
        return
    judge = (judges or {}).get("judge") or judge_choices(run.frame)[0]
    recorded = audit_provenance(frame, judge=judge, method="ppi++",
                                source=Path(labels).name, data=Path(labels).read_bytes())
    for stem, what, obj, title in audit_objects(run.frame, frame, judge=judge):
        yield stem, what, obj, title, recorded


def add_parser(sub: argparse._SubParsersAction) -> None:
    fig = sub.add_parser("figures", help="write every figure (and table) of each run")
    fig.add_argument("files", nargs="+")
    fig.add_argument("--out", metavar="DIR", required=True)
    fig.add_argument("--format", default="pdf,svg,png",
                     help="comma-separated: pdf, svg, png (default %(default)s)")
    fig.add_argument("--size", choices=["one-column", "two-column", "screen"], default=None,
                     help="paper size preset (overridden by --width/--height)")
    fig.add_argument("--width", type=_bounded(int, 50, 10_000), default=None,
                     help="CSS pixels (96 per inch), 50 to 10,000")
    fig.add_argument("--height", type=_bounded(int, 50, 10_000), default=None,
                     help="CSS pixels, 50 to 10,000")
    fig.add_argument("--scale", type=_bounded(float, 0.1, 10.0), default=2.0,
                     help="PNG pixel density, 0.1 to 10 (default 2); PDF and SVG keep the "
                          "paper size")
    fig.add_argument("--no-tables", action="store_true", help="figures only")
    fig.add_argument("--items", default="",
                     help="comma-separated item names or file stems to keep, e.g. "
                          "fingerprint_heatmap,bms_curves-anchoring_effect (default: all)")
    fig.add_argument("--labels", metavar="FILE", default=None,
                     help="a judge-audit labels sheet of the judged run: adds the corrected "
                          "rates and the judges' accuracy (docs/metrics/audit.md)")
    _judge_arguments(fig)
    add_engine_arguments(fig)
    fig.set_defaults(run=_run)


def _run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from kbench_core.export import FIGURE_FORMATS, PAPER_SIZES

    formats = [f.strip().lower() for f in args.format.split(",") if f.strip()]
    unknown = [f for f in formats if f not in FIGURE_FORMATS]
    if unknown or not formats:
        parser.error(f"--format takes pdf, svg, png; got {args.format!r}")
    # A paper size fixes the width; the height stays the figure's own (its legend and
    # panels are laid out for it) unless --height says otherwise.
    width, height = (PAPER_SIZES[args.size][0], None) if args.size else (None, None)
    written = write_figures(args.files, out=args.out, formats=formats,
                            width=args.width or width, height=args.height or height,
                            scale=args.scale, tables=not args.no_tables,
                            only=[i.strip() for i in args.items.split(",") if i.strip()],
                            judges=_judge_choice(args), labels=args.labels,
                            **_engine_choice(args))
    print(f"wrote {len(written)} files to {args.out}", file=sys.stderr)
    return 0
