"""A judged run's tiers computed in the engine: one judge's answers (or the majority's) by a
group-by on the item key, then their per-cluster sums (issue 39).

A judged run has three judges' rows per item, most of them text (findings, line lists) the
tiers never read. The engine picks what the tiers need where the rows lie:

* :func:`answers`: the majority consensus (:func:`kbench_core.agreement.consensus`: a yes/no
  label yes with at least ``min_votes`` votes and more yes than no, an undecided verdict not
  credited, a categorical label the value of at least ``min_votes`` judges with no tie, a
  number the median of the judges' values, ground truth from the item's first row that has
  it, a failed judgement missing or, with ``failed_as="not_found"``, a "no") as one
  group-by of the voters' rows on the item key; or one judge's rows
  (:func:`kbench_core.agreement.judge_rows`, its absent and failed judgements "not found"
  on request). One row per item, only the columns the tiers read, labels stripped as the
  loader strips them.

The rows are never fetched: an Ibis expression of the answers, which :func:`fetch_answers`
turns into the frame ``vuln.tiers`` reads (a test's reference), and which
:mod:`kbench_core.vuln.cells` sums per (group × sample) cell in the engine.

Supported where the file holds its columns in their natural Parquet types (true/false as
booleans, numbers as numbers, labels and line lists as text): :func:`supported` says so; a
file that writes them otherwise (``"yes"`` for true, numbers as text, line lists as Parquet
lists) is read by the loader at item grain, as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from kbench_core.agreement._labels import (
    CONSENSUS,
    FOUND_LABELS,
    HUMAN,
    ITEM_KEY,
    REASONING,
    FailedAs,
    check_min_votes,
)
from kbench_core.engines.source import FILE, ROW
from kbench_core.schema import FINDING_COUNTS
from kbench_core.stats import check_choice
from kbench_core.vuln.cells import CellSource

__all__ = ["Answers", "answers", "fetch_answers", "supported"]

_PLACE = "__kbench_place"
_BOOLS = ("is_vulnerable", "said_vulnerable", "target_found", "partial_found")
_NUMBERS = ("confidence", *REASONING, *FINDING_COUNTS)
# Labels the tiers read beside the key: voted on by the majority (difficulty, type match,
# claimed lines) or copied from the item's first row that has them (ground truth).
_VOTED = ("type_match", "claimed_lines", "difficulty")
_TRUTH = ("is_vulnerable", "severity", "true_lines")
_LABELS = ("sample", "model", "prompt_type", "judge", "severity", "type_match", "difficulty")
_LINES = ("claimed_lines", "true_lines")


def supported(table: Any) -> bool:
    """Whether the engine reads this judged table's columns as the loader would: booleans
    stored as booleans, numbers as numbers, labels and line lists as text."""
    schema = table.schema()
    for name in table.columns:
        kind = schema[name]
        if name in (*_LABELS, *_LINES) and kind.is_integer() and _empty(table, name):
            continue  # a column with no value (Parquet's null type, read as integers)
        if name in _BOOLS and not kind.is_boolean():
            return False
        if name in _NUMBERS and not kind.is_numeric():
            return False
        if name in (*_LABELS, *_LINES) and not kind.is_string():
            return False
    return True


def _empty(table: Any, name: str) -> bool:
    """Whether the column ``name`` of ``table`` has no value at all (one count)."""
    return int(table[name].count().to_pyarrow().as_py()) == 0


def _lines(col: Any) -> Any:
    """A ``12;13`` line list as the loader writes it: the numbers between ``;``, ``,`` or
    blanks, each as a whole number (``012`` is 12), joined by ``;``; an empty list missing."""
    import ibis

    parts = col.strip().re_split(r"[;,\s]+").filter(lambda p: p != "")
    text = parts.map(lambda p: p.cast("int64").cast("string")).join(";")
    return ibis.ifelse(col.isnull() | (parts.length() == 0), ibis.null("string"), text)


def _normalised(table: Any) -> Any:
    """The columns the tiers read, as the loader types them: labels stripped (a blank one
    missing), line lists normalised, numbers as floats; and the row's place in the run."""
    from kbench_core.engines.validate import _loader_text

    out = {}
    schema = table.schema()
    # a label or line list with no value at all, read as integers (supported): text
    table = table.mutate(**{name: table[name].cast("string") for name in table.columns
                            if name in (*_LABELS, *_LINES) and schema[name].is_integer()})
    for name in table.columns:
        if name in _LABELS:
            out[name] = _loader_text(table, name, strip=True)
        elif name in _LINES:
            out[name] = _lines(table[name])
        elif name in _NUMBERS:
            out[name] = table[name].cast("float64")
        elif name in _BOOLS:
            out[name] = table[name]
    place = table[ROW].cast("int64")
    return table.select(**out, **{_PLACE: place, FILE: table[FILE]})


@dataclass(frozen=True)
class Answers:
    """One judge's answers as an Ibis expression (one row per item) and what was chosen:
    ``judge`` (``"majority"`` for the consensus), the ``voters`` and ``min_votes`` of a
    consensus, and ``failed_as``."""

    expr: Any
    judge: str
    voters: tuple[str, ...]
    min_votes: int | None
    failed_as: str
    columns: tuple[str, ...]


def _judge_names(rows: Any) -> list[str]:
    names = rows.select("judge").distinct().to_pyarrow().column(0).to_pylist()
    return sorted(str(n) for n in names if n is not None)


def answers(table: Any, *, judge: str | None = None, judges: Sequence[str] | None = None,
            min_votes: int | None = None, failed_as: FailedAs = "missing",
            files: Sequence[str] = ()) -> Answers:
    """The answers ``vuln.tiers`` reads of one judge (``judge``: a judge of the run) or of the
    majority (``judge`` None or ``"majority"``: :func:`kbench_core.agreement.consensus` with
    ``judges``, ``min_votes`` and ``failed_as``), computed by the engine on ``table`` (as
    :func:`~kbench_core.engines.source.open_table` opens a judged run; ``files`` its files in
    the order the memory engine reads them). One row per item, ordered by the item's first
    row; the columns: the item key, ``judge``, ``difficulty`` (when the run has it), ground
    truth (``is_vulnerable``, ``severity``, ``true_lines``), the verdict and found labels,
    ``type_match``, ``claimed_lines``, the numbers (confidence, scores, finding counts)."""
    import ibis

    from kbench_core.agreement._labels import FAILED_AS
    from kbench_core.agreement._labels import voters as check_voters

    check_choice("failed_as", failed_as, FAILED_AS)
    rows = _normalised(table)
    if len(files) > 1:
        rank = ibis.cases(*((rows[FILE] == name, i) for i, name in enumerate(files)),
                          else_=len(files))
        rows = rows.mutate(**{_PLACE: rank.cast("int64") * (1 << 40) + rows[_PLACE]})
    rows = rows.drop(FILE)
    names = _judge_names(rows)
    frame = pd.DataFrame({"judge": names})
    llm = [n for n in names if n != HUMAN]
    if judge is None or judge == CONSENSUS:
        chosen = check_voters(frame, judges)
        if not chosen:
            raise ValueError("consensus needs at least one judge other than 'human'")
        voted = rows.filter(rows["judge"].isin(chosen))
        needed = check_min_votes(min_votes, len(chosen))
        expr, columns = _majority(voted, len(chosen), needed, failed_as)
        return Answers(expr, CONSENSUS, tuple(chosen), needed, failed_as, columns)
    if judge not in names:
        raise ValueError(f"judge {judge!r} is not in the frame; judges: "
                         f"{', '.join(names) or 'none'}")
    expr, columns = _one_judge(rows, judge, llm, failed_as)
    return Answers(expr, judge, (judge,), None, failed_as, columns)


def _key(rows: Any) -> list[str]:
    return [c for c in ITEM_KEY if c in rows.columns]


def _first(rows: Any, name: str, *, present: bool) -> Any:
    """The value of ``name`` in the item's first row (``present``: first row that has one)."""
    where = rows[name].notnull() if present else None
    return rows[name].argmin(rows[_PLACE], where=where)


def _majority(rows: Any, n_voters: int, needed: int,
              failed_as: str) -> tuple[Any, tuple[str, ...]]:
    """The consensus of ``rows`` (the voters' rows) per item: one group-by on the item key,
    and one per voted label (its votes per value), joined back."""
    import ibis

    key = _key(rows)
    cols = set(rows.columns)
    present = ibis.literal(True)
    for name in ("said_vulnerable", "target_found"):
        if name in cols:
            present = present & rows[name].notnull()
    measures: dict[str, Any] = {_PLACE: rows[_PLACE].min(),
                                "n_judges": present.cast("int64").sum()}
    for name in _TRUTH:
        if name in cols:
            measures[name] = _first(rows, name, present=True)
    bools = [b for b in _BOOLS if b in cols and b != "is_vulnerable"]
    for name in bools:
        # (a group whose values are all missing sums to 0 votes, not to null)
        measures[f"{name}__yes"] = (rows[name] == True).fill_null(False).cast(  # noqa: E712
            "int64").sum()
        measures[f"{name}__no"] = (rows[name] == False).fill_null(False).cast(  # noqa: E712
            "int64").sum()
    for name in _NUMBERS:
        if name not in cols:
            continue
        value = rows[name]
        if name in REASONING and "target_found" in cols:
            value = ibis.ifelse(rows["target_found"] == True, value,  # noqa: E712
                                ibis.null("float64"))
        measures[name] = value.median()
    items = rows.group_by(key).aggregate(**measures)
    out = {c: items[c] for c in key}
    out["judge"] = ibis.literal(CONSENSUS)
    nobody = items["n_judges"] == 0
    vulnerable = items["is_vulnerable"] if "is_vulnerable" in cols else None
    for name in bools:
        yes, no = items[f"{name}__yes"], items[f"{name}__no"]
        if failed_as == "not_found" and name in FOUND_LABELS:
            no = n_voters - yes  # every voter without a "yes" says "no"
        won_yes = (yes >= needed) & (yes > no)
        won_no = (no >= needed) & (no > yes)
        if name == "said_vulnerable" and vulnerable is not None:
            # an undecided verdict is not credited: the wrong one
            value = ibis.cases((won_yes, True), (won_no, False), else_=~vulnerable)
        elif name in FOUND_LABELS:
            value = won_yes
        else:
            value = ibis.cases((won_yes, True), (won_no, False),
                               else_=ibis.null("boolean"))
        if failed_as == "missing" and name in ("said_vulnerable", *FOUND_LABELS):
            value = ibis.ifelse(nobody, ibis.null("boolean"), value)
        out[name] = value
    for name in _TRUTH:
        if name in cols:
            out[name] = items[name]
    for name in _NUMBERS:
        if name in cols:
            out[name] = items[name]
    out[_PLACE] = items[_PLACE]
    voted = items.select(**out)
    for name in _VOTED:
        if name in cols:
            voted = _join_vote(voted, rows, key, name, needed)
    columns = tuple(c for c in voted.columns if c != _PLACE)
    return voted, columns


def _join_vote(items: Any, rows: Any, key: list[str], name: str, needed: int) -> Any:
    """``items`` with the majority value of the categorical label ``name``: the value at least
    ``needed`` voters give when no other value has as many votes; else missing."""
    import ibis

    given = rows.filter(rows[name].notnull())
    votes = given.group_by([*key, name]).aggregate(__kbench_votes=given.count())
    top = votes.group_by(key).aggregate(__kbench_best=votes["__kbench_votes"].max())
    best = votes.join(top, key)
    best = best.filter(best["__kbench_votes"] == best["__kbench_best"])
    winner = best.group_by(key).aggregate(
        __kbench_holders=best.count(), __kbench_top=best["__kbench_best"].max(),
        __kbench_value=best[name].min())
    winner = winner.filter((winner["__kbench_holders"] == 1)
                           & (winner["__kbench_top"] >= needed))
    winner = winner.select(*key, **{name: winner["__kbench_value"]})
    joined = items.left_join(winner, [items[k].identical_to(winner[k]) for k in key])
    keep = [c for c in joined.columns if c not in {f"{k}_right" for k in key}]
    joined = joined.select(keep)
    return joined.mutate(**{name: joined[name].cast("string")}) if name in joined.columns \
        else joined.mutate(**{name: ibis.null("string")})


def _one_judge(rows: Any, judge: str, llm: list[str],
               failed_as: str) -> tuple[Any, tuple[str, ...]]:
    """One judge's rows (:func:`kbench_core.agreement.judge_rows`): as they are, or with
    ``failed_as="not_found"`` one per item some LLM judge labelled, an absent or failed
    judgement "not found" and its verdict not credited."""
    import ibis

    cols = set(rows.columns)
    mine = rows.filter(rows["judge"] == judge)
    if failed_as == "missing" or judge == HUMAN or "target_found" not in cols \
            or judge not in llm:
        columns = tuple(c for c in mine.columns if c != _PLACE)
        return mine, columns
    key = _key(rows)
    scope = rows.filter(rows["judge"].isin(llm))
    own = scope["judge"] == judge
    item_columns = {*_TRUTH, "difficulty"}
    measures = {_PLACE: scope[_PLACE].min(), "__kbench_mine": own.cast("int64").sum()}
    for name in scope.columns:
        if name in (*key, "judge", _PLACE):
            continue
        # the judge's own value; an item it has no row for takes the item's first row's
        # ground truth and difficulty, every other column blank
        measures[name] = scope[name].argmin(scope[_PLACE], where=own)
        if name in item_columns:
            measures[f"{name}__first"] = scope[name].argmin(scope[_PLACE])
    items = scope.group_by(key).aggregate(**measures)
    absent = items["__kbench_mine"] == 0
    out: dict[str, Any] = {c: items[c] for c in key}
    out["judge"] = ibis.literal(judge)
    for name in scope.columns:
        if name in (*key, "judge", _PLACE):
            continue
        out[name] = (ibis.ifelse(absent, items[f"{name}__first"], items[name])
                     if name in item_columns else items[name])
    failed = out["target_found"].isnull()
    if "said_vulnerable" in cols:
        failed = failed | out["said_vulnerable"].isnull()
    for name in FOUND_LABELS:
        if name in cols:
            out[name] = ibis.ifelse(failed, False, out[name])
    if "said_vulnerable" in cols:
        out["said_vulnerable"] = ibis.ifelse(failed, ~out["is_vulnerable"],
                                             out["said_vulnerable"])
    out[_PLACE] = items[_PLACE]
    expr = items.select(**out)
    return expr, tuple(c for c in expr.columns if c != _PLACE)


def fetch_answers(chosen: Answers) -> pd.DataFrame:
    """The answers as the frame ``vuln.tiers`` reads (labels as categories, true/false as
    nullable booleans), in the order of each item's first row."""
    table = chosen.expr.order_by(_PLACE).drop(_PLACE).to_pyarrow()
    frame = table.to_pandas()
    for name in frame.columns:
        if name in _LABELS or name in _LINES:
            frame[name] = frame[name].astype("category") if name in _LABELS else frame[name]
        elif name in _BOOLS:
            values = frame[name]
            if values.dtype != bool:
                frame[name] = values.astype("boolean")
        elif name in _NUMBERS or name == "n_judges":
            frame[name] = frame[name].astype(float) if name != "n_judges" else \
                frame[name].astype(np.int64)
    return frame


# --------------------------------------------------------------------- the tiers' cells


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

    kept = q["__kbench_kept"]
    out: dict[str, Any] = {"__kbench_failed": (~kept).cast("int64").sum()}
    for name in FLAGS:
        out[name] = q[f"f__{name}"].cast("int64").sum(where=kept)
    for name in COUNTS:
        out[name] = q[f"c__{name}"].sum(where=kept)
    for name in MOMENTS:
        total, count, m2 = moment_names(name)
        x = q[f"m__{name}"]
        used = kept & x.notnull()
        out[total] = x.sum(where=used)
        out[count] = used.cast("int64").sum()
        out[m2] = x.var(how="pop", where=used) * out[count]
    if severity:
        for name in SEVERITY_SUMS:
            out[name] = q[f"s__{name}"].cast("int64").sum(where=kept)
    return out


def _text_codes(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Codes of text values in their sorted order (missing last) and the distinct values."""
    present = values.dropna().astype(str)
    distinct = np.array(sorted(set(present.tolist())), dtype=object)
    position = {v: i for i, v in enumerate(distinct)}
    codes = np.array([position[str(v)] if v is not None and v == v else len(distinct)
                      for v in values.tolist()], dtype=np.int64)
    return codes, np.append(distinct, None)


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


class EngineCells(CellSource):
    """:class:`kbench_core.vuln.cells.CellSource` of one judge's (or the majority's)
    answers computed by the engine (:func:`answers`): every table the tiers read is a
    group-by in the engine, and only per-cell sums come back (:meth:`cells`: per group ×
    sample; :meth:`bins`: per group × bin × sample), never an answer. Equal-mass bins have
    their edges computed in the engine first (the order statistics each edge interpolates,
    fetched by rank), and only their bootstrap fetches the answers' confidences (four
    numbers per answer)."""

    def __init__(self, chosen: Answers) -> None:
        self.chosen = chosen
        self.judge = chosen.judge
        self.columns = chosen.columns
        self._q = _quantities(chosen.expr.drop(_PLACE))
        self._cells: dict[tuple[str, ...], Any] = {}
        self._samples: dict[tuple[str, ...], list[str]] = {}  # per grouping, coded samples

    def _check(self, by: tuple[str, ...]) -> None:
        unknown = [c for c in by if c not in self.columns]
        if unknown:
            raise ValueError(f"tiers needs the column(s) {', '.join(unknown)}")

    def has_difficulty(self) -> bool:
        if "difficulty" not in self.columns:
            return False
        q = self._q
        return bool(q.filter(q["difficulty"].notnull()).count().to_pyarrow().as_py())

    def cells(self, by: tuple[str, ...]) -> Any:
        from kbench_core.vuln.cells import JudgedCells, sum_names

        if by in self._cells:
            return self._cells[by]
        self._check(by)
        q = self._q
        severity = "severity" in self.columns
        keys = [*by, "sample"]
        table = q.group_by(keys).aggregate(**_cell_measures(q, severity)).to_pyarrow()
        frame = table.to_pandas()
        gid, values, size = _grouped(frame, by)
        missing = np.bincount(gid, weights=frame["__kbench_failed"].to_numpy(dtype=float),
                              minlength=size).astype(np.int64)
        kept = frame["n"].fillna(0).to_numpy(dtype=float) > 0
        frame, gid = frame[kept], gid[kept]
        sample, names = _text_codes(frame["sample"])
        n_samples = len(names) - 1
        self._samples[by] = [str(n) for n in names[:-1]]
        order = np.lexsort((sample, gid))
        sums = {name: frame[name].fillna(0.0).to_numpy(dtype=float)[order]
                for name in sum_names(severity=severity)}
        cells = JudgedCells(keys=values, size=size, missing=missing, group=gid[order],
                            sample=sample[order], n_samples=n_samples, sums=sums,
                            singletons=bool((sums["n"] <= 1).all()), severity=severity)
        self._cells[by] = cells
        return cells

    def bins(self, by: tuple[str, ...], n_bins: int, binning: str, *,
             answers: bool = False) -> Any:
        import ibis

        from kbench_core.vuln.cells import Bins

        cells = self.cells(by)
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
        table = binned.group_by([*by, "sample", "__kbench_bin"]).aggregate(
            __kbench_count=binned.count(),
            __kbench_conf_sum=binned["__kbench_conf"].sum(),
            __kbench_correct_sum=binned["__kbench_correct"].sum()).to_pandas()
        group = _codes_of(table, by, key_codes)
        sample = _sample_codes(table["sample"], self._samples[by])
        bin_ = table["__kbench_bin"].to_numpy(dtype=np.int64)
        order = np.lexsort((sample, bin_, group))
        fetched = None
        if answers and binning == "quantile":
            rows = q.select(*by, "sample", "__kbench_conf", "__kbench_correct").to_pandas()
            fetched = (_codes_of(rows, by, key_codes),
                       _sample_codes(rows["sample"], self._samples[by]),
                       rows["__kbench_conf"].to_numpy(dtype=float),
                       rows["__kbench_correct"].to_numpy(dtype=float))
        return Bins(n_bins=n_bins, binning=binning, edges=np.asarray(edges, dtype=float),
                    group=group[order], bin=bin_[order], sample=sample[order],
                    count=table["__kbench_count"].to_numpy(dtype=float)[order],
                    confidence_sum=table["__kbench_conf_sum"].to_numpy(dtype=float)[order],
                    correct_sum=table["__kbench_correct_sum"].to_numpy(dtype=float)[order],
                    answers=fetched)

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
        names = pd.DataFrame({c: [_NULL_KEY if v is None or v != v else str(v) for v in
                                  np.asarray(cells.keys[c], dtype=object)[wanted[
                                      "__kbench_group"].to_numpy()]] for c in by})
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


# A missing key in a table joined to a small table of kbench's own (the groups' edges, the
# ranks wanted): a text no label holds, so plain equality joins it (Spark's null-safe
# equality on a table made from pandas did not).
_NULL_KEY = "\x1fkbench-missing"


def _filled(table: Any, by: tuple[str, ...]) -> Any:
    return table.mutate(**{c: table[c].fill_null(_NULL_KEY) for c in by}) if by else table


def _key_lookup(cells: Any, by: tuple[str, ...]) -> dict[tuple, int]:
    """The group code of each tuple of key values (missing as None)."""
    columns = [np.asarray(cells.keys[c], dtype=object) for c in by]
    return {tuple(_NULL_KEY if v is None or v != v else str(v) for v in values): g
            for g, values in enumerate(zip(*columns, strict=True))} if by else {(): 0}


def _codes_of(frame: pd.DataFrame, by: tuple[str, ...], lookup: dict[tuple, int]) -> np.ndarray:
    if not by:
        return np.zeros(len(frame), dtype=np.int64)
    columns = [frame[c].tolist() for c in by]
    return np.array([lookup[tuple(_NULL_KEY if v is None or v != v else str(v) for v in values)]
                     for values in zip(*columns, strict=True)], dtype=np.int64)


def _sample_codes(values: pd.Series, known: list[str]) -> np.ndarray:
    """The samples' codes as :meth:`EngineCells.cells` numbered them (their text order among
    the samples with a kept answer)."""
    position = {name: i for i, name in enumerate(known)}
    return np.array([position[str(v)] for v in values.tolist()], dtype=np.int64)


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


def judge_names(table: Any) -> list[str]:
    """The judges of a judged table as the loader labels them (stripped), sorted."""
    from kbench_core.engines.validate import _loader_text

    names = (table.select(judge=_loader_text(table, "judge", strip=True)).distinct()
             .to_pyarrow().column(0).to_pylist())
    return sorted(str(n) for n in names if n is not None)


def main_tables(src: Any, backend: Any, options: dict | None = None,
                ) -> tuple[list[tuple[str, pd.DataFrame]], dict]:
    """``kbench metrics``' tier leaderboards of a judged source (the majority first, then
    each judge, as ``families.main_table("judged")`` shows a frame), every one finished from
    the cells the engine sums (:class:`EngineCells`): the run is validated by the engine
    (:func:`kbench_core.engines.validate.validate`, the loader's messages), and no answer is
    fetched. Returns the tables and what an export records of the majority."""
    from kbench_core import vuln
    from kbench_core.engines import source, validate
    from kbench_core.families.judged import (
        MAJORITY,
        TierOptions,
        check_judges,
        default_judge,
        leaderboard,
        main_columns,
    )

    table = source.open_table(backend, src)
    validate.validate(table, src)
    names = pd.DataFrame({"judge": judge_names(table)})
    chosen = check_judges(names, options)
    offered = vuln.judges_of(names)
    several = default_judge(names) == MAJORITY
    if several:
        offered = [MAJORITY, *offered]
    wanted = offered if chosen.judge is None else [chosen.judge]
    files = tuple(f.name for f in src.files)
    tier_options = TierOptions.from_mapping(options).tiers()
    out = []
    for name in wanted:
        if name == MAJORITY:
            chosen_answers = answers(table, judges=list(chosen.judges) or None,
                                     min_votes=chosen.min_votes, failed_as=chosen.failed_as,
                                     files=files)
        else:
            chosen_answers = answers(table, judge=name, failed_as=chosen.failed_as,
                                     files=files)
        cells = EngineCells(chosen_answers)
        out.append((name, main_columns(leaderboard(vuln.tiers(cells, **tier_options)))))
    source.check_read(src, backend)
    return out, (chosen.provenance() if several else {})
