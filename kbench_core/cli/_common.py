"""Helpers shared by the ``kbench`` subcommands: terminal-safe output, output files, loading runs,
progress, the judge options."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from kbench_core.text import escape_controls


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def _safe(text: object) -> str:
    """Text from a run, for a terminal: every control, bidi or invisible character escaped."""
    return escape_controls(str(text))


def _emit(text: str) -> None:
    """Data (a table) on standard output: as is into a pipe or file, escaped line by line on
    a terminal so no escape sequence in a cell reaches it."""
    if sys.stdout.isatty():
        text = "\n".join(_safe(line) for line in text.split("\n"))
    sys.stdout.write(text)


def _make_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SystemExit(f"kbench: cannot create the folder {_safe(folder)}: "
                         f"{exc.strerror or exc}") from None
    if not folder.is_dir():
        raise SystemExit(f"kbench: {_safe(folder)} is not a folder")


def _write(path: Path, data: bytes) -> None:
    try:
        path.write_bytes(data)
    except OSError as exc:
        raise SystemExit(f"kbench: cannot write {_safe(path)}: {exc.strerror or exc}") from None


def _table_arguments(parser: argparse.ArgumentParser) -> None:
    """``--format``, ``--out`` and ``--precision`` of a command that prints one table."""
    parser.add_argument("--format", choices=["csv", "latex", "markdown"], default="csv")
    parser.add_argument("--out", metavar="FILE", help="write to FILE instead of standard output")
    parser.add_argument("--precision", choices=["display", "full"], default="display",
                        help="CSV numbers to 4 significant digits (display, the default) or "
                             "every digit (full)")


def _deliver_table(data: bytes, out: str | None, rows: int) -> int:
    """A table's bytes to ``out`` (saying so on standard error) or to standard output."""
    if out:
        _write(Path(out), data)
        print(f"wrote {_safe(out)} ({rows} rows)", file=sys.stderr)
    else:
        _emit(data.decode())
    return 0


def _check_out_file(path: Path) -> None:
    """Refuse an output file that cannot be written, before any work is done for it (a report
    of many runs takes minutes; its path should not fail at the end)."""
    if path.is_dir():
        raise SystemExit(f"kbench: cannot write {_safe(path)}: it is a folder")
    parent = path.parent
    if not parent.is_dir():
        raise SystemExit(f"kbench: cannot write {_safe(path)}: no folder {_safe(parent)}")
    if not os.access(parent, os.W_OK | os.X_OK) or (path.exists()
                                                    and not os.access(path, os.W_OK)):
        raise SystemExit(f"kbench: cannot write {_safe(path)}: permission denied")


def _browser_failed(exc: BaseException) -> bool:
    """Whether ``exc`` says kaleido could not start or find its Chromium."""
    try:
        from kaleido.errors import BrowserFailedError, ChromeNotFoundError
    except ImportError:  # another kaleido: recognise the errors by name
        return type(exc).__name__ in ("BrowserFailedError", "ChromeNotFoundError",
                                      "BrowserDepsError")
    return isinstance(exc, BrowserFailedError | ChromeNotFoundError)


def _load_all(paths: Sequence[str], *, engine: str | None = None,
              spark_master: str | None = None, keep: Sequence[str] = (),
              weighted: bool = False, summed: bool | str = False) -> list:
    """The runs of ``paths``, each through its engine (``--engine``; default duckdb for
    Parquet sources and workspaces, the loader otherwise: :mod:`kbench_core.engines`;
    ``summed``: :func:`kbench_core.engines.cli.load_all`)."""
    from kbench_core.engines.cli import load_all

    return load_all(paths, engine=engine, spark_master=spark_master, keep=keep,
                    weighted=weighted, summed=summed)


def _engine_choice(args: argparse.Namespace) -> dict:
    """``--engine`` and ``--spark-master`` as keyword arguments of :func:`_load_all`."""
    return dict(engine=args.engine, spark_master=args.spark_master)


def _progress(done: int, total: int, label: str) -> None:
    """A one-line progress bar on stderr (rewritten in place on a terminal)."""
    width = 24
    filled = width * done // max(total, 1)
    line = f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {label}"
    if sys.stderr.isatty():
        print(f"\r{line[:110]:<110}", end="" if done < total else "\n", file=sys.stderr,
              flush=True)
    else:
        print(line, file=sys.stderr, flush=True)


def _judges(run, judges: dict | None) -> tuple[dict, dict]:
    """For a judged run: the judge options (``--judge``, ``--judges``, ``--min-votes``,
    ``--failed-as``) checked against its judges, and what its exports record of them (with
    several LLM judges: the majority's voters, votes and rule). Anything else: nothing."""
    from kbench_core import families

    if not families.get(run.kind).judges:
        return {}, {}
    from kbench_core.families.judged import MAJORITY, check_judges, default_judge

    tables = getattr(run, "tables", None) or {}
    # a run kept in the engine names its judges (families._judged_sources.EngineJudged)
    names = tables["engine"].judges if "engine" in tables else run.frame
    try:
        chosen = check_judges(names, judges)
    except ValueError as err:
        raise SystemExit(f"kbench: {_safe(run.name)}: {_safe(err)}") from None
    several = default_judge(names) == MAJORITY
    return dict(judges or {}), (chosen.provenance() if several else {})


def _bounded(kind: type, low: float, high: float):
    """An argparse type: a number of ``kind`` from ``low`` to ``high``. A size of 0 or less
    wrote empty figure files; a huge one asks the renderer for gigabytes."""

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not (low <= value <= high):  # NaN fails too
            raise argparse.ArgumentTypeError(f"expected {low:g} to {high:,g}, got {text}")
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its messages
    return parse


def _judge_arguments(parser: argparse.ArgumentParser, *, judge: bool = True) -> None:
    """``--judge``, ``--judges``, ``--min-votes`` and ``--failed-as``: which judge a judged run
    with several LLM judges is shown by, and how their majority is made
    (docs/metrics/agreement.md)."""
    group = parser.add_argument_group("judged runs with several judges")
    if judge:
        group.add_argument("--judge", default=None, metavar="majority|NAME",
                           help="only this judge's rows: 'majority' (the consensus) or a "
                                "judge's name (default: the majority first, then each judge)")
    group.add_argument("--judges", default=None, metavar="A,B,C",
                       help="the judges whose majority is taken (default: every judge "
                            "other than 'human')")
    group.add_argument("--min-votes", type=int, default=None, metavar="K",
                       help="votes a value needs (default: a strict majority of --judges)")
    group.add_argument("--failed-as", choices=["missing", "not-found"], default="missing",
                       help="a failed judgement is missing (default) or counts as 'not "
                            "found' (BlockBench's convention)")


def _judge_choice(args: argparse.Namespace) -> dict:
    """The judge options given on the command line, as :class:`~kbench_core.families.judged.
    ConsensusOptions` reads them."""
    return {"judge": getattr(args, "judge", None), "judges": args.judges,
            "min_votes": args.min_votes, "failed_as": args.failed_as.replace("-", "_")}
