"""``--engine`` and ``--spark-master`` for the commands that read runs (``metrics``,
``figures``, ``compare``, ``report``, ``profile``): the arguments and the loading they choose."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from kbench_core.engines import ENGINES, default_engine, load
from kbench_core.problems import RunFormatError

__all__ = ["add_arguments", "load_all"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--engine`` and ``--spark-master`` to a command's parser."""
    parser.add_argument(
        "--engine", choices=ENGINES, default=None,
        help="where the rows are reduced: memory (the loader), duckdb (embedded; the default "
             "for a Parquet file, a folder of Parquet files or a workspace) or spark")
    parser.add_argument(
        "--spark-master", metavar="URL", default=None,
        help="--engine spark: the master (default local[*]; SPARK_REMOTE=sc://... for "
             "Spark Connect)")


def load_all(paths: Sequence[str], *, engine: str | None = None,
             spark_master: str | None = None, keep: Sequence[str] = (),
             weighted: bool = False) -> list:
    """The runs of ``paths``: each through ``engine`` (default: per path,
    :func:`~kbench_core.engines.default_engine`), a problem as the command's exit message.
    ``keep``: columns the reduction must keep beyond the family's metrics (``compare``'s
    item keys); ``weighted``: frames for the main table only (``metrics``)."""
    runs = []
    connected = None
    for path in paths:
        chosen = engine or default_engine(path)
        try:
            if chosen == "spark" and connected is None:
                from kbench_core.engines import connect

                connected = connect("spark", spark_master=spark_master)
            runs.extend(load(path, engine=chosen, backend=connected if chosen == "spark"
                             else None, keep=keep, weighted=weighted))  # type: ignore[arg-type]
        except RunFormatError as err:
            raise SystemExit(f"kbench: {err}") from None
        except (FileNotFoundError, RuntimeError) as err:
            raise SystemExit(f"kbench: {err}") from None
    return runs
