"""``kbench report``: one self-contained interactive HTML report."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from kbench_core.engines.cli import add_arguments as add_engine_arguments

from ._common import (
    _check_out_file,
    _engine_choice,
    _judge_arguments,
    _judge_choice,
    _judges,
    _load_all,
    _safe,
    _write,
)


def report(paths: Sequence[str], *, out: str, judges: dict | None = None,
           engine: str | None = None, spark_master: str | None = None) -> int:
    from kbench_core.report import report_html

    _check_out_file(Path(out))
    # An engine's bias run stays its small weighted table (every bias item reads the counts:
    # kbench_core.kahne.row_weights), so memory is bounded by it, not by the run's rows.
    runs = _load_all(paths, engine=engine, spark_master=spark_master, weighted=True)
    recorded: dict = {}
    for run in runs:  # every judged run's judges checked before the long work
        recorded.update(_judges(run, judges)[1])
    # The judge options go to every item (other families ignore them); the report records
    # the majority's choice when a judged run has one.
    options = {k: v for k, v in (judges or {}).items() if v is not None} if recorded else {}
    text = report_html(runs, options=options or None,
                       progress=lambda label: print(f"  {_safe(label)}", file=sys.stderr))
    _write(Path(out), text.encode("utf-8"))
    print(f"wrote {_safe(out)} ({len(text.encode()) / 1024**2:.1f} MB, opens offline)",
          file=sys.stderr)
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    rep = sub.add_parser("report", help="one self-contained interactive HTML report")
    rep.add_argument("files", nargs="+")
    rep.add_argument("--out", metavar="FILE", default="report.html")
    _judge_arguments(rep)
    add_engine_arguments(rep)
    rep.set_defaults(run=lambda args, parser: report(args.files, out=args.out,
                                                     judges=_judge_choice(args),
                                                     **_engine_choice(args)))
