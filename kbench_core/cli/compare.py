"""``kbench compare``: the paired comparison of models, for papers."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from kbench_core.engines.cli import add_arguments as add_engine_arguments

from ._common import (
    _emit,
    _engine_choice,
    _judge_arguments,
    _judge_choice,
    _judges,
    _load_all,
    _safe,
)


def compare_command(path: str, *, metric: str | None, models: Sequence[str],
                    judge: str | None, fmt: str, correction: str | None,
                    judges: dict | None = None, engine: str | None = None,
                    spark_master: str | None = None) -> int:
    """Print the paired comparison of two models (or every pair) for a paper (``engine``:
    see :mod:`kbench_core.engines`; an engine keeps the family's item key, which the
    comparison pairs)."""
    from kbench_core import compare, families
    from kbench_core.export import provenance_of, table_bytes

    keep = tuple(c for f in families.all_families() for c in (f.item_key or ()))
    (run,) = _load_all([path], engine=engine, spark_master=spark_master, keep=keep)
    if run.kind not in compare.COMPARISONS:
        raise SystemExit(f"kbench: runs of kind {run.kind!r} have no per-item comparison")
    spec = compare.COMPARISONS[run.kind]
    value, group, cluster = spec.values[0][1], spec.group, spec.cluster
    if metric == "target_found" and run.kind == "judged":
        metric = "target_found_vulnerable"  # a target can only be found on a vulnerable sample
    value = metric or value
    voting: dict = {}
    if run.kind == "judged":
        # One judge's answers: the majority of several LLM judges unless --judge says.
        from kbench_core.families.judged import default_judge, judge_views

        options, voting = _judges(run, {**(judges or {}), "judge": judge})
        options["judge"] = judge or default_judge(run.frame)
        ((chosen, rows),) = judge_views(run.frame, options)
        frame = compare.per_item_values(rows, run.kind)
        voting = {**voting, "judge": chosen} if voting else {"judge": chosen}
        print(f"# judge: {_safe(chosen)}", file=sys.stderr)
    else:
        frame = compare.per_item_values(run.frame, run.kind)
    # Every engine keeps the trials here (load without weighted=True); a run that still
    # arrives as weighted tuples is refused with the reason, not compared on no items.
    refusal = compare.trial_grain_refusal(frame, value)
    if refusal is not None:
        raise SystemExit(f"kbench: {_safe(run.name)}: {refusal}")
    if value not in frame.columns:
        raise SystemExit(f"kbench: no per-item column {_safe(repr(value))} in this run")
    known = sorted(map(str, frame["model"].unique()))
    unknown = [m for m in models if m not in known]
    if unknown:
        raise SystemExit(f"kbench: unknown model(s) {_safe(', '.join(unknown))}; the run has "
                         f"{_safe(', '.join(known))}")
    if len(models) == 2:
        # One pair asked for: its p is not adjusted for pairs nobody asked about (issue 23,
        # item 11); the per-group table is adjusted over its groups.
        a, b = models
        result = compare.compare_pair(frame, value, a, b, group=group, cluster=cluster,
                                      correction=correction, noun=spec.noun)
        _emit(result.verdict + "\n")
        table = result.groups
        if correction is not None and len(table):
            print(f"# p_adjusted: {result.correction_name} over the {len(table)} "
                  f"{_safe(group)} levels", file=sys.stderr)
    else:
        table = compare.compare_models(frame, value, cluster=cluster, correction=correction)
        if correction is not None:
            name = {"holm": "Holm", "fdr_bh": "Benjamini–Hochberg"}[correction]
            print(f"# p_adjusted: {name} over all {len(table)} pairs", file=sys.stderr)
    prov = provenance_of([run], what=f"compare {value}",
                         options={"models": list(models), "cluster": cluster,
                                  "correction": correction, **voting})
    _emit(table_bytes(table, fmt, provenance=prov).decode())
    return 0


_COMPARE_OPTIONS = ("--metric", "--models", "--model", "--judge", "--judges", "--min-votes",
                    "--failed-as", "--correction", "--format", "-h", "--help")


def _models_argv(argv: list[str]) -> list[str]:
    """``compare ... --models A B``, with names that start with ``-`` taken as names.

    argparse reads ``--models -a -b`` as two unknown options; every word after ``--models`` up
    to the next option of ``compare`` (or ``--``) is rewritten as ``--model=WORD``, which
    argparse never mistakes for an option.
    """
    if "compare" not in argv:
        return argv
    out: list[str] = []
    words = iter(argv)
    for word in words:
        if word != "--models":
            out.append(word)
            continue
        out.append("--models")  # an empty --models still means "every pair"
        for name in words:
            if name == "--":
                break
            if name.split("=", 1)[0] in _COMPARE_OPTIONS:
                out.append(name)
                break
            out.append(f"--model={name}")
    return out


def add_parser(sub: argparse._SubParsersAction) -> None:
    cmp_ = sub.add_parser("compare", help="paired comparison of models, for papers")
    cmp_.add_argument("file")
    cmp_.add_argument("--metric", default=None,
                      help="per-item column (default: score, correct or abs_diff by run kind)")
    cmp_.add_argument("--models", nargs="*", default=[], metavar="MODEL",
                      help="two models: their difference per group; none: every pair "
                           "(names may start with '-')")
    cmp_.add_argument("--model", action="append", dest="models", metavar="NAME",
                      help="one model (repeat for two); --model=NAME for any name")
    cmp_.add_argument("--judge", default=None, metavar="majority|NAME",
                      help="judged runs: which judge (default: the majority of several LLM "
                           "judges, else the only judge)")
    _judge_arguments(cmp_, judge=False)
    cmp_.add_argument("--correction", choices=["holm", "fdr_bh", "none"], default="holm")
    cmp_.add_argument("--format", choices=["csv", "latex", "markdown"], default="markdown")
    add_engine_arguments(cmp_)
    cmp_.set_defaults(run=_run)


def _run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if len(args.models) not in (0, 2):
        parser.error("--models takes two models (or none for every pair)")
    return compare_command(args.file, metric=args.metric, models=args.models,
                           judge=args.judge, fmt=args.format,
                           correction=None if args.correction == "none" else args.correction,
                           judges=_judge_choice(args), **_engine_choice(args))
