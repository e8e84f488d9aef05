"""``kbench workspace add FILE|FOLDER [--workspace DIR] [--name NAME] [--engine duckdb|spark]``:
a run too big for the loader added to a workspace through an engine, validated cell by cell,
copied into the workspace with its sidecar written from its sufficient table (no row loaded),
and that table kept in the workspace so ``kbench app --workspace DIR`` opens the run without
reducing it again (:mod:`kbench_core.workspace_add`)."""

from __future__ import annotations

import argparse
import os
import sys

from ._common import _safe

__all__ = ["add_parser", "workspace_add"]


def workspace_add(path: str, *, workspace: str | None, name: str | None = None,
                  engine: str | None = None, spark_master: str | None = None) -> int:
    """Add the run at ``path`` to ``workspace`` (default ``$KBENCH_WORKSPACE``) and say what
    was written on standard error; a problem is the command's one-line exit message."""
    from kbench_core.engines import EngineMemoryError
    from kbench_core.io import RunFormatError
    from kbench_core.workspace import Workspace, WorkspaceError
    from kbench_core.workspace_add import add_run

    folder = workspace or os.environ.get("KBENCH_WORKSPACE")
    if not folder:
        raise SystemExit("kbench: give the workspace: --workspace DIR (or KBENCH_WORKSPACE)")
    try:
        added = add_run(Workspace(folder), path, name=name, engine=engine or "duckdb",
                        spark_master=spark_master)
    except (WorkspaceError, EngineMemoryError) as err:
        raise SystemExit(f"kbench: {_safe(err)}") from None
    except RunFormatError as err:
        raise SystemExit(f"kbench: {err}") from None
    except RuntimeError as err:  # Spark that cannot start (engines.spark)
        raise SystemExit(f"kbench: {_safe(err)}") from None
    models = len(added.models)
    how = (f"validated and reduced to {added.reduced_rows:,} rows by {engine or 'duckdb'} "
           f"in {added.seconds:.1f} s (kept for the app)" if added.kept else
           f"validated by {engine or 'duckdb'} in {added.seconds:.1f} s (a {added.kind} run "
           "is read at item grain: the app fetches its rows on first use)")
    print(f"added {_safe(added.name)} ({added.kind}, {added.rows:,} rows, {models} "
          f"model{'s' * (models != 1)}) to {_safe(folder)} as {_safe(added.path.name)}; "
          f"{how}", file=sys.stderr)
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "workspace", help="manage a workspace's saved runs (add a run too big to upload)")
    actions = parser.add_subparsers(dest="action", required=True)
    add = actions.add_parser(
        "add", help="add a Parquet file or a folder of Parquet files, validated and reduced "
                    "by an engine, without loading its rows")
    add.add_argument("path", metavar="FILE|FOLDER")
    add.add_argument("--workspace", metavar="DIR", default=None,
                     help="the workspace folder (default $KBENCH_WORKSPACE), as given to "
                          "kbench app --workspace")
    add.add_argument("--name", default=None, help="the run's name (default: the file's)")
    add.add_argument("--engine", choices=("duckdb", "spark"), default=None,
                     help="the engine that validates and reduces the run (default duckdb)")
    add.add_argument("--spark-master", metavar="URL", default=None,
                     help="--engine spark: the master (default local[*]; SPARK_REMOTE=sc://... "
                          "for Spark Connect)")
    add.set_defaults(run=lambda args, parser: workspace_add(
        args.path, workspace=args.workspace, name=args.name, engine=args.engine,
        spark_master=args.spark_master))
