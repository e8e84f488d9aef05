"""``--engine`` and ``--spark-master`` for the commands that read runs (``metrics``,
``figures``, ``compare``, ``report``, ``profile``): the arguments and the loading they choose."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from kbench_core.engines import ENGINES, default_engine, load
from kbench_core.problems import RunFormatError

__all__ = ["add_arguments", "engine_main_tables", "load_all"]


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
             weighted: bool = False, summed: bool = False) -> list:
    """The runs of ``paths``: each through ``engine`` (default: per path,
    :func:`~kbench_core.engines.default_engine`), a problem as the command's exit message.
    ``keep``: columns the reduction must keep beyond the family's metrics (``compare``'s
    item keys); ``weighted``: frames for the main table only (``metrics``); ``summed``: a
    Parquet source read by DuckDB or Spark whose family computes its tables in the engine
    (``Family.engine_run``: a replication run; a judged run from ``KBENCH_JUDGED_RUN_ROWS``
    rows on, when set) comes back as that :class:`~kbench_core.io.SummedRun`, no row fetched
    (``metrics``, ``figures``, ``report``, ``profile``, whose every item and row it
    finishes)."""
    runs = []
    connected = None
    for path in paths:
        chosen = engine or default_engine(path)
        try:
            if chosen == "spark" and connected is None:
                from kbench_core.engines import connect

                connected = connect("spark", spark_master=spark_master)
            runs.extend(load(path, engine=chosen, backend=connected if chosen == "spark"
                             else None, keep=keep, weighted=weighted,
                             summed=summed))
        except RunFormatError as err:
            raise SystemExit(f"kbench: {err}") from None
        except (FileNotFoundError, RuntimeError, ValueError) as err:
            raise SystemExit(f"kbench: {err}") from None
    return runs


def engine_main_tables(path: str, *, engine: str | None = None,
                       spark_master: str | None = None, options: dict | None = None,
                       ) -> tuple[object, list, dict] | None:
    """``kbench metrics`` of a Parquet source on an engine whose family computes its main
    tables there (``Family.engine_tables``: a judged run's tiers from the cells the engine
    sums, a replication run's ECS from its findings' moments; no answer comes back): the run
    (its name and provenance, no frame), the tables and what an export records of the
    options. None when the path is not one such source read by DuckDB or Spark, has fewer
    rows than its family's ``engine_tables_rows`` (judged: ``KBENCH_JUDGED_CELLS_ROWS``;
    fetched, faster), or the family says its columns need the loader (it reads the run, as
    before)."""
    from pathlib import Path

    import pandas as pd

    from kbench_core import engines, families
    from kbench_core.engines import connect, settings, source

    chosen = engine or default_engine(path)
    if chosen == "memory":
        return None
    try:
        sources = source.sources(Path(path))
        if len(sources) != 1:
            return None
        (src,) = sources
        family = families.get(src.kind)
        if family.engine_tables is None:
            return None
        rows = source.parquet_rows(src)
        if family.engine_tables_rows is not None and rows < family.engine_tables_rows():
            return None  # small enough to fetch: faster than the cells (engines.settings)
        backend = connect(chosen, spark_master=spark_master)  # type: ignore[arg-type]
        # an engine out of memory named with the setting to change, as every engine query
        with engines._named(src, chosen):
            found = family.engine_tables(src, backend, options)
    except engines.EngineMemoryError as err:
        if family.engine_tables_rows is None:
            raise SystemExit(f"kbench: {err}") from None
        raise SystemExit(f"kbench: {settings.fetch_instead(err, rows)}") from None
    except RunFormatError as err:
        raise SystemExit(f"kbench: {err}") from None
    except (FileNotFoundError, RuntimeError, ValueError) as err:
        raise SystemExit(f"kbench: {err}") from None
    if found is None:
        return None
    from kbench_core.io import Run

    tables, provenance = found
    run = Run(name=src.name, kind=src.kind, frame=pd.DataFrame(), meta=dict(src.meta),
              warnings=())
    return run, tables, provenance
