"""``kbench compare``: the paired comparison of models, for papers."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

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
    comparison pairs).

    The metric defaults to the family's headline per-item quantity (TDR's target found for
    judged runs); one the run does not have as a per-item quantity (an unknown name, a text
    column) is refused with the list of those it has. Every text a run supplies (model
    names, a column's name) reaches the output through the format's escaping, the verdict
    sentence included (:func:`_verdict_block`)."""
    from kbench_core import compare, families
    from kbench_core.export import provenance_of, table_bytes

    read = _engine_read(path, metric, engine=engine, spark_master=spark_master,
                        options={**(judges or {}), "judge": judge})
    if read is not None:
        run, frame, quantities = read
        spec = compare.COMPARISONS[run.kind]
        group, cluster = spec.group, spec.cluster
        metric = dict(spec.renamed).get(metric, metric) if metric else metric
        value = metric or spec.default
        voting: dict = dict(run.meta.get("compared_as") or {})
        if "judge" in voting:
            print(f"# judge: {_safe(voting['judge'])}", file=sys.stderr)
    else:
        keep = tuple(c for f in families.all_families() for c in (f.item_key or ()))
        (run,) = _load_all([path], engine=engine, spark_master=spark_master, keep=keep)
        if run.kind not in compare.COMPARISONS:
            raise SystemExit(f"kbench: runs of kind {run.kind!r} have no per-item comparison")
        spec = compare.COMPARISONS[run.kind]
        group, cluster = spec.group, spec.cluster
        metric = dict(spec.renamed).get(metric, metric) if metric else metric
        value = metric or spec.default
        voting = {}
        if families.get(run.kind).judges:
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
        quantities = compare.per_item_quantities(frame, run.kind)
    if value not in quantities:
        what = ("a text column, not a per-item quantity" if value in frame.columns
                else "not a column of this run")
        listed = "; ".join(f"{_safe(c)} ({_safe(w)})" if w != c.replace("_", " ")
                           else _safe(c) for c, w in quantities.items())
        raise SystemExit(f"kbench: --metric {_safe(repr(value))} is {what}; the per-item "
                         f"quantities this run can compare are: {listed}")
    label = quantities[value]
    known = (sorted(map(str, frame.models)) if isinstance(frame, compare.ItemMeans)
             else sorted(map(str, frame["model"].unique())))
    unknown = [m for m in models if m not in known]
    if unknown:
        raise SystemExit(f"kbench: unknown model(s) {_safe(', '.join(unknown))}; the run has "
                         f"{_safe(', '.join(known))}")
    lower = compare.is_lower_better(value)
    if len(models) == 2:
        # One pair asked for: its p is not adjusted for pairs nobody asked about (issue 23,
        # item 11); the per-group table is adjusted over its groups.
        a, b = models
        result = compare.compare_pair(frame, value, a, b, group=group, cluster=cluster,
                                      correction=correction, noun=spec.noun, label=label)
        head = _verdict_block(result, fmt, ours=value in spec.options.values())
        table = result.groups
        if correction is not None and len(table):
            print(f"# p_adjusted: {result.correction_name} over the {len(table)} "
                  f"{_safe(group)} levels", file=sys.stderr)
    else:
        head = ""
        table = compare.compare_models(frame, value, cluster=cluster, correction=correction)
        # every pair worded: the adjusted p it decides on and both intervals, named
        table["verdict"] = compare.pair_verdicts(
            table, label, lower_is_better=lower, correction=correction,
            cluster=cluster.replace("_", " ") if cluster else None, noun=spec.noun)
        if correction is not None:
            name = {"holm": "Holm", "fdr_bh": "Benjamini–Hochberg"}[correction]
            kind = ("simultaneous (Bonferroni)" if correction == "holm"
                    else "false-coverage-rate adjusted (Benjamini–Yekutieli)")
            print(f"# p_adjusted: {name} over all {len(table)} pairs; delta_low/high: each "
                  f"pair's own 95% interval; delta_adj_low/high: {kind}, agreeing with "
                  "direction", file=sys.stderr)
    prov = provenance_of([run], what=f"compare {value}",
                         options={"models": list(models), "cluster": cluster,
                                  "correction": correction, **voting})
    _emit(head + table_bytes(table, fmt, provenance=prov).decode())
    return 0


def _engine_read(path: str, metric: str | None, *, engine: str | None,
                 spark_master: str | None, options: dict | None = None) -> tuple | None:
    """``(run, frame, quantities)`` of a run an engine reduces for the comparison, bounded by
    what the comparison reads, not the run's rows (:func:`kbench_core.engines.
    compare_source`): a bias run's effect per bias from its weighted sufficient table, or
    a number column's items × models table made by the engine (``--metric score``: the
    trials paired), a replication run's |agent d − human d| paired by test, a judged run's
    answers of the judge ``options`` choose. None on the memory engine, or when the engine
    has no such table for ``metric`` (another family, another column): the rows are read as
    before."""
    from kbench_core import compare, families
    from kbench_core.engines import compare_source, default_engine
    from kbench_core.problems import RunFormatError

    chosen = engine or default_engine(path)
    if chosen == "memory":
        return None
    from kbench_core.engines.source import sources

    try:
        found = sources(Path(path))
    except (RunFormatError, OSError):
        return None  # the loading below says what is wrong, as it always has
    if len(found) != 1 or found[0].kind not in compare.COMPARISONS:
        return None
    spec = compare.COMPARISONS[found[0].kind]
    value = dict(spec.renamed).get(metric, metric) if metric else spec.default
    try:
        read = compare_source(path, value, engine=chosen,  # type: ignore[arg-type]
                              cluster=spec.cluster, spark_master=spark_master,
                              options=options)
    except RunFormatError as err:
        raise SystemExit(f"kbench: {err}") from None
    except RuntimeError as err:
        raise SystemExit(f"kbench: {err}") from None
    except ValueError as err:  # a judge option that does not fit the run, as _judges words it
        raise SystemExit(f"kbench: {_safe(found[0].name)}: {_safe(err)}") from None
    if read is None:
        return None
    run, means = read
    if means is None:
        frame = compare.per_item_values(run.frame, run.kind)
        return run, frame, compare.per_item_quantities(frame, run.kind)
    family = families.get(run.kind).comparison
    return run, means, {value: family.label_of(value) if family is not None
                        else value.replace("_", " ")}


_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._:/()+=@'-]*")
# a Markdown line that would open a block (heading, quote, list, rule, code) as written
_MARKDOWN_BLOCK = re.compile(r"^(\s*)([#>+\-=*]|\d+[.)])")


def _verdict_block(result, fmt: str, *, ours: bool) -> str:
    """The verdict sentence above the table, escaped for ``fmt`` like the table's cells
    (issue 42, item 3: the names in it were live): Markdown as one escaped paragraph (no
    tag, link, image or block marker from a name), LaTeX as one escaped paragraph (no
    control sequence), CSV as a ``#`` comment line in which every name is plain or a JSON
    string literal without ``,`` or ``;`` (so no cell a spreadsheet splits off can start a
    formula; :func:`kbench_core.text.json_quote`; the metric's words too unless ``ours``,
    the family's own label rather than a column of the run)."""
    from dataclasses import replace

    from kbench_core.export import latex_escape, markdown_escape
    from kbench_core.text import escape_controls, json_quote

    if fmt == "markdown":
        line = markdown_escape(result.verdict)
        return _MARKDOWN_BLOCK.sub(lambda m: m.group(1) + "\\" + m.group(2), line) + "\n\n"
    if fmt == "latex":
        return latex_escape(result.verdict) + "\n\n"

    def words(text: str) -> str:
        return text if _PLAIN.fullmatch(text) and "--" not in text else json_quote(text)

    quoted = replace(result, a=words(result.a), b=words(result.b),
                     label=result.label if ours else words(result.label))
    return "# verdict: " + escape_controls(re.sub(r"\s+", " ", quoted.verdict)) + "\n"


_COMPARE_OPTIONS = ("--metric", "--models", "--model", "--judge", "--judges", "--min-votes",
                    "--failed-as", "--correction", "--format", "--engine", "--spark-master",
                    "-h", "--help")


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
                      help="per-item quantity (default: the family's headline: the bias "
                           "effect, TDR's target found, |agent d − human d|)")
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
