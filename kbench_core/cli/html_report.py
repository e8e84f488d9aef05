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


def _audits(runs: Sequence, labels: str | None) -> tuple[dict, dict]:
    """The labels file's labels keyed by the judged run they belong to (its ``run_sha256``, or
    the only judged run), and what the provenance records of them."""
    if not labels:
        return {}, {}
    from kbench_core import families
    from kbench_core.audit import read_labels
    from kbench_core.audit.exports import audit_provenance

    judged = [run for run in runs if run.kind in families.judged_kinds()]
    if not judged:
        raise SystemExit("kbench: --labels is a judge audit's labels; none of the runs given "
                         "is a judged run")
    data = Path(labels).read_bytes()
    hashes = {run.content_hash for run in judged}
    frame, warnings = read_labels((Path(labels).name, data))
    named = set(frame["run_sha256"].astype(str)) - {""}
    if named - hashes:
        raise SystemExit(f"kbench: {_safe(Path(labels).name)}: labels for a run not given "
                         f"(SHA-256 {_safe(sorted(named - hashes)[0][:12])}…)")
    if not named and len(judged) > 1:
        raise SystemExit(f"kbench: {_safe(Path(labels).name)} does not say which judged run "
                         "it labels (its run_sha256 column is empty) and several are given")
    target = next(run for run in judged if run.content_hash in (named or hashes))
    frame, warnings = read_labels((Path(labels).name, data), run_sha256=target.content_hash,
                                  judged=target.frame)
    for line in warnings:
        print(f"kbench: {_safe(line)}", file=sys.stderr)
    recorded = audit_provenance(frame, judge="majority", method="ppi++",
                                source=Path(labels).name, data=data)
    return {target.content_hash: frame}, recorded


def report(paths: Sequence[str], *, out: str, judges: dict | None = None,
           engine: str | None = None, spark_master: str | None = None,
           labels: str | None = None) -> int:
    from kbench_core.report import report_html

    _check_out_file(Path(out))
    # An engine's bias run stays its small weighted table (every bias item reads the counts:
    # kbench_core.kahne.row_weights), so memory is bounded by it, not by the run's rows.
    # The judge audit (--labels) reads the answers its labels are of: the rows are fetched.
    runs = _load_all(paths, engine=engine, spark_master=spark_master, weighted=True,
                     summed=labels is None)
    recorded: dict = {}
    for run in runs:  # every judged run's judges checked before the long work
        recorded.update(_judges(run, judges)[1])
    # The judge options go to every item (other families ignore them); the report records
    # the majority's choice when a judged run has one.
    options = {k: v for k, v in (judges or {}).items() if v is not None} if recorded else {}
    audits, audited = _audits(runs, labels)
    options = {**options, **audited}
    text = report_html(runs, options=options or None, audits=audits,
                       progress=lambda label: print(f"  {_safe(label)}", file=sys.stderr))
    _write(Path(out), text.encode("utf-8"))
    print(f"wrote {_safe(out)} ({len(text.encode()) / 1024**2:.1f} MB, opens offline)",
          file=sys.stderr)
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    rep = sub.add_parser("report", help="one self-contained interactive HTML report")
    rep.add_argument("files", nargs="+")
    rep.add_argument("--out", metavar="FILE", default="report.html")
    rep.add_argument("--labels", metavar="FILE", default=None,
                     help="a judge-audit labels sheet of one of the judged runs: its audit "
                          "(corrected rates, the judges' accuracy) follows its headline")
    _judge_arguments(rep)
    add_engine_arguments(rep)
    rep.set_defaults(run=lambda args, parser: report(args.files, out=args.out,
                                                     judges=_judge_choice(args),
                                                     labels=args.labels,
                                                     **_engine_choice(args)))
