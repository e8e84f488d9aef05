"""The ``kbench`` parser and entry point: each subcommand module registers itself."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from kbench_core import __version__
from kbench_core.io import RunFormatError

from . import app, audit, check, compare, figures, html_report, profiles, tables, workspaces
from ._common import _safe
from .compare import _models_argv


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``kbench`` command; any failure is one line on standard error, not a
    traceback (``KBENCH_DEBUG=1`` shows the traceback of an unexpected error)."""
    try:
        return _main(list(sys.argv[1:] if argv is None else argv))
    except KeyboardInterrupt:
        print("kbench: interrupted", file=sys.stderr)
        return 130
    except RunFormatError as err:
        print(f"kbench: {err}", file=sys.stderr)
        return 1
    except OSError as exc:
        where = f" {_safe(exc.filename)}" if exc.filename else ""
        print(f"kbench: cannot use{where}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except (SystemExit, MemoryError):
        raise
    except Exception as exc:
        from kbench_core.engines import EngineMemoryError

        if isinstance(exc, EngineMemoryError):  # a later query of a run kept in the engine
            raise SystemExit(f"kbench: {_safe(str(exc))}") from None
        if os.environ.get("KBENCH_DEBUG"):
            raise
        print(f"kbench: unexpected error ({type(exc).__name__}: {_safe(str(exc)[:300])}); "
              "set KBENCH_DEBUG=1 to see where", file=sys.stderr)
        return 2


# The subcommands in the order ``kbench --help`` lists them. A new subcommand is a module
# here with ``add_parser(sub)`` (its parser, with ``set_defaults(run=...)``: a function of the
# parsed arguments and the parser that returns the exit status) and one entry in this tuple.
COMMANDS = (app, check, tables, figures, compare, html_report, profiles, audit, workspaces)


def _main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="kbench", description="Results dashboard and metrics for LLM behavioural benchmarks.")
    parser.add_argument("--version", action="version", version=f"kbench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    args = parser.parse_args(_models_argv(argv))
    return args.run(args, parser)

