"""Runs queried by an engine: the same metrics from embedded DuckDB or Spark, on runs that need
not fit in memory (`docs/architecture.md`, "Reductions and engines"; `docs/scale.md`).

Every family's heavy work is a grouped reduction of tidy rows to a small table followed by
arithmetic on that table. This package makes the split explicit:

* :mod:`~kbench_core.engines.source` finds the Parquet files of a source (a file, a folder of
  one kind, or a workspace) and opens them *in place* as an Ibis table on an engine;
* :mod:`~kbench_core.engines.validate` checks every cell with the loader's rules, as Ibis
  aggregate counts, and words the first offending rows with the loader's own messages;
* :mod:`~kbench_core.engines.reduce` declares each family's reduction, written once as an
  engine-neutral Ibis expression, and the finish that turns the small table into the
  validated frame every metric, figure and table of kbench already reads. A run whose
  reduction would be its rows (a judged or replication file: item grain) is fetched in file
  order instead and validated and typed by the loader once
  (:func:`~kbench_core.engines.reduce.typed_rows`);
* such a family computes its tables in the engine from per-cluster sums instead: for
  ``kbench metrics`` (``Family.engine_tables``: :mod:`~kbench_core.engines.judged`, a
  judged run's tiers) or for ``metrics``, ``figures``, ``report`` and ``profile``
  (``Family.engine_run``: :mod:`~kbench_core.engines.replication`, a replication run's ECS
  and PAS from each finding's sums and its effect scatter from a grid).

``memory`` is the loader (:func:`kbench_core.io.load_run`; a folder through
:mod:`~kbench_core.engines.memory`, which checks keys across its files): the reference every
engine must match (1e-9, intervals included; ``tests/test_engines.py``). See
``docs/architecture.md`` ("Reductions and engines") and ``docs/scale.md``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from kbench_core.engines import settings
from kbench_core.stats import check_choice

if TYPE_CHECKING:
    import pyarrow as pa

    from kbench_core.compare import ItemMeans
    from kbench_core.engines.reduce import TypedRows
    from kbench_core.engines.source import ParquetSource
    from kbench_core.io import Run

__all__ = ["ENGINES", "Engine", "EngineMemoryError", "check_engine", "compare_source",
           "connect", "default_engine", "load", "out_of_memory", "reduce_source",
           "shared_backend"]

Engine = Literal["memory", "duckdb", "spark"]
ENGINES: tuple[str, ...] = ("memory", "duckdb", "spark")


def check_engine(engine: str) -> Engine:
    """``engine`` when it is one of :data:`ENGINES`, else ValueError naming it."""
    check_choice("engine", engine, ENGINES)
    return engine  # type: ignore[return-value]


def default_engine(path: str | os.PathLike[str]) -> Engine:
    """``duckdb`` for a Parquet file, a folder of Parquet files or a workspace (queried in
    place), ``memory`` for anything else (CSV, JSON, native formats: the loader reads them)."""
    from kbench_core.engines.source import is_parquet_source

    where = Path(path)
    # A missing path goes to the loader, which names the problem as it always has.
    return "duckdb" if where.exists() and is_parquet_source(where) else "memory"


def spark_session(*, spark_master: str | None = None) -> Any:
    """A SparkSession: Spark Connect when ``SPARK_REMOTE`` is set (and no master is given),
    else ``spark_master`` (default ``local[*]``); the setting checked before Java starts and a
    failure one line (:mod:`kbench_core.engines.spark`)."""
    from kbench_core.engines.spark import session

    return session(spark_master=spark_master)


# DuckDB's own memory for one connection: kbench_core.engines.settings.
DUCKDB_MEMORY = settings.DUCKDB_MEMORY


def _duckdb() -> Any:
    """An in-process DuckDB with :data:`DUCKDB_MEMORY` as its memory limit and a temporary
    folder of its own (removed with the connection: two connections of a server never share
    spill files)."""
    import shutil
    import tempfile
    import weakref

    import ibis

    spill = tempfile.mkdtemp(prefix="kbench-duckdb-")
    backend = ibis.duckdb.connect(memory_limit=DUCKDB_MEMORY, temp_directory=spill)
    weakref.finalize(backend, shutil.rmtree, spill, True)
    return backend


def connect(engine: Engine, *, spark_master: str | None = None, session: Any = None) -> Any:
    """An Ibis backend for ``engine``: an in-process DuckDB (nothing to start; its memory
    bounded by ``KBENCH_DUCKDB_MEMORY``, default 512MB, beyond which it spills to a temporary
    folder), or PySpark (``session`` if given, else :func:`spark_session`). ``memory`` has no
    backend (the loader is the in-memory path): ValueError."""
    import ibis

    check_engine(engine)
    if engine == "duckdb":
        return _duckdb()
    if engine == "spark":
        return ibis.pyspark.connect(session or spark_session(spark_master=spark_master))
    raise ValueError("the memory engine has no Ibis backend: it is kbench_core.io.load_run")


_SPARK: dict[str | None, Any] = {}  # one Spark backend per master for the process (the app)


def shared_backend(engine: Engine, *, spark_master: str | None = None) -> Any:
    """A backend for one query of the app: a new in-process DuckDB (a connection is not
    shared between the threads of a server's sessions), or the process's one Spark backend
    per ``spark_master`` (its JVM starts once)."""
    if engine == "spark":
        if spark_master not in _SPARK:
            _SPARK[spark_master] = connect("spark", spark_master=spark_master)
        return _SPARK[spark_master]
    return connect(engine)


def reduce_source(src: ParquetSource, *, engine: Engine, spark_master: str | None = None,
                  backend: Any = None) -> pa.Table | TypedRows:
    """The validated sufficient table of one source (:func:`load` without the finish): the
    engine reduces the rows (:func:`~kbench_core.engines.reduce.reduction`) and checks every
    cell (:func:`~kbench_core.engines.validate.validate`, the loader's error if one fails);
    a run at item grain is fetched and validated and typed by the loader once
    (:func:`~kbench_core.engines.reduce.typed_rows`: its rows, as the loader's frame).

    The app keeps this small table per saved run (``kbench_core.workspace``) and finishes
    it in Python, so a widget change never queries the engine again. ``backend``: an Ibis
    backend to use, else :func:`shared_backend`."""
    chosen = check_engine(engine)
    if backend is None and chosen == "spark":
        backend = shared_backend(chosen, spark_master=spark_master)
    return _sufficient(src, engine=chosen, backend=backend)


class _DuckdbScan:
    """What :func:`source.check_read` is told read a file at item grain with no backend
    given: DuckDB's own scan (:func:`~kbench_core.engines.reduce.typed_rows`)."""

    name = "duckdb"


_DUCKDB = _DuckdbScan()


def _read_errors() -> tuple[type[BaseException], ...]:
    """What an engine raises on a file it cannot read (DuckDB's errors, Arrow's, Spark's and
    the JVM's): the run's error, not an unexpected one."""
    import duckdb
    import pyarrow as pa

    found: list[type[BaseException]] = [duckdb.Error, pa.ArrowException, OSError]
    try:
        from py4j.protocol import Py4JJavaError
        from pyspark.errors import PySparkException
    except ImportError:  # pragma: no cover - pyspark is in the spark and test extras
        pass
    else:
        found += [Py4JJavaError, PySparkException]
    return tuple(found)


class EngineMemoryError(RuntimeError):
    """An engine ran out of its memory (DuckDB past ``KBENCH_DUCKDB_MEMORY``, a Spark JVM
    out of heap, this process out of memory): the message names the engine, the run and
    the setting to change. A RuntimeError, so every command prints it as one line."""


def out_of_memory(exc: BaseException, engine: str, label: str) -> EngineMemoryError | None:
    """The :class:`EngineMemoryError` ``exc`` stands for, or None when it is not one: DuckDB's
    ``OutOfMemoryException``, a Java ``OutOfMemoryError`` (heap space, GC overhead) reported
    through Py4J or Spark Connect, or Python's ``MemoryError``."""
    name = type(exc).__name__
    text = str(exc)
    if name == "OutOfMemoryException" or (engine == "duckdb" and "Out of Memory Error" in text):
        return EngineMemoryError(
            f"{label}: DuckDB ran out of memory (its limit is {DUCKDB_MEMORY}, beyond which "
            f"it spills to disk; what it could not spill did not fit): set "
            f"KBENCH_DUCKDB_MEMORY to more (e.g. KBENCH_DUCKDB_MEMORY=2GB) and run again")
    if "java.lang.OutOfMemoryError" in text or "OutOfMemoryError" in name or (
            engine == "spark" and ("Java heap space" in text
                                   or "GC overhead limit exceeded" in text)):
        return EngineMemoryError(
            f"{label}: Spark ran out of Java heap ({text.strip().splitlines()[0][:120]}): "
            "give the driver more (KBENCH_SPARK_MEMORY=4g, Spark's spark.driver.memory, for a "
            "driver kbench starts) or the executors (spark.executor.memory in the cluster's "
            "spark-defaults.conf), and run again")
    if isinstance(exc, MemoryError):
        return EngineMemoryError(
            f"{label}: this process ran out of memory reading what the engine returned "
            f"({engine}); free memory, or lower KBENCH_DUCKDB_MEMORY so the engine leaves "
            "more to kbench, and run again")
    return None


def _sufficient(src: ParquetSource, *, engine: Engine, backend: Any,
                keep: tuple[str, ...] = ()) -> pa.Table | TypedRows:
    """:func:`_read`, a file the engine cannot read (a footer that lies about its pages, a
    damaged page) refused as the loader refuses one, naming it: "cannot read Parquet"; an
    engine out of memory is an :class:`EngineMemoryError` naming the setting to change."""
    with _named(src, engine):  # re-raises every error, worded
        return _read(src, engine=engine, backend=backend, keep=keep)


def _read(src: ParquetSource, *, engine: Engine, backend: Any,
          keep: tuple[str, ...] = ()) -> pa.Table | TypedRows:
    """The validated sufficient table of ``src`` on ``backend`` (None: a new DuckDB).

    A run at item grain (:func:`~kbench_core.engines.reduce.at_item_grain`: its reduction
    would be its rows, a judged or a replication run) is fetched in file order and
    validated and typed by the loader once (:func:`~kbench_core.engines.reduce.typed_rows`);
    any other is reduced by the engine and checked by it, the rows staying in the engine."""
    from kbench_core.engines import reduce, source, validate

    if reduce.at_item_grain(src, keep):
        rows = reduce.typed_rows(src, backend=backend)
        # the file read is the file hashed (the provenance's SHA-256), or the run is refused
        source.check_read(src, backend if backend is not None else _DUCKDB)
        return rows
    if backend is None:
        backend = connect(engine)
    table = source.open_table(backend, src)
    # The reduction first: its tuples hold every value of the columns it keeps, so the
    # validation checks those on them, and it counts the bad cells of the columns it leaves
    # out in the same pass (the rows are read once, and once more for the keys).
    kept = reduce.read_columns(src.kind, list(table.columns), keep)
    reduced = reduce.reduction(table, src.kind, tuple(f.name for f in src.files), keep=keep,
                               checks=lambda rows: validate.row_checks(rows, src, kept)
                               ).to_pyarrow()
    reduced, others_clean = validate.checked_clean(reduced)
    validate.validate(table, src, reduced, others_clean=others_clean)
    source.check_read(src, backend)
    return reduced


def compare_source(path: str | os.PathLike[str], value: str, *, engine: Engine,
                   cluster: str | None = None, spark_master: str | None = None,
                   backend: Any = None, options: dict[str, Any] | None = None,
                   ) -> tuple[Run, ItemMeans | None] | None:
    """What ``kbench compare`` reads of a run its engine reduces, bounded by the items
    table, not the rows: ``(run, items)``, ``run`` the validated run and ``items`` the
    items × models table of ``value`` made by the engine
    (:func:`~kbench_core.engines.items.item_means`: the per-item comparison of a number
    column, e.g. a bias run's ``score`` paired by trial, or of a per-item column the family
    writes in the engine, a replication run's ``abs_diff`` paired by test, a judged run's
    ``correct`` by sample and prompt type under the judge ``options`` choose), None when
    ``value`` is compared on the run's per-item table (the bias effect per bias: ``run`` is
    then the weighted sufficient table, :func:`load` with ``weighted=True``). A judged
    ``run`` records the judge chosen in ``run.meta["compared_as"]``; a judge option that does
    not fit the run is a ValueError naming its judges.

    None when the path is not one run of a weighted family (:data:`reduce.WEIGHTED`) or of
    one with ``engine_items``, or ``value`` is neither one of its per-item values nor a
    number column of the run: the command reads the rows as before (its checks and
    messages)."""
    from kbench_core import families
    from kbench_core.engines import items, reduce, source

    chosen = check_engine(engine)
    found = source.sources(Path(path))
    if len(found) != 1 or not families.is_registered(found[0].kind):
        return None
    src = found[0]
    family = families.get(src.kind)
    if src.kind not in reduce.WEIGHTED and family.engine_items is None:
        return None
    comparison = family.comparison
    per_run = {c for _, c in comparison.values} if comparison is not None else set()
    numbers = items.number_columns(src)
    if value not in per_run and value not in numbers:
        return None
    con = backend
    if con is None:
        con = (shared_backend(chosen, spark_master=spark_master) if chosen == "spark"
               else connect(chosen))
    if src.kind not in reduce.WEIGHTED:
        return _items_run(src, family, value, cluster=cluster, engine=chosen, backend=con,
                          options=options)
    run = reduce.finish(_sufficient(src, engine=chosen, backend=con), src, weighted=True)
    if value in per_run:
        return run, None
    with _named(src, chosen):
        table = source.open_table(con, src)
        means = items.item_means(table, src, value, cluster=cluster)
        source.check_read(src, con)
    if means is None:
        return None
    return run, means


def _items_run(src: ParquetSource, family: Any, value: str, *, cluster: str | None,
               engine: Engine, backend: Any, options: dict[str, Any] | None,
               ) -> tuple[Run, ItemMeans] | None:
    """:func:`compare_source` of a run at item grain whose family writes its per-item
    columns in the engine (``Family.engine_items``, which validates the run): its items ×
    models table of ``value`` grouped there, and a :class:`~kbench_core.io.SummedRun`
    carrying its name, kind, provenance and what was chosen (no row, no table). None when
    the engine cannot read its columns as the loader does or a key has too many labels to
    map: the command reads the rows."""
    import pandas as pd

    from kbench_core.engines import items, source
    from kbench_core.io import SummedRun

    with _named(src, engine):
        table = source.open_table(backend, src)
        made = family.engine_items(table, src, value, options)
        if made is None:
            return None
        derived, recorded = made
        if value not in derived.columns:
            return None
        means = items.item_means(derived, src, value, cluster=cluster)
        source.check_read(src, backend)
    if means is None:
        return None
    # the rows from the files' footers: a count over the rows read them once more
    meta = {**src.meta, "rows": source.parquet_rows(src),
            "models": sorted(map(str, means.models)), "columns": list(src.columns),
            "compared_as": recorded}
    return SummedRun(name=src.name, kind=src.kind, frame=pd.DataFrame(), meta=meta), means


@contextlib.contextmanager
def _named(src: ParquetSource, engine: str) -> Iterator[None]:
    """An engine's failure worded for the user, around reading a run (:func:`_sufficient`) or
    a query after it was validated: out of memory named with its setting, anything else
    "cannot read Parquet"."""
    from kbench_core.problems import Problem, RunFormatError

    try:
        yield
    except RunFormatError:
        raise
    except (*_read_errors(), MemoryError) as exc:
        named = out_of_memory(exc, engine, src.label)
        if named is not None:
            raise named from None
        raise RunFormatError(src.label, [Problem(None, None, (
            f"cannot read Parquet ({engine}: {type(exc).__name__}: "
            f"{str(exc).strip()[:300]})"))]) from None


@contextlib.contextmanager
def guarded(src: ParquetSource, backend: Any, rows: int,
            setting: str = "KBENCH_JUDGED_CELLS_ROWS") -> Iterator[None]:
    """A later query of a run kept in the engine (a :class:`~kbench_core.io.SummedRun`'s
    table computed when read), worded as its first read is: an engine out of memory named
    with both ways out (a larger memory setting, or fetching the ``rows`` from ``setting``'s
    count on: :func:`~kbench_core.engines.settings.fetch_instead`), anything else "cannot read
    Parquet"; the files re-checked after it (:func:`~kbench_core.engines.source.check_read`)."""
    from kbench_core.engines import source

    try:
        with _named(src, getattr(backend, "name", "duckdb")):
            yield
    except EngineMemoryError as err:
        raise EngineMemoryError(settings.fetch_instead(err, rows, setting)) from None
    source.check_read(src, backend)


def load(path: str | os.PathLike[str], *, engine: Engine | None = None,
         spark_master: str | None = None, backend: Any = None,
         keep: tuple[str, ...] | list[str] = (), weighted: bool = False,
         summed: bool = False) -> list[Run]:
    """The runs of ``path`` as validated :class:`~kbench_core.io.Run` objects.

    ``engine`` (default :func:`default_engine`): ``memory`` loads with the loader; ``duckdb``
    and ``spark`` query the Parquet files in place, validate them by the engine
    (:func:`~kbench_core.engines.validate.validate`), reduce them to the family's sufficient
    table (:func:`~kbench_core.engines.reduce.reduction`) and finish from it
    (:func:`~kbench_core.engines.reduce.finish`); a file at item grain (a judged or
    replication run, whose reduction would be its rows) is fetched by the engine and
    validated and typed by the loader once (:func:`~kbench_core.engines.reduce.typed_rows`).
    ``backend``: an Ibis backend to reuse (a
    test's SparkSession). ``keep``: columns to keep beyond those the family's metrics read
    (``compare`` keeps its item keys, e.g. a bias trial's number). A workspace gives one run
    per saved run, a file or a folder one. ``weighted``: a weighted frame for the main table
    only (:func:`~kbench_core.engines.reduce.finish`; ``kbench metrics``). ``summed``: a
    path of one run whose family computes its tables in the engine (``Family.engine_run``:
    a replication run; a judged run from ``KBENCH_JUDGED_RUN_ROWS`` rows on, when set) gives that
    :class:`~kbench_core.io.SummedRun`, no row fetched.
    """
    from kbench_core import families
    from kbench_core.engines import reduce, source

    chosen = check_engine(engine or default_engine(path))
    if chosen == "memory":
        from kbench_core.engines.memory import load_in_memory

        return load_in_memory(Path(path))
    sources = source.sources(Path(path))
    con = backend
    if con is None and chosen == "spark":
        con = connect(chosen, spark_master=spark_master)
    runs = []
    for src in sources:
        family = families.get(src.kind)
        hook = family.engine_run
        if summed and len(sources) == 1 and hook is not None:
            if con is None:
                con = connect(chosen)
            try:
                with _named(src, chosen):
                    found = hook(src, con)
            except EngineMemoryError as err:
                if family.engine_run_setting is None:
                    raise
                raise EngineMemoryError(settings.fetch_instead(
                    err, source.parquet_rows(src), family.engine_run_setting)) from None
            if found is not None:  # else its columns need the loader: read as below
                runs.append(found)
                continue
        if con is None and not reduce.at_item_grain(src, tuple(keep)):
            con = connect(chosen)  # one DuckDB for the sources it reduces
        reduced = _sufficient(src, engine=chosen, backend=con, keep=tuple(keep))
        runs.append(reduce.finish(reduced, src, weighted=weighted))
    return runs
