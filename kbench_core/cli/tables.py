"""``kbench metrics``: the main table of a run."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kbench_core.engines.cli import add_arguments as add_engine_arguments

from ._common import (
    _check_out_file,
    _deliver_table,
    _engine_choice,
    _judge_arguments,
    _judge_choice,
    _judges,
    _load_all,
    _safe,
    _table_arguments,
)


def metrics(path: str, *, fmt: str, out: str | None, precision: str = "display",
            judges: dict | None = None, engine: str | None = None,
            spark_master: str | None = None) -> int:
    """Print (or write) the family's main table of one run (of a run with several LLM
    judges: the majority's rows first, then each judge's; ``judges``: the judge options;
    ``engine``, ``spark_master``: where the rows are reduced, :mod:`kbench_core.engines`)."""
    from kbench_core.export import provenance_of, table_bytes
    from kbench_core.families import items_for, main_table, unavailable

    if out:
        _check_out_file(Path(out))
    from kbench_core.engines.cli import engine_main_tables

    # A run whose family computes its tables in the engine (a judged run's tiers from the
    # cells the engine sums: issue 39).
    summed = engine_main_tables(path, engine=engine, spark_master=spark_master,
                                options=judges)
    if summed is not None:
        import pandas as pd

        run, tables, chosen = summed
        item = main_table(run.kind)
        table = pd.concat([t for _, t in tables], ignore_index=True)
        data = table_bytes(table, fmt, best=item.best, caption=f"{item.title} ({run.name})",
                           provenance=provenance_of([run], what=item.name, options=chosen),
                           precision=precision)
        return _deliver_table(data, out, len(table))
    # An engine's bias run stays its small weighted table: the fingerprint reads the counts.
    runs = _load_all([path], engine=engine, spark_master=spark_master, weighted=True,
                     summed=True)
    if len(runs) != 1:
        raise SystemExit(f"kbench: {_safe(path)} holds {len(runs)} runs (a workspace); "
                         "metrics prints one: give one of its Parquet files")
    (run,) = runs
    why = unavailable(run.kind, run.frame)
    if why:
        raise SystemExit(f"kbench: {run.name}: no metrics to print. {why}")
    try:
        item = main_table(run.kind)
    except ValueError as err:
        raise SystemExit(f"kbench: {err}") from None
    import pandas as pd

    # One table per judge (judged runs) stacks into one; its `judge` column tells them apart.
    options, chosen = _judges(run, judges)
    summed = getattr(run, "tables", None)  # an engine's sufficient tables (io.SummedRun)
    tables = [t for _, t in item.objects(run.frame, options, meta=run.meta, tables=summed)]
    if not tables:
        # A valid run the main table has nothing of (HumanStudy-Bench's simple_findings.csv:
        # finding rows, no study rows): say why, and print the first table that has rows.
        note = f"{run.name}: no {item.name} table" + (f": {item.empty}" if item.empty else "")
        for other in items_for(run.kind):
            if other.what != "table" or other is item:
                continue
            tables = [t for _, t in other.objects(run.frame, options, meta=run.meta,
                                                  tables=summed)]
            if tables:
                item = other
                break
        if not tables:
            raise SystemExit(f"kbench: {_safe(note)}")
        print(f"kbench: {_safe(note)}. Printing {_safe(item.title.lower())} instead.",
              file=sys.stderr)
    table = pd.concat(tables, ignore_index=True)
    data = table_bytes(table, fmt, best=item.best, caption=f"{item.title} ({run.name})",
                       provenance=provenance_of([run], what=item.name, options=chosen),
                       precision=precision)
    return _deliver_table(data, out, len(table))


def add_parser(sub: argparse._SubParsersAction) -> None:
    met = sub.add_parser("metrics", help="the main table of a run (fingerprint, ECS/PAS, tiers)")
    met.add_argument("file")
    _table_arguments(met)
    _judge_arguments(met)
    add_engine_arguments(met)
    met.set_defaults(run=lambda args, parser: metrics(
        args.file, fmt=args.format, out=args.out, precision=args.precision,
        judges=_judge_choice(args), **_engine_choice(args)))
