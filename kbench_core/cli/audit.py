"""``kbench audit``: a person checks the LLM judge (docs/metrics/audit.md).

``kbench audit sample RUN --n N [--by model] [--seed S] [--judge majority|NAME] --out FILE``
writes the items to label as a sheet with empty label columns (to fill in a spreadsheet);
``kbench audit RUN --labels FILE [--judge ...] [--method ...] [--format ...]`` prints each
model's judge-only, human-only and corrected rate, then each judge's accuracy against the
reviewers."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ._common import (
    _check_out_file,
    _deliver_table,
    _emit,
    _load_all,
    _safe,
    _table_arguments,
    _write,
)

__all__ = ["add_parser", "audit_command", "audit_tables", "sample_command"]


def _judged_run(path: str):
    runs = _load_all([path], engine="memory")
    run = runs[0]
    from kbench_core import families

    if not families.get(run.kind).judges:
        raise SystemExit(f"kbench: {_safe(run.name)} is a {run.kind} run; the judge audit "
                         "is for judged (LLM-judged vulnerability detection) runs")
    return run


def _judge_of(run, judge: str | None) -> str:
    from kbench_core.audit import judge_choices

    choices = judge_choices(run.frame)
    if not choices:
        raise SystemExit(f"kbench: {_safe(run.name)} has no LLM judge to audit")
    judge = judge or choices[0]
    if judge not in choices:
        raise SystemExit(f"kbench: no judge {_safe(judge)!r} in {_safe(run.name)}; choose "
                         f"one of: {_safe(', '.join(choices))}")
    return judge


def sample_command(path: str, *, n: int, by: Sequence[str] = ("model",), seed: int = 0,
                   judge: str | None = None, out: str, labels: str | None = None,
                   fmt: str = "csv") -> int:
    """Write the blank labels sheet of a new audit sample of the run in ``path``."""
    from kbench_core.audit import blank_sheet, read_labels, sample
    from kbench_core.export import provenance_of, table_bytes

    _check_out_file(Path(out))
    run = _judged_run(path)
    judge = _judge_of(run, judge)
    done = None
    if labels:
        # a LabelError names file, row and field: kbench's entry point prints it as it is
        done, warnings = read_labels(labels, run_sha256=run.content_hash, judged=run.frame,
                                     reviewer="-")
        for line in warnings:
            print(f"kbench: {_safe(line)}", file=sys.stderr)
    try:
        drawn = sample(run.frame, n, by=by, judge=judge, seed=seed, labels=done)
    except ValueError as err:
        raise SystemExit(f"kbench: {_safe(run.name)}: {_safe(err)}") from None
    sheet = blank_sheet(drawn, run_sha256=run.content_hash)
    provenance = provenance_of([run], what="audit sample", options={
        "n": n, "by": ",".join(by), "seed": seed, "judge": judge,
        "labelled_before": drawn.attrs.get("n_labelled_before", 0)})
    if fmt == "csv":
        from kbench_core.audit import labels_csv

        head = "".join(f"# {line}\n" for line in provenance.lines())
        data = (head + labels_csv(sheet)).encode()
    else:
        data = table_bytes(sheet, fmt, provenance=provenance, caption="Items to label")
    _write(Path(out), data)
    print(f"wrote {_safe(out)}: {len(sheet)} items to label of {drawn.attrs['n_population']} "
          f"(seed {seed}, judge {_safe(judge)}); fill in target_found (yes/no), reviewer and, "
          "if you like, note, then: kbench audit RUN --labels FILE", file=sys.stderr)
    return 0


def audit_tables(run, labels, *, judge: str, method: str = "ppi++",
                 by: Sequence[str] = ("model",)) -> tuple:
    """The corrected table and the judges' accuracy of ``run`` given ``labels``."""
    from kbench_core.audit import corrected, judge_accuracy
    from kbench_core.audit.labels import drawn_judge

    # the sample was drawn with the same --judge (kbench audit sample --judge): its strata
    # weigh the labels
    design = drawn_judge(labels, judge)  # the judge the labels' sample was drawn with
    table = corrected(run.frame, labels, judge=judge, by=by, method=method, design_judge=design)
    accuracy = judge_accuracy(run.frame, labels, by=by, design_judge=design)
    return table, accuracy


def audit_command(path: str, *, labels: str, judge: str | None = None,
                  method: str = "ppi++", fmt: str = "csv", out: str | None = None,
                  precision: str = "display", reviewer: str | None = None) -> int:
    """Print (or write to ``out``) the corrected rates and the judges' accuracy."""
    from kbench_core.audit import latest, read_labels
    from kbench_core.export import provenance_of, table_bytes

    if out:
        _check_out_file(Path(out))
    run = _judged_run(path)
    judge = _judge_of(run, judge)
    frame, warnings = read_labels(labels, run_sha256=run.content_hash, judged=run.frame,
                                  reviewer=reviewer)
    for line in warnings:
        print(f"kbench: {_safe(line)}", file=sys.stderr)
    if frame.empty:
        raise SystemExit(f"kbench: {_safe(Path(labels).name)} holds no label yet (fill in "
                         "target_found)")
    table, accuracy = audit_tables(run, frame, judge=judge, method=method)
    current = latest(frame)
    options = {"judge": judge, "method": method, "labels": Path(labels).name,
               "n_labels": len(current), "reviewers": current["reviewer"].nunique()}
    provenance = provenance_of([run], what="judge audit", options=options)
    data = table_bytes(table, fmt, provenance=provenance, precision=precision,
                       caption=f"Target detection rate corrected for the judge's errors "
                               f"({judge}, {len(current)} labels)")
    data += b"\n" + table_bytes(accuracy, fmt, precision=precision,
                                caption="Each judge against the reviewers")
    if out:
        return _deliver_table(data, out, len(table) + len(accuracy))
    _emit(data.decode())
    return 0


def _by(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip()) or ("model",)


def _run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    words = list(args.words)
    if words and words[0] == "sample":
        if len(words) != 2:
            parser.error("usage: kbench audit sample RUN --n N --out FILE")
        if args.n is None or not args.out:
            parser.error("kbench audit sample needs --n N (items to draw) and --out FILE")
        return sample_command(words[1], n=args.n, by=_by(args.by), seed=args.seed,
                              judge=args.judge, out=args.out, labels=args.labels,
                              fmt=args.format)
    if len(words) != 1:
        parser.error("usage: kbench audit RUN --labels FILE  (or: kbench audit sample RUN ...)")
    if not args.labels:
        parser.error("kbench audit RUN needs --labels FILE (a filled sheet of "
                     "'kbench audit sample')")
    return audit_command(words[0], labels=args.labels, judge=args.judge, method=args.method,
                         fmt=args.format, out=args.out, precision=args.precision,
                         reviewer=args.reviewer)


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "audit", help="a person checks the LLM judge: draw items to label (audit sample), "
                      "then the metrics corrected for the judge's errors",
        usage="kbench audit sample RUN --n N [--by model] [--seed S] [--judge J] --out FILE\n"
              "       kbench audit RUN --labels FILE [--judge J] [--method M] "
              "[--format csv|latex|markdown]")
    parser.add_argument("words", nargs="+", metavar="RUN",
                        help="a judged run, or 'sample' then the run")
    parser.add_argument("--n", type=int, default=None, help="items to draw (audit sample)")
    parser.add_argument("--by", default="model",
                        help="columns the strata are made of besides the judge's decision "
                             "(comma-separated; default model)")
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    parser.add_argument("--judge", default=None, metavar="majority|NAME",
                        help="whose decisions are audited (default: the majority of several "
                             "LLM judges, else the only judge); give 'kbench audit RUN' the "
                             "--judge the sample was drawn with")
    parser.add_argument("--labels", metavar="FILE",
                        help="a filled labels sheet (with 'audit sample': labels already "
                             "made, whose items are not drawn again)")
    parser.add_argument("--reviewer", default=None,
                        help="who labelled the rows whose reviewer column is empty")
    parser.add_argument("--method", choices=["ppi++", "difference", "rogan_gladen"],
                        default="ppi++", help="how the rates are corrected (default ppi++)")
    _table_arguments(parser)
    parser.set_defaults(run=_run)
