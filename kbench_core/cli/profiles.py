"""``kbench profile FILE... [--aliases FILE] [--format csv|latex|markdown] [--out F]``: the
profile table (:func:`kbench_core.profile.profile`) of every model in the runs given, written
like every other kbench table (:func:`kbench_core.export.table_bytes`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from ._common import _check_out_file, _deliver_table, _load_all, _safe, _table_arguments

__all__ = ["add_parser", "profile_bytes", "profile_command"]


def profile_bytes(runs: Sequence, fmt: str, *, aliases=None, precision: str = "display"
                  ) -> tuple[bytes, int]:
    """The profile of ``runs`` as a CSV, LaTeX or Markdown file and its number of rows (the
    aliases' source in the provenance; the joins every row shows in ``raw_ids`` and
    ``joined_by``)."""
    from kbench_core.export import provenance_of, table_bytes
    from kbench_core.profile import profile

    table = profile(runs, aliases=aliases)
    options = {"aliases": aliases.source} if aliases is not None and aliases.aliases else {}
    data = table_bytes(table, fmt, caption="Profile: each model's headline metrics per run",
                       provenance=provenance_of(runs, what="profile", options=options),
                       precision=precision)
    return data, len(table)


def profile_command(paths: Sequence[str], *, aliases: str | None = None, fmt: str = "csv",
                    out: str | None = None, precision: str = "display") -> int:
    """Print (or write to ``out``) the profile of the runs in ``paths``."""
    from kbench_core.aliases import AliasError, load_aliases

    if out:
        _check_out_file(Path(out))
    table = None
    if aliases:
        try:
            table = load_aliases(aliases)
        except AliasError as err:
            raise SystemExit(f"kbench: {_safe(err)}") from None
    runs = _load_all(paths)
    data, n = profile_bytes(runs, fmt, aliases=table, precision=precision)
    if not n:
        raise SystemExit("kbench: no run given has a profile (runs of kinds "
                         "bias, bias_summary, replication, replication_summary, judged)")
    return _deliver_table(data, out, n)


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "profile", help="one model across benchmarks: headline metrics per model, run and "
                        "configuration, joined by canonical model id")
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument("--aliases", metavar="FILE",
                        help='aliases TOML: [aliases] "canonical" = ["raw", ...]')
    _table_arguments(parser)
    parser.set_defaults(run=lambda args, parser: profile_command(
        args.files, aliases=args.aliases, fmt=args.format, out=args.out,
        precision=args.precision))
