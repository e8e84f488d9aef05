"""The tiers' per-cluster cells of a judged run summed in the engine (:class:`EngineCells`):
the answers :func:`kbench_core.engines.judged.answers` chose, turned into the 0/1 flags,
counts and values :mod:`kbench_core.vuln.cells` sums per (group × sample) cell, so only the
cells come back to Python (issue 39). Split from :mod:`kbench_core.engines.judged`, which
re-exports :class:`EngineCells`."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from kbench_core.agreement._labels import ITEM_KEY, REASONING
from kbench_core.engines.fetch import bounded
from kbench_core.engines.judged_stats import _NULL_KEY, EngineStats, _key_text
from kbench_core.schema import FINDING_COUNTS
from kbench_core.vuln.cells import CellSource

if TYPE_CHECKING:
    from kbench_core.engines.judged import Answers

__all__ = ["EngineCells", "bounded", "cached", "kept_answers", "parts_of",
           "sample_part"]

_PLACE = "__kbench_place"  # the answers' file order, a column engines.judged adds
# why a judged run's cells or bins can pass the size limit (engines.fetch.bounded)
_PER_SAMPLE = "its samples are too many for these per-sample sums"


def _quantities(answers: Any) -> Any:
    """Per answer, the 0/1 flags, counts and values the tiers sum
    (:mod:`kbench_core.vuln.cells`), as :func:`kbench_core.vuln._prepare._answers` reads them
    from a frame: a failed judgement (verdict, found or ground truth missing) is counted,
    never summed; a safe contract has no target to find."""
    import ibis

    from kbench_core.schema import SEVERITIES, TYPE_MATCHES
    from kbench_core.vuln.cells import SEVERITY_LEVELS
    from kbench_core.vuln.definitions import OVERCONFIDENT_ABOVE, UNDERCONFIDENT_BELOW

    cols = set(answers.columns)
    false = ibis.literal(False)
    v_raw, s_raw, f_raw = (answers["is_vulnerable"], answers["said_vulnerable"],
                           answers["target_found"])
    failed = v_raw.isnull() | s_raw.isnull() | f_raw.isnull()
    v, s = v_raw.fill_null(False), s_raw.fill_null(False)
    found = f_raw.fill_null(False) & v
    kept = ~failed
    tm = (answers["type_match"].strip().lower() if "type_match" in cols
          else ibis.null("string"))
    known_tm = tm.isin(list(TYPE_MATCHES)).fill_null(False)
    partial = found & (tm == "partial").fill_null(False)
    if "partial_found" in cols:
        partial = partial | (found & answers["partial_found"].fill_null(False))
    zero = ibis.literal(0.0)
    counts = {name: (answers[name].cast("float64").fill_null(0.0) if name in cols else zero)
              for name in FINDING_COUNTS}
    findings = sum(counts.values(), zero)
    valid = counts["n_target_match"] + counts["n_partial_match"] + counts["n_bonus_valid"]
    conf = (answers["confidence"].cast("float64") if "confidence" in cols
            else ibis.null("float64"))
    stated = conf.notnull()
    correct = v == s
    high = stated & (conf > OVERCONFIDENT_ABOVE).fill_null(False)
    low = stated & (conf < UNDERCONFIDENT_BELOW).fill_null(False)
    typed = found & known_tm
    flags = {"n": ibis.literal(True), "said": s, "vulnerable": v, "tp": v & s, "fp": ~v & s,
             "fn": v & ~s, "tn": ~v & ~s, "correct": correct, "found": found,
             "partial": partial, "lucky": v & s & ~found,
             "bonus": valid > found.cast("float64"), "typed": typed,
             "exact": typed & (tm == "exact").fill_null(False),
             "semantic": typed & tm.isin(["exact", "semantic"]).fill_null(False),
             "partial_match": typed & (tm == "partial").fill_null(False),
             "stated": stated, "high": high, "over": high & ~correct, "low": low,
             "under": low & correct}
    out: dict[str, Any] = {f"f__{k}": val.cast("int8") for k, val in flags.items()}
    for name in ("n_target_match", "n_partial_match", "n_bonus_valid", "n_hallucinated"):
        out[f"c__{name}"] = counts[name]
    out["c__findings"] = findings
    values = {"invalid": (findings - valid, ibis.literal(True))}
    for name in REASONING:
        x = answers[name].cast("float64") if name in cols else ibis.null("float64")
        values[name] = (x, found & x.notnull())
    values["brier"] = ((conf - correct.cast("float64")) ** 2, stated)
    if {"claimed_lines", "true_lines"} <= cols:
        claimed = answers["claimed_lines"].split(";").map(lambda p: p.cast("int64"))
        true = answers["true_lines"].split(";").map(lambda p: p.cast("int64"))
        size = true.unique().length()
        overlap = ibis.ifelse(found & answers["claimed_lines"].notnull()
                              & answers["true_lines"].notnull() & (size > 0),
                              claimed.intersect(true).length().cast("float64")
                              / size.cast("float64"), ibis.null("float64"))
        values["location"] = (overlap, overlap.notnull())
    else:
        values["location"] = (ibis.null("float64"), false)
    for name, (x, used) in values.items():
        out[f"m__{name}"] = ibis.ifelse(used.fill_null(False), x, ibis.null("float64"))
    if "severity" in cols:
        level = answers["severity"]
        for i, name in enumerate(SEVERITY_LEVELS):
            mine = (level.isnull() | ~level.isin(list(SEVERITIES))) if name is None \
                else (level == name).fill_null(False)
            out[f"s__vulnerable@{i}"] = (v & mine).cast("int8")
            out[f"s__found@{i}"] = (found & mine).cast("int8")
            out[f"s__partial@{i}"] = (partial & mine).cast("int8")
    keys = [c for c in answers.columns if c in (*ITEM_KEY, "difficulty")]
    return answers.select(*keys, __kbench_kept=kept, __kbench_conf=conf,
                          __kbench_correct=correct.cast("float64"), **out)


def _cell_measures(q: Any, severity: bool) -> dict[str, Any]:
    """The per-cell sums of :func:`_quantities` (kept answers), and the failed ones."""
    from kbench_core.vuln.cells import COUNTS, FLAGS, MOMENTS, SEVERITY_SUMS, moment_names

    # A flag's sum is a filtered count: an 8-byte state per group where a sum of integers
    # keeps a 128-bit one (the cells of 3M judged rows ran out of DuckDB's 512 MB). Counts
    # come back as 32-bit integers: half the bytes of the 40 count columns fetched and held
    # (1.1M cells of 10M judged rows: 614 -> 381 MiB fetched, 500 -> 322 MiB of sums); the
    # cast fails in the engine, never wraps, past 2^31 answers in one cell.
    kept = q["__kbench_kept"]

    def counted(where: Any) -> Any:
        return q.count(where=where).cast("int32")

    out: dict[str, Any] = {"__kbench_failed": counted(~kept)}
    for name in FLAGS:
        out[name] = counted(kept & (q[f"f__{name}"] == 1))
    for name in COUNTS:
        out[name] = q[f"c__{name}"].sum(where=kept)
    for name in MOMENTS:
        total, count, m2 = moment_names(name)
        x = q[f"m__{name}"]
        used = kept & x.notnull()
        out[total] = x.sum(where=used)
        out[count] = counted(used)
        out[m2] = x.var(how="pop", where=used) * out[count]
    if severity:
        for name in SEVERITY_SUMS:
            out[name] = counted(kept & (q[f"s__{name}"] == 1))
    return out


def _text_codes(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Codes of text values in their sorted order (missing last) and the distinct values
    (one hash of every value, then a sort of the distinct ones: no loop over the cells)."""
    missing = values.isna().to_numpy()
    found, distinct = pd.factorize(pd.Series(values[~missing].astype(str).to_numpy(
        dtype=object)), sort=True)
    codes = np.full(len(values), len(distinct), dtype=np.int64)
    codes[~missing] = found
    return codes, np.append(np.asarray(distinct, dtype=object), None)


def _filled_numbers(column: Any) -> np.ndarray:
    """An Arrow column of sums as numbers, a missing or NaN sum 0 (pandas' ``fillna(0.0)``):
    counts as 32-bit integers (:func:`_cell_measures` casts them so), other sums as
    floats."""
    import pyarrow as pa

    if pa.types.is_integer(column.type):
        return np.asarray(column.fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int32)
    values = np.asarray(column.to_numpy(zero_copy_only=False), dtype=float)
    return np.where(np.isnan(values), 0.0, values)


def _grouped(frame: pd.DataFrame, by: tuple[str, ...],
             ) -> tuple[np.ndarray, dict[str, np.ndarray], int]:
    """Dense group codes of a fetched table's rows (groups in the keys' text order, missing
    last) and each key's value per group."""
    if not by:
        return np.zeros(len(frame), dtype=np.int64), {}, 1
    combined = np.zeros(len(frame), dtype=np.int64)
    parts = []
    for column in by:
        codes, labels = _text_codes(frame[column])
        combined = combined * len(labels) + codes
        parts.append(labels)
    unique, gid = np.unique(combined, return_inverse=True)
    keys: dict[str, np.ndarray] = {}
    rest = unique.copy()
    for column, labels in zip(reversed(by), reversed(parts), strict=True):
        keys[column] = labels[rest % len(labels)]
        rest = rest // len(labels)
    return gid.ravel().astype(np.int64), {c: keys[c] for c in by}, int(unique.size)


def _remote(expr: Any) -> bool:
    """Whether ``expr`` runs on a Spark Connect session, where Ibis' cache cannot be used
    (it asserts ``is_cached``, which a Connect frame does not report): there every query
    computes the answers from the rows again (the numbers are the same)."""
    from ibis.common.exceptions import IbisError

    try:
        session = getattr(expr._find_backend(), "_session", None)
    except IbisError:  # an expression without one backend: nothing to ask
        return False
    return session is not None and type(session).__module__.startswith("pyspark.sql.connect")


def _duckdb_of(expr: Any) -> Any:
    """The DuckDB backend ``expr`` runs on, else None (Spark, or no single backend)."""
    from ibis.common.exceptions import IbisError

    try:
        backend = expr._find_backend()
    except IbisError:  # no single backend (an in-memory table)
        return None
    return backend if getattr(backend, "name", None) == "duckdb" else None


@contextlib.contextmanager
def _unordered(backend: Any) -> Iterator[None]:
    """DuckDB writing tables with insertion order not preserved (``preserve_insertion_order``,
    for the statements inside only): kept, DuckDB holds a whole result in memory to write it
    in order, and nothing reads kbench's tables in order (every reader groups them, joins
    them on their key or orders them)."""
    backend.raw_sql("SET preserve_insertion_order = false")
    try:
        yield
    finally:
        backend.raw_sql("RESET preserve_insertion_order")


def cached(expr: Any) -> Any:
    """``expr`` materialised in its engine (Ibis' ``cache``: a temporary table on DuckDB, a
    cached frame on Spark), in no particular row order (:func:`_unordered`)."""
    backend = _duckdb_of(expr)
    if backend is None:
        return expr.cache()
    with _unordered(backend):
        return expr.cache()


def _kept(parts: list[Any]) -> tuple[Any, Callable[[], None]]:
    """The rows of ``parts`` (expressions of one schema, several only on DuckDB:
    :func:`parts_of`) materialised in their engine, and how to drop them: one part cached
    (:func:`cached`), several written one after another (:func:`_kept_in_parts`)."""
    if len(parts) > 1:
        return _kept_in_parts(parts)
    kept = cached(parts[0])
    return kept, kept.release


def _kept_in_parts(parts: list[Any]) -> tuple[Any, Callable[[], None]]:
    """The rows of ``parts`` (expressions of one schema on one DuckDB) written one part at a
    time into one temporary table (:func:`_unordered`), and how to drop it. Each part's query
    (a majority's group-by of its rows) holds its own rows only: 10M judged rows' majority
    at once ran out of DuckDB's 512 MB."""
    import uuid

    backend = _duckdb_of(parts[0])
    name = f"kbench_parts_{uuid.uuid4().hex}"
    with _unordered(backend):
        try:
            backend.create_table(name, parts[0], temp=True)
            for part in parts[1:]:
                backend.insert(name, part)
        except BaseException:
            with contextlib.suppress(Exception):  # the engine's own error is the one to name
                backend.drop_table(name, force=True)
            raise
    return backend.table(name), lambda: backend.drop_table(name, force=True)


def kept_answers(chosen: Answers, rows: int) -> tuple[Any, Callable[[], None]]:
    """``chosen``'s answers materialised in the engine, and how to drop them: on DuckDB, for a
    run of ``rows`` rows, made in :func:`parts_of` parts of the samples (each part's group-by
    within DuckDB's memory); else cached whole."""
    return _kept(chosen.parts(parts_of(chosen.expr, rows)))


def sample_part(table: Any, i: int, n: int) -> Any:
    """The rows of ``table`` whose sample falls in part ``i`` of ``n`` (by a hash of its
    text: every row of one sample in the same part; a missing sample hashes too)."""
    return table.filter((table["sample"].hash() % n).abs() == i)


def parts_of(expr: Any, rows: int) -> int:
    """Into how many parts of its samples the engine's work on a judged run of ``rows`` rows
    is split (:func:`sample_part`): one per
    ``KBENCH_DUCKDB_PART_ROWS`` rows on DuckDB (its hash tables bounded by its memory
    limit), one on Spark (which spills its own)."""
    from kbench_core.engines.settings import DUCKDB_PART_ROWS

    if rows <= DUCKDB_PART_ROWS or _duckdb_of(expr) is None:
        return 1
    return -(-rows // DUCKDB_PART_ROWS)


class EngineCells(CellSource):
    """:class:`kbench_core.vuln.cells.CellSource` of one judge's (or the majority's)
    answers computed by the engine (:func:`answers`): every table the tiers read is a
    group-by in the engine, and only per-cell sums come back (:meth:`cells`: per group ×
    sample; :meth:`bins`: per group × bin × sample), never an answer. Equal-mass bins have
    their edges computed in the engine first (the order statistics each edge interpolates,
    fetched by rank), and only their bootstrap fetches the answers' confidences (four
    numbers per answer)."""

    def __init__(self, chosen: Answers, *, rows: int = 0) -> None:
        self.chosen = chosen
        self.judge = chosen.judge
        self.columns = chosen.columns
        self._expr = _quantities(chosen.expr.drop(_PLACE))
        # the run's rows (0: unknown): a large run's answers and sums are made in parts
        self._parts = parts_of(self._expr, rows)
        self._kept: Any = None
        self._drop: Callable[[], None] | None = None
        self._cells: dict[tuple[str, ...], Any] = {}
        self._bins: dict[tuple, Any] = {}
        self._difficulty: bool | None = None
        self._samples: dict[tuple[str, ...], list[str]] = {}  # per grouping, coded samples
        # per grouping, the cells held in the engine (and how to drop them) and their
        # per-group statistics (engines.judged_stats); bins whose samples were coded
        # without the cells' list (made again if the cells are fetched: the bootstrap
        # draws both by the same codes)
        self._cell_tables: dict[tuple[str, ...], tuple[Any, Callable[[], None]]] = {}
        self._stats: dict[tuple[str, ...], Any] = {}
        self._own_codes: set[tuple] = set()

    @property
    def _q(self) -> Any:
        """The answers' quantities, materialised in the engine on first use (a temporary
        table on DuckDB, a cached frame on Spark; released with this object): every grouping,
        bin and edge reads them, instead of computing the answers (a majority: a group-by of
        every row) from the rows again; in parts of the samples past
        ``KBENCH_DUCKDB_PART_ROWS`` rows on DuckDB (:func:`parts_of`)."""
        if self._kept is None:
            if _remote(self._expr):
                self._kept = self._expr
            else:
                self._kept, self._drop = _kept(
                    [_quantities(p.drop(_PLACE)) for p in self.chosen.parts(self._parts)])
        return self._kept

    def _sample_parts(self, q: Any) -> list[Any]:
        """``q`` as the parts of its samples its sums are taken in (one group-by of all the
        samples' cells holds them all in DuckDB's hash table)."""
        if self._parts <= 1:
            return [q]
        return [sample_part(q, i, self._parts) for i in range(self._parts)]

    def release(self) -> None:
        """Drop the quantities and cells held in the engine (the next grouping or bin not
        summed yet makes them again); the cells, statistics and bins fetched so far stay."""
        tables, self._cell_tables = self._cell_tables, {}
        for _, drop_cells in tables.values():
            drop_cells()
        self._kept = None
        drop, self._drop = self._drop, None
        if drop is not None:  # none on a Spark Connect session (nothing was cached)
            drop()

    def _cell_table(self, by: tuple[str, ...]) -> Any:
        """The cells of ``by`` (per group × sample, :func:`_cell_measures`) held in the
        engine, made from :attr:`_q` in parts of the samples on first use: what
        :meth:`stats` asks its per-group questions of."""
        if by not in self._cell_tables:
            self._check(by)
            q = self._q
            severity = "severity" in self.columns
            keys = [*by, "sample"]
            parts = [part.group_by(keys).aggregate(**_cell_measures(part, severity))
                     for part in self._sample_parts(q)]
            self._cell_tables[by] = ((parts[0], lambda: None) if _remote(q)
                                     else _kept(parts))
        return self._cell_tables[by][0]

    def stats(self, by: tuple[str, ...]) -> Any:
        """The per-group statistics of the cells of ``by``
        (:class:`kbench_core.engines.judged_stats.EngineStats`): the cells stay in the
        engine and only a row per group comes back, whatever the samples."""
        if by not in self._stats:
            self._check(by)
            self._stats[by] = EngineStats(
                lambda: self._cell_table(by), by, severity="severity" in self.columns,
                grouped=_grouped, coded=lambda frame, groups: _codes_of(
                    frame, by, _key_lookup(groups, by)))
        return self._stats[by]

    def forget(self) -> None:
        """Drop everything summed and held (a caller done with this view: ``kbench metrics``
        keeps one view's cells at a time, about 0.7 GiB each at 370k samples); a later read
        sums again."""
        self.release()
        self._cells.clear()
        self._bins.clear()
        self._samples.clear()
        self._stats.clear()
        self._own_codes.clear()

    def _check(self, by: tuple[str, ...]) -> None:
        unknown = [c for c in by if c not in self.columns]
        if unknown:
            raise ValueError(f"tiers needs the column(s) {', '.join(unknown)}")

    def has_difficulty(self) -> bool:
        if self._difficulty is None:
            q = self._q if "difficulty" in self.columns else None
            self._difficulty = q is not None and bool(
                q.filter(q["difficulty"].notnull()).count().to_pyarrow().as_py())
        return self._difficulty

    def _wanted(self, sums: Sequence[str] | None) -> tuple[str, ...]:
        from kbench_core.vuln.cells import sum_names

        every = sum_names(severity="severity" in self.columns)
        return every if sums is None else tuple(n for n in every if n == "n" or n in sums)

    def has_cells(self, by: tuple[str, ...], sums: Sequence[str] | None = None) -> bool:
        """The cells of ``by`` (with ``sums``, None: every one) are fetched already (no query
        to read them)."""
        return by in self._cells and set(self._wanted(sums)) <= set(self._cells[by].sums)

    def cells(self, by: tuple[str, ...], sums: Sequence[str] | None = None) -> Any:
        """The cells of ``by`` fetched (per group × sample), with only ``sums`` (and ``n``;
        None: every sum): from the cells held in the engine when :meth:`stats` made them,
        else summed from the answers' quantities."""
        from kbench_core.vuln.cells import JudgedCells

        if self.has_cells(by, sums):
            return self._cells[by]
        self._check(by)
        severity = "severity" in self.columns
        wanted = self._wanted(sums)
        keys = [*by, "sample"]
        if by in self._cell_tables:
            held = self._cell_tables[by][0]
            parts = [held.select(*keys, "__kbench_failed", *wanted)]
        else:
            q = self._q
            measures = _cell_measures(q, severity)
            parts = [part.group_by(keys).aggregate(**{
                name: measures[name] for name in ("__kbench_failed", *wanted)})
                for part in self._sample_parts(q)]
        fetched = bounded(parts, f"cells ({' x '.join(keys)})", too_many=_PER_SAMPLE)
        frame = fetched.select([*keys, "__kbench_failed", "n"]).to_pandas()
        gid, values, size = _grouped(frame, by)
        missing = np.bincount(gid, weights=frame["__kbench_failed"].to_numpy(dtype=float),
                              minlength=size).astype(np.int64)
        kept = frame["n"].fillna(0).to_numpy(dtype=float) > 0
        gid = gid[kept]
        sample, names = _text_codes(frame["sample"][kept])
        del frame
        n_samples = len(names) - 1
        self._samples[by] = [str(n) for n in names[:-1]]
        order = np.lexsort((sample, gid))
        rows = np.flatnonzero(kept)[order]  # the kept cells in order, as rows of the table
        sums = {}
        for name in wanted:
            # one column at a time, each released once taken: the fetched table, a frame of
            # it, its kept rows and the sums were held together (1.1M cells: 2 GiB)
            sums[name] = _filled_numbers(fetched.column(name))[rows]
            fetched = fetched.drop_columns([name])
        del fetched
        cells = JudgedCells(keys=values, size=size, missing=missing, group=gid[order],
                            sample=sample[order], n_samples=n_samples, sums=sums,
                            singletons=bool((sums["n"] <= 1).all()), severity=severity)
        self._cells[by] = cells
        for key in [k for k in self._own_codes if k[0] == by]:  # recode by these samples
            self._own_codes.discard(key)
            self._bins.pop(key, None)
        return cells

    def _bins_key(self, by: tuple[str, ...], n_bins: int, binning: str, answers: bool,
                  samples: bool) -> tuple:
        """The key of these bins among those summed: per-sample bins serve a question for
        totals too."""
        key = (by, n_bins, binning, answers and binning == "quantile")
        if not samples and (*key, True) in self._bins:
            return (*key, True)
        return (*key, samples or (answers and binning == "quantile"))

    def bins(self, by: tuple[str, ...], n_bins: int, binning: str, *,
             answers: bool = False, samples: bool = True) -> Any:
        # each choice of bins summed once: the tiers, SUI, lucky guesses and the reliability
        # diagram of one view read the same bins
        key = self._bins_key(by, n_bins, binning, answers, samples)
        if key not in self._bins:
            self._bins[key] = self._summed_bins(by, n_bins, binning, answers=answers,
                                                samples=key[-1])
        return self._bins[key]

    def _summed_bins(self, by: tuple[str, ...], n_bins: int, binning: str, *,
                     answers: bool = False, samples: bool = True) -> Any:
        import ibis

        from kbench_core.vuln.cells import Bins

        cells = self.stats(by)  # the groups' keys and number
        q = self._q
        q = _filled(q.filter(q["__kbench_kept"] & q["__kbench_conf"].notnull()), by)
        size = cells.size
        key_codes = _key_lookup(cells, by)
        if binning == "uniform":
            edges = np.broadcast_to(np.linspace(0.0, 1.0, n_bins + 1), (size, n_bins + 1))
            inner = [float(e) for e in np.linspace(0.0, 1.0, n_bins + 1)[1:-1]]
            bin_of = sum(((q["__kbench_conf"] > e).cast("int64") for e in inner),
                         ibis.literal(0).cast("int64"))
            binned = q.mutate(__kbench_bin=bin_of)
        else:
            edges = self._quantile_edges(q, by, cells, n_bins)
            binned = _binned_by_edges(q, by, edges, key_codes)
        keys = [*by, "sample", "__kbench_bin"] if samples else [*by, "__kbench_bin"]
        table = bounded([part.group_by(keys).aggregate(
            __kbench_count=part.count(),
            __kbench_conf_sum=part["__kbench_conf"].sum(),
            __kbench_correct_sum=part["__kbench_correct"].sum())
            for part in self._sample_parts(binned)],
            f"calibration cells ({' x '.join([*keys[:-1], 'bin'])})",
            too_many=_PER_SAMPLE).to_pandas()
        group = _codes_of(table, by, key_codes)
        # the samples numbered as the cells number them (what the bootstrap draws by), or,
        # the cells not fetched, in the text order of the bins' own samples
        known = self._samples.get(by)
        if not samples:  # a row per (group, bin): only the totals are read
            sample = np.zeros(len(table), dtype=np.int64)
        else:
            if known is None:
                known = sorted(table["sample"].astype(str).unique())
                self._own_codes.add(self._bins_key(by, n_bins, binning, answers, True))
            sample = _sample_codes(table["sample"], known)
        bin_ = table["__kbench_bin"].to_numpy(dtype=np.int64)
        order = np.lexsort((sample, bin_, group))
        fetched = None
        if answers and binning == "quantile":
            rows = q.select(*by, "sample", "__kbench_conf", "__kbench_correct").to_pandas()
            fetched = (_codes_of(rows, by, key_codes), _sample_codes(rows["sample"], known),
                       rows["__kbench_conf"].to_numpy(dtype=float),
                       rows["__kbench_correct"].to_numpy(dtype=float))
        return Bins(n_bins=n_bins, binning=binning, edges=np.asarray(edges, dtype=float),
                    group=group[order], bin=bin_[order], sample=sample[order],
                    count=table["__kbench_count"].to_numpy(dtype=float)[order],
                    confidence_sum=table["__kbench_conf_sum"].to_numpy(dtype=float)[order],
                    correct_sum=table["__kbench_correct_sum"].to_numpy(dtype=float)[order],
                    answers=fetched, per_sample=samples)

    def _quantile_edges(self, q: Any, by: tuple[str, ...], cells: Any,
                        n_bins: int) -> np.ndarray:
        """Equal-mass edges per group, as :func:`kbench_core.calibration.quantile_edges`
        computes them: the answers' ranks by confidence in the engine, only the two order
        statistics each edge interpolates fetched."""
        import ibis

        from kbench_core.calibration.bins import _interpolated_edges

        size = cells.size
        key_codes = _key_lookup(cells, by)
        totals = q.group_by(list(by)).aggregate(__kbench_total=q.count()).to_pandas() \
            if by else pd.DataFrame({"__kbench_total": [q.count().to_pyarrow().as_py()]})
        total = np.zeros(size)
        total[_codes_of(totals, by, key_codes)] = totals["__kbench_total"].to_numpy(float)
        quantiles = np.linspace(0.0, 1.0, n_bins + 1) * 100 / 100
        h = (total[:, None] - 1) * quantiles[None, :]
        prev = np.floor(h)
        gamma = h - prev
        last = total[:, None] - 1
        upper = np.minimum(prev + 1, last)
        lower = np.minimum(prev, last)
        wanted = pd.DataFrame({"__kbench_group": np.repeat(np.arange(size), 2 * (n_bins + 1)),
                               "__kbench_rank": np.concatenate(
                                   [lower, upper], axis=1).ravel()})
        wanted = wanted[wanted["__kbench_rank"] >= 0].drop_duplicates()
        window = ibis.window(group_by=[q[c] for c in by], order_by=q["__kbench_conf"])
        ranked = q.select(*by, __kbench_conf=q["__kbench_conf"],
                          __kbench_rank=ibis.row_number().over(window))
        names = pd.DataFrame({c: _key_text(pd.Series(np.asarray(cells.keys[c], dtype=object)[
            wanted["__kbench_group"].to_numpy()], dtype=object)) for c in by})
        wanted = pd.concat([names.reset_index(drop=True),
                            wanted[["__kbench_rank"]].reset_index(drop=True)], axis=1)
        lookup = ibis.memtable(wanted.astype({"__kbench_rank": "int64"}))
        picked = ranked.join(lookup, [*(ranked[c] == lookup[c] for c in by),
                                      ranked["__kbench_rank"] == lookup["__kbench_rank"]])
        found = picked.select(*by, "__kbench_rank", "__kbench_conf").to_pandas()
        value = np.full((size, int(total.max()) + 1 if total.size else 1), np.nan)
        rows = _codes_of(found, by, key_codes)
        value[rows, found["__kbench_rank"].to_numpy(dtype=np.int64)] = \
            found["__kbench_conf"].to_numpy(dtype=float)
        # _interpolated_edges reads x[lo_index], x[hi_index] of one flat array
        flat = value.ravel()
        width = value.shape[1]
        base = (np.arange(size) * width)[:, None]
        lo_index = (base + np.maximum(lower, 0)).astype(np.int64)
        hi_index = (base + np.maximum(upper, 0)).astype(np.int64)
        if flat.size == 0:
            return np.full((size, n_bins + 1), np.nan)
        return _interpolated_edges(flat, lo_index, hi_index, h, gamma, last, total)


def _filled(table: Any, by: tuple[str, ...]) -> Any:
    return table.mutate(**{c: table[c].fill_null(_NULL_KEY) for c in by}) if by else table


def _key_lookup(cells: Any, by: tuple[str, ...]) -> dict[tuple, int]:
    """The group code of each tuple of key values (missing as None)."""
    columns = [_key_text(pd.Series(np.asarray(cells.keys[c], dtype=object), dtype=object))
               for c in by]
    return {tuple(values): g
            for g, values in enumerate(zip(*columns, strict=True))} if by else {(): 0}


def _looked_up(index: pd.Index, wanted: Any, codes: np.ndarray) -> np.ndarray:
    """``codes`` of each of ``wanted`` in ``index`` (a KeyError naming the first unknown)."""
    where = index.get_indexer(wanted)
    if (where < 0).any():
        raise KeyError(wanted[int(np.flatnonzero(where < 0)[0])])
    return codes[where]


def _codes_of(frame: pd.DataFrame, by: tuple[str, ...], lookup: dict[tuple, int]) -> np.ndarray:
    """The group code of each row of ``frame`` by its ``by`` values (:func:`_key_lookup`),
    looked up by one hash join, not a loop over the rows."""
    if not by or not len(frame):
        return np.zeros(len(frame), dtype=np.int64)
    codes = np.fromiter(lookup.values(), dtype=np.int64, count=len(lookup))
    keys = list(lookup)
    if len(by) == 1:
        return _looked_up(pd.Index([k[0] for k in keys], dtype=object),
                          pd.Index(_key_text(frame[by[0]]), dtype=object), codes)
    return _looked_up(pd.MultiIndex.from_tuples(keys),
                      pd.MultiIndex.from_arrays([_key_text(frame[c]) for c in by]), codes)


def _sample_codes(values: pd.Series, known: list[str]) -> np.ndarray:
    """The samples' codes as :meth:`EngineCells.cells` numbered them (their text order among
    the samples with a kept answer)."""
    return _looked_up(pd.Index(known, dtype=object),
                      pd.Index(values.astype(str).to_numpy(dtype=object), dtype=object),
                      np.arange(len(known), dtype=np.int64))


def _binned_by_edges(q: Any, by: tuple[str, ...], edges: np.ndarray,
                     lookup: dict[tuple, int]) -> Any:
    """Each answer's bin, #{inner edges of its group < c}, its group's edges joined in."""
    import ibis

    n_inner = edges.shape[1] - 2
    if n_inner <= 0:
        return q.mutate(__kbench_bin=ibis.literal(0).cast("int64"))
    groups = sorted(lookup.items(), key=lambda kv: kv[1])
    table = pd.DataFrame({c: [k[i] for k, _ in groups] for i, c in enumerate(by)})
    for j in range(n_inner):
        table[f"__kbench_e{j}"] = edges[[g for _, g in groups], j + 1]
    lookup_table = ibis.memtable(table)
    joined = q.join(lookup_table, [q[c] == lookup_table[c] for c in by]) \
        if by else q.cross_join(lookup_table)
    bin_of = sum(((joined["__kbench_conf"] > joined[f"__kbench_e{j}"]).fill_null(False)
                  .cast("int64") for j in range(n_inner)), ibis.literal(0).cast("int64"))
    return joined.mutate(__kbench_bin=bin_of).select(*q.columns, "__kbench_bin")


# ------------------------------------------------------------------- kbench metrics
