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

from collections.abc import Callable, Sequence
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
from kbench_core.engines.judged_cells import _PLACE, EngineCells, sample_part
from kbench_core.engines.keys import Labels
from kbench_core.engines.source import FILE, ROW
from kbench_core.schema import FINDING_COUNTS
from kbench_core.stats import check_choice

__all__ = ["Answers", "EngineCells", "answers", "fetch_answers", "per_item", "profile_sums",
           "sample_part", "supported"]

# claims_fixed_target: a fixed contract's "still claims the fixed target" (vuln.fixed_claims),
# voted by the majority as agreement.consensus votes a yes/no label (no majority: missing)
_BOOLS = ("is_vulnerable", "said_vulnerable", "target_found", "partial_found",
          "claims_fixed_target")
# optional yes/no labels a file may hold with no value at all (Parquet's null type)
_EMPTY_BOOLS = ("claims_fixed_target",)
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
        if name in _EMPTY_BOOLS and kind.is_integer() and _empty(table, name):
            continue
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


def normalised(table: Any, labels: Labels | None = None) -> Any:
    """The columns the tiers read, as the loader types them: labels stripped (a blank one
    missing), line lists normalised, numbers as floats; and the row's place in the run.
    ``labels``: ``table``'s distinct labels when the caller has them (the validation's)."""
    from kbench_core.engines.keys import _loader_text

    out = {}
    schema = table.schema()
    # a label or line list with no value at all, read as integers (supported): text
    table = table.mutate(**{name: table[name].cast("string") for name in table.columns
                            if name in (*_LABELS, *_LINES) and schema[name].is_integer()})
    # a yes/no label with no value at all, read as integers (supported): missing booleans
    table = table.mutate(**{name: table[name].cast("boolean") for name in table.columns
                            if name in _EMPTY_BOOLS and schema[name].is_integer()})
    for name in table.columns:
        if name in _LABELS:
            # (``labels`` may be the uncast table's: a column cast above holds no value)
            out[name] = _loader_text(table, name, strip=True, labels=labels)
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
    # the rows the answers are made of, and how (rows -> answers): what :meth:`parts` remakes
    # on a part of the samples
    rows: Any = None
    make: Callable[[Any], Any] | None = None

    def parts(self, n: int) -> list[Any]:
        """The answers of ``n`` disjoint parts of the run's samples (:func:`sample_part`),
        each made from that part's rows only; together they are :attr:`expr`'s rows (an item
        is one sample's, and its answer reads only its own rows). The engine's group-by of a
        part holds one ``n``-th of the items."""
        if n <= 1 or self.make is None:
            return [self.expr]
        return [self.make(sample_part(self.rows, i, n)) for i in range(n)]


def _judge_names(rows: Any) -> list[str]:
    names = rows.select("judge").distinct().to_pyarrow().column(0).to_pylist()
    return sorted(str(n) for n in names if n is not None)


def answers(table: Any, *, judge: str | None = None, judges: Sequence[str] | None = None,
            min_votes: int | None = None, failed_as: FailedAs = "missing",
            files: Sequence[str] = (), normalised_rows: Any = None,
            names: Sequence[str] | None = None) -> Answers:
    """The answers ``vuln.tiers`` reads of one judge (``judge``: a judge of the run) or of the
    majority (``judge`` None or ``"majority"``: :func:`kbench_core.agreement.consensus` with
    ``judges``, ``min_votes`` and ``failed_as``), computed by the engine on ``table`` (as
    :func:`~kbench_core.engines.source.open_table` opens a judged run; ``files`` its files in
    the order the memory engine reads them). One row per item, ordered by the item's first
    row; the columns: the item key, ``judge``, ``difficulty`` (when the run has it), ground
    truth (``is_vulnerable``, ``severity``, ``true_lines``), the verdict and found labels,
    ``claims_fixed_target`` (a yes/no label: the majority's is the value of at least
    ``min_votes`` voters with more votes than the other, else missing, as
    :func:`~kbench_core.agreement.consensus` votes it), ``type_match``, ``claimed_lines``,
    the numbers (confidence, scores, finding counts). ``normalised_rows``: ``table`` as
    :func:`normalised` reads it, made once for every judge of a run (each reading fetches its
    labels' distinct values); ``names``: the run's judges as :func:`judge_names` gives them,
    when known (else one more query)."""
    import ibis

    from kbench_core.agreement._labels import FAILED_AS
    from kbench_core.agreement._labels import voters as check_voters

    check_choice("failed_as", failed_as, FAILED_AS)
    rows = normalised(table) if normalised_rows is None else normalised_rows
    if len(files) > 1:
        rank = ibis.cases(*((rows[FILE] == name, i) for i, name in enumerate(files)),
                          else_=len(files))
        rows = rows.mutate(**{_PLACE: rank.cast("int64") * (1 << 40) + rows[_PLACE]})
    rows = rows.drop(FILE)
    names = _judge_names(rows) if names is None else list(names)
    frame = pd.DataFrame({"judge": names})
    llm = [n for n in names if n != HUMAN]
    if judge is None or judge == CONSENSUS:
        chosen = check_voters(frame, judges)
        if not chosen:
            raise ValueError("consensus needs at least one judge other than 'human'")
        needed = check_min_votes(min_votes, len(chosen))

        def majority(part: Any) -> tuple[Any, tuple[str, ...]]:
            return _majority(part.filter(part["judge"].isin(chosen)), list(chosen), needed,
                             failed_as)

        expr, columns = majority(rows)
        return Answers(expr, CONSENSUS, tuple(chosen), needed, failed_as, columns, rows,
                       lambda part: majority(part)[0])
    if judge not in names:
        raise ValueError(f"judge {judge!r} is not in the frame; judges: "
                         f"{', '.join(names) or 'none'}")

    def one(part: Any) -> Any:
        return _one_judge(part, judge, llm, failed_as)[0]

    expr, columns = _one_judge(rows, judge, llm, failed_as)
    # one judge's rows as they are (no group-by) are one part: a part would read the file
    # again for nothing held (10M rows: 4.5 s a part)
    grouped = _grouped_judge(rows, judge, llm, failed_as)
    return Answers(expr, judge, (judge,), None, failed_as, columns, rows,
                   one if grouped else None)


def _key(rows: Any) -> list[str]:
    return [c for c in ITEM_KEY if c in rows.columns]


def _first(rows: Any, name: str, *, present: bool) -> Any:
    """The value of ``name`` in the item's first row (``present``: first row that has one)."""
    where = rows[name].notnull() if present else None
    return rows[name].argmin(rows[_PLACE], where=where)


def _median(values: list[Any]) -> Any:
    """The median of a row's ``values`` (one column per voter) as pandas takes it: over the
    values neither missing nor NaN, the middle one, or the mean of the two middle ones; null
    when there is none. Written by hand: no engine has a row-wise median."""
    import ibis

    if len(values) == 1:
        (value,) = values
        return ibis.ifelse(value.isnan(), ibis.null("float64"), value)
    given = ibis.array(values).filter(lambda x: x.notnull() & ~x.isnan()).sort()
    k = given.length()
    half = (k // 2).cast("int32")  # Spark indexes an array by a 32-bit integer only
    return ibis.cases((k == 0, ibis.null("float64")), (k % 2 == 1, given[half]),
                      else_=(given[half - 1] + given[half]) / 2)


def _majority(rows: Any, voters: list[str], needed: int,
              failed_as: str) -> tuple[Any, tuple[str, ...]]:
    """The consensus of ``rows`` (the ``voters``' rows) per item: one group-by on the item
    key, and one per voted label (its votes per value), joined back.

    A number's consensus is the median of the voters' values. Each voter's value is its
    item's one row's (``max`` filtered on the judge: the run's key, which the validation
    checks, gives an item one row per judge), and the median is taken across those columns
    row by row (:func:`_median`): DuckDB's grouped ``median`` keeps every group's values
    until the end and spilled past its memory limit (a 2M-row run: 8.2 s against 4.3 s; a
    10M-row run's majority took 136 s and then ran out of memory)."""
    import ibis

    n_voters = len(voters)
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
        for i, voter in enumerate(voters):
            measures[f"{name}__v{i}"] = value.max(where=rows["judge"] == voter)
    for name in _VOTED:
        if name in cols:  # each voter's label, its votes counted row by row (_vote)
            for i, voter in enumerate(voters):
                measures[f"{name}__v{i}"] = rows[name].max(where=rows["judge"] == voter)
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
            out[name] = _median([items[f"{name}__v{i}"] for i in range(n_voters)])
    for name in _VOTED:
        if name in cols:
            out[name] = _vote([items[f"{name}__v{i}"] for i in range(n_voters)], needed)
    out[_PLACE] = items[_PLACE]
    voted = items.select(**out)
    columns = tuple(c for c in voted.columns if c != _PLACE)
    return voted, columns


def _vote(values: list[Any], needed: int) -> Any:
    """The majority value of a categorical label across one column per voter (``values``,
    missing where the voter gave none): the value at least ``needed`` voters give when no
    other value has as many votes; else missing. Row by row: each voter's value counts the
    voters that give it, and the most counted values must all be one. Written by hand, as
    :func:`_median` (no engine votes across columns). The voters' labels come from the
    item's one group-by, where a group-by per label and a join back read the rows three
    more times and held three more hash tables (the time was the same: 10M rows' majority
    in five parts, 88 s then, 91 s now; the item's group-by is most of it)."""
    import ibis

    counts = [sum(((v == w).fill_null(False).cast("int64") for w in values),
                  ibis.literal(0).cast("int64")) for v in values]
    top = counts[0] if len(counts) == 1 else ibis.greatest(*counts)
    held = [ibis.ifelse(c == top, v, ibis.null("string")) for v, c in zip(values, counts,
                                                                         strict=True)]
    low = held[0] if len(held) == 1 else ibis.least(*held)
    high = held[0] if len(held) == 1 else ibis.greatest(*held)
    return ibis.ifelse((top >= needed) & (low == high), low, ibis.null("string"))


def _grouped_judge(rows: Any, judge: str, llm: list[str], failed_as: str) -> bool:
    """Whether :func:`_one_judge` groups the items (an absent or failed judgement made "not
    found"), not only picks the judge's rows."""
    return not (failed_as == "missing" or judge == HUMAN or "target_found" not in rows.columns
                or judge not in llm)


def _one_judge(rows: Any, judge: str, llm: list[str],
               failed_as: str) -> tuple[Any, tuple[str, ...]]:
    """One judge's rows (:func:`kbench_core.agreement.judge_rows`): as they are, or with
    ``failed_as="not_found"`` one per item some LLM judge labelled, an absent or failed
    judgement "not found" and its verdict not credited."""
    import ibis

    cols = set(rows.columns)
    mine = rows.filter(rows["judge"] == judge)
    if not _grouped_judge(rows, judge, llm, failed_as):
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


def per_item(answers_expr: Any) -> Any:
    """One judge's answers (:attr:`Answers.expr`) with the per-item columns a comparison of
    models pairs (the family's ``per_item``: :func:`kbench_core.families.judged._per_item`)
    as engine expressions: ``correct`` = 1.0 when the verdict equals the truth, 0.0 when
    not, null when either is missing; ``target_found_vulnerable`` = ``target_found`` as
    1.0/0.0 on vulnerable samples, null on safe ones (and where it is missing)."""
    import ibis

    cols = set(answers_expr.columns)
    added = {}
    truth = answers_expr["is_vulnerable"] if "is_vulnerable" in cols else None
    if truth is not None and "said_vulnerable" in cols:
        said = answers_expr["said_vulnerable"]
        added["correct"] = ibis.ifelse(said.notnull() & truth.notnull(),
                                       (said == truth).cast("float64"), ibis.null("float64"))
    if truth is not None and "target_found" in cols:
        added["target_found_vulnerable"] = ibis.ifelse(
            truth == True, answers_expr["target_found"].cast("float64"),  # noqa: E712
            ibis.null("float64"))
    return answers_expr.mutate(**added)


def profile_sums(answers_expr: Any, models: Sequence[str], *, cluster: str,
                 item_key: Sequence[str]) -> tuple[np.ndarray, np.ndarray, bool]:
    """What the profile's TDR rank reads of one judge's answers (:attr:`Answers.expr`), summed
    by the engine: per ``cluster`` level (in their text order) × ``models`` (in that order)
    the found targets and the counted answers (vulnerable, with a verdict and a target
    assessment), as :func:`kbench_core.profile.cluster_sums` sums them from the rows, and
    whether some model lacks a counted answer (``item_key``) another one has. One group-by
    of the answers per model × cluster (every level, counted or not: the bootstrap draws
    them all) and one count of the distinct counted items."""
    import ibis

    counted = ((answers_expr["is_vulnerable"] == True)  # noqa: E712
               & answers_expr["said_vulnerable"].notnull()
               & answers_expr["target_found"].notnull()).fill_null(False)
    found = ibis.ifelse(counted, answers_expr["target_found"].cast("float64"), 0.0)
    sums = (answers_expr.group_by(["model", cluster])
            .aggregate(__kbench_num=found.sum(), __kbench_den=counted.cast("float64").sum())
            .to_pyarrow().to_pandas())
    names = pd.Index([str(m) for m in models])
    model = names.get_indexer(sums["model"].astype(str))
    sums = sums[model >= 0]
    model = model[model >= 0]
    labels, unit = np.unique(sums[cluster].astype(str).to_numpy(), return_inverse=True)
    num = np.zeros((len(labels), len(names)))
    den = np.zeros((len(labels), len(names)))
    np.add.at(num, (unit, model), sums["__kbench_num"].to_numpy(dtype=float))
    np.add.at(den, (unit, model), sums["__kbench_den"].to_numpy(dtype=float))
    key = [c for c in item_key if c in answers_expr.columns]
    answered = answers_expr.filter(counted).select("model", *key).distinct()
    per_model = answered.group_by("model").aggregate(n=answered.count())
    items = answered.select(*key).distinct().count()
    few = per_model.aggregate(least=per_model["n"].min()).to_pyarrow().column(0)[0].as_py()
    total = int(items.to_pyarrow().as_py())
    return num, den, bool(total) and few is not None and int(few) < total


def judge_names(table: Any, labels: Labels | None = None) -> list[str]:
    """The judges of a judged table as the loader labels them (stripped, a blank one
    missing), sorted. ``labels``: ``table``'s distinct labels when the caller has them (the
    validation's): the names are then theirs, no query."""
    from kbench_core.engines.keys import _loader_text

    values = None if labels is None else labels.of("judge")
    if values is not None:
        return sorted({str(v).strip() for v in values if str(v).strip()})
    names = (table.select(judge=_loader_text(table, "judge", strip=True)).distinct()
             .to_pyarrow().column(0).to_pylist())
    return sorted(str(n) for n in names if n is not None)
