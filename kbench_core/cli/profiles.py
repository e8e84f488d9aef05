"""``kbench profile FILE... [--aliases FILE] [--suggest-aliases FILE] [--format csv|latex|markdown]
[--out F] [--engine memory|duckdb|spark]``: the profile table
(:func:`kbench_core.profile.profile`) of every model in the runs given, written like every other
kbench table (:func:`kbench_core.export.table_bytes`), and on standard error the canonical ids
that may name one model but were not joined (:func:`kbench_core.aliases.near_matches`), as
aliases lines to accept; ``--suggest-aliases FILE`` writes the aliases given plus every
suggestion to an aliases file to review and pass back with ``--aliases``. Runs an engine reduces
(``--engine``; DuckDB by default for Parquet) are read as their weighted sufficient tables, as
``kbench metrics`` reads them: a bias run's profile is its fingerprint, computed from its small
table whatever its rows; a replication run's ECS and PAS come from the sums of its findings the
engine returns (``Family.engine_run``), no test fetched; a judged run's tiers and TDR's rank
from its cells (from ``KBENCH_JUDGED_RUN_ROWS`` rows on, when set), no answer fetched."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from kbench_core.engines.cli import add_arguments as add_engine_arguments

from ._common import (
    _check_out_file,
    _deliver_table,
    _engine_choice,
    _load_all,
    _safe,
    _table_arguments,
    _write,
)

__all__ = ["add_parser", "profile_bytes", "profile_command", "suggestions_text"]


def profile_bytes(runs: Sequence, fmt: str, *, aliases=None, precision: str = "display",
                  table=None) -> tuple[bytes, int]:
    """The profile of ``runs`` (``table`` when already computed) as a CSV, LaTeX or Markdown
    file and its number of rows (the aliases' source in the provenance; the joins every row
    shows in ``raw_ids`` and ``joined_by``)."""
    from kbench_core.export import provenance_of, table_bytes
    from kbench_core.profile import profile

    if table is None:
        table = profile(runs, aliases=aliases)
    options = {"aliases": aliases.source} if aliases is not None and aliases.aliases else {}
    data = table_bytes(table, fmt, caption="Profile: each model's headline metrics per run",
                       provenance=provenance_of(runs, what="profile", options=options),
                       precision=precision)
    return data, len(table)


def _listed(text: str, most: int = 3) -> str:
    names = text.split(", ")
    more = f", +{len(names) - most} more" if len(names) > most else ""
    return ", ".join(names[:most]) + more


def suggestions_text(near, accepted) -> str:
    """The near-matches (:func:`kbench_core.aliases.near_matches`) for a terminal: one line
    each (the two canonical ids, their raw ids and runs, why), then the aliases TOML lines
    that accept them (``accepted``: the :class:`~kbench_core.aliases.AliasTable` of the
    suggestions alone); run-supplied text escaped."""
    n = len(near)
    lines = [f"kbench: {n} near-match{'es' if n != 1 else ''} not joined (to join one, put its "
             "line in an aliases file and pass --aliases FILE; --suggest-aliases FILE writes "
             "them all):"]
    for row in near.itertuples():
        lines.append(f"  {_safe(row.model)} ({_safe(_listed(row.raw_ids))} in "
                     f"{_safe(row.runs)}) ~ {_safe(row.suggested)} "
                     f"({_safe(_listed(row.suggested_raw_ids))} in {_safe(row.suggested_runs)})"
                     f": {row.why}")
    lines += [_safe(line) for line in accepted.as_toml().strip().split("\n")]
    return "\n".join(lines)


def _suggested(near, base):
    """``(accepted, combined)``: the suggestions as aliases alone, and added to ``base`` (a
    suggestion whose id ``base`` already declares elsewhere is left out of both)."""
    from kbench_core.aliases import AliasError, AliasTable

    alone, combined = AliasTable(), base or AliasTable()
    for row in near.itertuples():
        try:
            combined = combined.with_alias(row.model, row.suggested)
            alone = alone.with_alias(row.model, row.suggested)
        except AliasError:
            continue
    return alone, combined


def profile_command(paths: Sequence[str], *, aliases: str | None = None, fmt: str = "csv",
                    out: str | None = None, precision: str = "display",
                    suggest: str | None = None, engine: str | None = None,
                    spark_master: str | None = None) -> int:
    """Print (or write to ``out``) the profile of the runs in ``paths``; the near-matches on
    standard error, and with ``suggest`` to that aliases file (with the aliases given).
    ``engine``: see :mod:`kbench_core.engines` (the runs it reduces are weighted)."""
    from kbench_core.aliases import AliasError, load_aliases, near_matches
    from kbench_core.profile import profile

    for target in (out, suggest):
        if target:
            _check_out_file(Path(target))
    table = None
    if aliases:
        try:
            table = load_aliases(aliases)
        except AliasError as err:
            raise SystemExit(f"kbench: {_safe(err)}") from None
    # through an engine: a replication run's ECS and PAS from the findings' sums, a judged
    # run's tiers and TDR ranks from its cells (from KBENCH_JUDGED_RUN_ROWS rows on, when set)
    runs = _load_all(paths, engine=engine, spark_master=spark_master, weighted=True,
                     summed=True)
    joined = profile(runs, aliases=table)
    data, n = profile_bytes(runs, fmt, aliases=table, precision=precision, table=joined)
    if not n:
        raise SystemExit("kbench: no run given has a profile (runs of kinds "
                         "bias, bias_summary, replication, replication_summary, judged)")
    code = _deliver_table(data, out, n)
    near = near_matches(joined)
    accepted, combined = _suggested(near, table)
    if len(near):
        print(suggestions_text(near, accepted), file=sys.stderr)
    if suggest:
        _write(Path(suggest), combined.as_toml().encode("utf-8"))
        k = len(accepted.aliases)
        print(f"wrote {_safe(suggest)} ({k} suggested alias{'es' if k != 1 else ''}"
              + (f" and the {len(table.aliases)} of {_safe(aliases)}" if table else "")
              + "): keep the lines you agree with and pass it with --aliases", file=sys.stderr)
    return code


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "profile", help="one model across benchmarks: headline metrics per model, run and "
                        "configuration, joined by canonical model id")
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument("--aliases", metavar="FILE",
                        help='aliases TOML: [aliases] "canonical" = ["raw", ...]')
    parser.add_argument("--suggest-aliases", metavar="FILE", dest="suggest",
                        help="write the aliases given plus one per near-match not joined "
                             "(also listed on standard error) to this aliases TOML, to review "
                             "and pass back with --aliases")
    _table_arguments(parser)
    add_engine_arguments(parser)
    parser.set_defaults(run=lambda args, parser: profile_command(
        args.files, aliases=args.aliases, fmt=args.format, out=args.out,
        precision=args.precision, suggest=args.suggest, **_engine_choice(args)))
