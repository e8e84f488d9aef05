"""``kbench profile FILE... [--aliases FILE] [--format csv|latex|markdown] [--out F]``: the
profile table (:func:`kbench_core.profile.profile`) of every model in the runs given, written
like every other kbench table (:func:`kbench_core.export.table_bytes`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

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
                    out: str | None = None) -> int:
    """Print (or write to ``out``) the profile of the runs in ``paths``."""
    from kbench_core.aliases import AliasError, load_aliases
    from kbench_core.io import RunFormatError, load_run
    from kbench_core.text import escape_controls

    if out:
        target = Path(out)
        if target.is_dir() or not target.parent.is_dir():
            raise SystemExit(f"kbench: cannot write {escape_controls(out)}: "
                             + ("it is a folder" if target.is_dir()
                                else f"no folder {escape_controls(str(target.parent))}"))
    table = None
    if aliases:
        try:
            table = load_aliases(aliases)
        except AliasError as err:
            raise SystemExit(f"kbench: {escape_controls(str(err))}") from None
    runs = []
    for path in paths:
        try:
            runs.append(load_run(path))
        except RunFormatError as err:
            raise SystemExit(f"kbench: {err}") from None
    data, n = profile_bytes(runs, fmt, aliases=table)
    if not n:
        raise SystemExit("kbench: no run given has a profile (runs of kinds "
                         "bias, bias_summary, replication, replication_summary, judged)")
    if out:
        try:
            Path(out).write_bytes(data)
        except OSError as exc:
            raise SystemExit(f"kbench: cannot write {escape_controls(out)}: "
                             f"{exc.strerror or exc}") from None
        print(f"wrote {escape_controls(out)} ({n} rows)", file=sys.stderr)
    else:
        text = data.decode()
        if sys.stdout.isatty():  # no escape sequence from a cell reaches the terminal
            text = "\n".join(escape_controls(line) for line in text.split("\n"))
        sys.stdout.write(text)
    return 0


def add_parser(subparsers) -> argparse.ArgumentParser:
    """The ``profile`` subcommand on ``subparsers`` (its handler in ``func``)."""
    parser = subparsers.add_parser(
        "profile", help="one model across benchmarks: headline metrics per model, run and "
                        "configuration, joined by canonical model id")
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument("--aliases", metavar="FILE",
                        help='aliases TOML: [aliases] "canonical" = ["raw", ...]')
    parser.add_argument("--format", choices=["csv", "latex", "markdown"], default="csv")
    parser.add_argument("--out", metavar="F", help="write to this file (default: print)")
    parser.set_defaults(func=lambda args: profile_command(
        args.files, aliases=args.aliases, fmt=args.format, out=args.out))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m kbench_core.profile_command FILE...`` (the same as ``kbench profile``)."""
    parser = argparse.ArgumentParser(prog="kbench")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["profile", *(sys.argv[1:] if argv is None else argv)])
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
