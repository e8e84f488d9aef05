"""What every agreement coefficient starts from: the names and constants (human, consensus,
item key, labels, Landis & Koch bands), the judges and labels of a run, and the judgements laid
out on an items × judges grid with each label coded once (:class:`_Layout`, :class:`_Label`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

import numpy as np
import pandas as pd

from kbench_core.schema import FINDING_COUNTS, TYPE_MATCHES

HUMAN = "human"
# The judge label of the consensus rows (a multi-judge run's main table is theirs:
# docs/metrics/agreement.md).
CONSENSUS = "majority"
ITEM_KEY: tuple[str, ...] = ("sample", "model", "prompt_type")
# Ground truth of the item, the same whichever judge read the answer: copied, never voted on.
TRUTH_COLUMNS: tuple[str, ...] = ("is_vulnerable", "severity", "vuln_type", "true_lines")
REASONING: tuple[str, ...] = ("rcir", "ava", "fsv")
ORDERED_LABELS: dict[str, tuple[str, ...]] = {"type_match": TYPE_MATCHES}
# What the detector itself said (its verdict and stated confidence): every judge copies it
# from the same answer, so agreement on it measures parsing, not judgement. Left out of the
# labels offered for agreement (still accepted when named).
DETECTOR_FIELDS: tuple[str, ...] = ("said_vulnerable", "confidence")
DEFAULT_LABELS: tuple[str, ...] = ("target_found", "type_match", "rcir", "ava", "fsv")
# Labels a failed judgement can count as "not found" (BlockBench's convention, failed_as).
FOUND_LABELS: tuple[str, ...] = ("target_found", "partial_found")
JUDGED_COLUMNS: tuple[str, ...] = ("said_vulnerable", "target_found", "partial_found",
                                   "type_match", "confidence", "rcir", "ava", "fsv",
                                   *FINDING_COUNTS, "claimed_lines")
# Labels whose missing majority the consensus reports (they decide the headline metrics).
REPORTED: tuple[str, ...] = ("said_vulnerable", "target_found", "partial_found", "type_match")
# Landis & Koch (1977): upper bound of each band; below 0 is "poor".
LANDIS_KOCH: tuple[tuple[float, str], ...] = (
    (0.0, "poor"), (0.20, "slight"), (0.40, "fair"), (0.60, "moderate"), (0.80, "substantial"),
    (1.0, "almost perfect"))
# The krippendorff package builds a units × values × values array: past this many distinct
# values an interval alpha uses the closed form below instead (same number, O(units) memory).
MAX_ALPHA_VALUES = 256
MISSING = "(missing)"

Level = Literal["nominal", "ordinal", "interval"]
Weights = Literal["linear", "quadratic"] | None
Ci = Literal["asymptotic", "bootstrap"] | None
FailedAs = Literal["missing", "not_found"]
FAILED_AS: tuple[str, ...] = ("missing", "not_found")


def _check_boot(n_boot: int, random_state: int) -> None:
    if isinstance(n_boot, bool) or not isinstance(n_boot, int | np.integer) or n_boot < 1:
        raise ValueError(f"n_boot must be a whole number >= 1; got {n_boot!r}")
    if isinstance(random_state, bool) or not isinstance(random_state, int | np.integer):
        raise ValueError(f"random_state must be a whole number; got {random_state!r}")


def judges(judged: pd.DataFrame) -> list[str]:
    """The judges of a judged frame: the LLM judges sorted by name, then ``human`` if present."""
    if "judge" not in judged:
        return []
    names = sorted({str(v) for v in pd.unique(judged["judge"].dropna())})
    return [n for n in names if n != HUMAN] + [n for n in names if n == HUMAN]


def judged_labels(judged: pd.DataFrame, *, detector: bool = False) -> list[str]:
    """Columns of ``judged`` that judges fill in and that hold at least one value: the SPEC's
    judged columns first, then any extra column that is neither a key nor ground truth.

    The detector's own fields (:data:`DETECTOR_FIELDS`: ``said_vulnerable``, ``confidence``)
    are left out unless ``detector``: each judge copies them from the same answer."""
    reserved = {*ITEM_KEY, "judge", *TRUTH_COLUMNS, "run", "failed_judgement",
                *(() if detector else DETECTOR_FIELDS)}
    known = [c for c in JUDGED_COLUMNS if c in judged and c not in reserved]
    extra = [c for c in judged.columns if c not in reserved and c not in JUDGED_COLUMNS]
    return [c for c in (*known, *extra) if judged[c].notna().any()]


def default_level(judged: pd.DataFrame, label: str) -> Level:
    """The natural level of measurement of a label: ``ordinal`` for ordered categories
    (``type_match``), ``interval`` for numbers, ``nominal`` otherwise (yes/no included)."""
    return _label(judged, label).level


def interpret(value: float | np.ndarray | pd.Series) -> str | np.ndarray:
    """Landis & Koch's (1977) words for a κ (or α): below 0 poor, up to 0.20 slight, 0.40
    fair, 0.60 moderate, 0.80 substantial, then almost perfect; NaN is "undefined".

    >>> interpret(0.75)
    'substantial'
    >>> import numpy as np
    >>> interpret(np.array([-0.1, 0.2, 0.9])).tolist()
    ['poor', 'slight', 'almost perfect']

    References
    ----------
    Landis, J. R. & Koch, G. G. (1977). The measurement of observer agreement for categorical
    data. *Biometrics* 33(1), 159–174.
    """
    values = np.asarray(value, dtype=float)
    upper = np.array([b for b, _ in LANDIS_KOCH[1:-1]])
    names = np.array([w for _, w in LANDIS_KOCH] + ["undefined"], dtype=object)
    # Right-closed bands from 0: 0.00-0.20 slight, 0.21-0.40 fair, ... (Landis & Koch's table).
    index = np.searchsorted(upper, np.nan_to_num(values), side="left") + 1
    index = np.where(values < 0, 0, index)
    index = np.where(np.isnan(values), len(names) - 1, index)
    words = names[index]
    return str(words) if np.ndim(value) == 0 else words


@dataclass(frozen=True)
class _Layout:
    """The rows of a judged frame placed on an items × judges grid."""

    judges: tuple[str, ...]    # grid columns: LLM judges sorted, then ``human`` if asked for
    rows: np.ndarray           # positions (in the frame) of the rows on the grid
    item: np.ndarray           # item of each such row
    judge: np.ndarray          # grid column of each such row
    n_items: int
    first: np.ndarray          # per item, the position (in the frame) of its first row
    source: pd.DataFrame       # the judged frame (read only for :attr:`items`)
    keys: tuple[str, ...]      # its item key columns

    @cached_property
    def items(self) -> pd.DataFrame:
        """Item key columns, one row per item, in key order (built on first use: the
        coefficients never need them, and on a small run building them costs as much as the
        coefficient itself)."""
        return self.source[list(self.keys)].iloc[self.first].reset_index(drop=True)

    def grid(self, values: np.ndarray, fill: Any) -> np.ndarray:
        """Per-row ``values`` (already restricted to :attr:`rows`) as an items × judges array."""
        out = np.full((self.n_items, len(self.judges)), fill, dtype=values.dtype)
        out[self.item, self.judge] = values
        return out

    def among(self, names: Sequence[str]) -> _Layout:
        """The same items with only the grid columns of judges ``names`` (in that order): a
        pair of judges read off the whole run's layout instead of a layout of the pair's own
        rows. Items neither judge labelled stay, with no judgement: every coefficient leaves
        an item with fewer than two judgements out, as it leaves one that is not there."""
        column = np.full(len(self.judges), -1, dtype=np.int64)
        column[[self.judges.index(n) for n in names]] = np.arange(len(names))
        judge = column[self.judge]
        keep = judge >= 0
        return _Layout(judges=tuple(names), rows=self.rows[keep], item=self.item[keep],
                       judge=judge[keep], n_items=self.n_items, first=self.first,
                       source=self.source, keys=self.keys)

    @cached_property
    def slots(self) -> np.ndarray:
        """Per item and judge, the position (in the frame) of its row, -1 where the judge has
        none: built once, so that each label's grid is one gather (:meth:`take`) rather than
        a selection of its rows then a scatter of them (half the memory traffic)."""
        return self.grid(self.rows, -1)

    def take(self, values: np.ndarray, fill: Any) -> np.ndarray:
        """Per-frame-row ``values`` (every row of the frame) as an items × judges array,
        ``fill`` where a judge has no row for the item; the same array as
        ``grid(values[rows], fill)``."""
        slots = self.slots
        if self.rows.size == slots.size:  # every judge labelled every item (cells are unique)
            return values[slots]
        missing = slots < 0  # some cells are empty, so the frame has rows: 0 is a position
        out = values[np.where(missing, 0, slots)]
        out[missing] = fill
        return out


def _sort_codes(series: pd.Series) -> tuple[np.ndarray, int]:
    """Codes of a key column that sort as ``groupby(sort=True, dropna=False)`` sorts it
    (category order for categoricals, value order otherwise, missing last), and how many."""
    values = series.array
    if isinstance(values, pd.Categorical):
        codes, size = values.codes.astype(np.int64), len(values.categories)
    else:
        found, uniques = pd.factorize(series, sort=True)
        codes, size = found.astype(np.int64), len(uniques)
    if (codes < 0).any():
        codes = np.where(codes < 0, size, codes)
    return codes, size + 1


# Layouts made inside :func:`shared_layouts`, by frame (held, so that its id is not reused).
_SHARED: ContextVar[dict[tuple[int, bool], tuple[pd.DataFrame, _Layout]] | None] = ContextVar(
    "kbench_shared_layouts", default=None)


@contextmanager
def shared_layouts() -> Iterator[None]:
    """Within the block, every coefficient asked about the same frame places its rows once:
    :func:`kbench_core.agreement.summarize` asks four coefficients of one frame, each of
    which would lay out its 600k rows again (a quarter of a label change on a big run)."""
    token = _SHARED.set({})
    try:
        yield
    finally:
        _SHARED.reset(token)


def _layout(judged: pd.DataFrame, *, human: bool) -> _Layout:
    memo = _SHARED.get()
    if memo is None:
        return _new_layout(judged, human=human)
    held = memo.get((id(judged), human))
    if held is None or held[0] is not judged:
        held = memo[(id(judged), human)] = (judged, _new_layout(judged, human=human))
    return held[1]


def _new_layout(judged: pd.DataFrame, *, human: bool) -> _Layout:
    missing = [c for c in ("sample", "model", "judge") if c not in judged]
    if missing:
        raise ValueError(f"a judged frame needs the column(s) {', '.join(missing)}")
    judge_values = judged["judge"].array
    if isinstance(judge_values, pd.Categorical):
        # The judges present, in category order (factorize would rescan the rows for them).
        codes = judge_values.codes.astype(np.int64)
        present = np.flatnonzero(np.bincount(codes[codes >= 0],
                                             minlength=len(judge_values.categories)))
        all_names = [str(n) for n in judge_values.categories]
        names = [all_names[i] for i in present]
        slot = np.full(len(all_names), -1, dtype=np.int64)
        slot[present] = np.arange(present.size)
        codes = np.where(codes >= 0, slot[codes], -1)
    else:
        codes, uniques = pd.factorize(judged["judge"])
        names = [str(n) for n in uniques]
    llm = sorted({n for n in names if n != HUMAN})
    order = llm + ([HUMAN] if human and HUMAN in names else [])
    position = {n: i for i, n in enumerate(order)}
    lut = np.array([position.get(n, -1) for n in names] + [-1], dtype=np.int64)
    judge = lut[codes]
    rows = np.flatnonzero(judge >= 0)
    keys = [c for c in ITEM_KEY if c in judged]
    # The items in key order: each key column's sortable codes combined in mixed radix, so
    # that one np.unique replaces a groupby over text keys (most of the cost on small runs).
    combined = np.zeros(rows.size, dtype=np.int64)
    bound = 1
    for column in keys:
        codes_k, size = _sort_codes(judged[column])
        if bound * size >= 2**62:  # re-number before the mixed radix overflows
            combined = np.unique(combined, return_inverse=True)[1].ravel().astype(np.int64)
            bound = int(combined.max()) + 1 if combined.size else 1
        combined = combined * size + codes_k[rows]
        bound *= size
    _, first, item = np.unique(combined, return_index=True, return_inverse=True)
    item = item.ravel().astype(np.int64)
    n_items = int(first.size)
    judge = judge[rows]
    if item.size:
        cell = item * max(len(order), 1) + judge
        repeats = np.bincount(cell, minlength=n_items * len(order))
        if repeats.max() > 1:
            at = int(np.flatnonzero(repeats[cell] > 1)[0])
            where = ", ".join(f"{k}={judged[k].iat[rows[at]]!s}" for k in keys)
            raise ValueError(f"judge {order[judge[at]]!r} labels the item ({where}) more than "
                             "once: the key (sample, model, prompt_type, judge) must be unique")
    return _Layout(judges=tuple(order), rows=rows, item=item, judge=judge, n_items=n_items,
                   first=rows[first], source=judged, keys=tuple(keys))


@dataclass(frozen=True)
class _Label:
    """One label column as integer codes (categorical) or floats (numeric)."""

    name: str
    numeric: bool
    codes: np.ndarray | None       # per frame row, -1 = missing (categorical labels)
    values: np.ndarray | None      # per frame row, NaN = missing (numeric labels)
    categories: tuple[Any, ...]    # categorical labels: the values in code order
    ordered: bool
    boolean: bool

    @property
    def level(self) -> Level:
        if self.numeric:
            return "interval"
        return "ordinal" if self.ordered and not self.boolean else "nominal"


def _is_boolean(series: pd.Series) -> bool:
    if pd.api.types.is_bool_dtype(series.dtype):
        return True
    if series.dtype == object:
        return pd.api.types.infer_dtype(series, skipna=True) == "boolean"
    return False


def _label(judged: pd.DataFrame, label: str) -> _Label:
    if not isinstance(label, str) or label not in judged.columns:
        offered = ", ".join(judged_labels(judged)) or "none"
        raise ValueError(f"there is no column {label!r} to compare judges on; labels in this "
                         f"frame: {offered}")
    if label in (*ITEM_KEY, "judge"):
        raise ValueError(f"{label!r} identifies the item or the judge; it is not a label")
    series = judged[label]
    if series.dtype == bool:  # plain numpy bools: no missing value to mark
        return _Label(label, False, series.to_numpy().astype(np.int64), None, (False, True),
                      True, True)
    if _is_boolean(series):
        codes = series.astype("boolean").to_numpy(dtype=np.int64, na_value=-1)
        return _Label(label, False, codes, None, (False, True), True, True)
    if pd.api.types.is_numeric_dtype(series.dtype):
        if isinstance(series.dtype, np.dtype) and series.dtype.kind in "iuf":
            values = series.to_numpy().astype(float)  # numpy numbers hold no NA: no scan
        else:
            values = series.to_numpy(dtype=float, na_value=np.nan)
        if np.isinf(values).any():
            raise ValueError(f"label {label!r} holds infinite values")
        return _Label(label, True, None, values, (), True, False)
    if isinstance(series.dtype, pd.CategoricalDtype):
        values = series.array
        codes = values.codes.astype(np.int64)
        categories = list(values.categories)
        ordered = bool(values.ordered)
    else:
        try:
            codes, uniques = pd.factorize(series, sort=True)
        except TypeError:  # lists (line numbers) in a frame that did not pass io
            codes, uniques = pd.factorize(series.map(str).where(series.notna()), sort=True)
        codes, categories, ordered = codes.astype(np.int64), list(uniques), False
    if label in ORDERED_LABELS:
        order = ORDERED_LABELS[label]
        unknown = sorted({str(c) for c in categories} - set(order))
        if unknown:
            raise ValueError(f"label {label!r} holds {', '.join(map(repr, unknown))}; "
                             f"expected one of {', '.join(map(repr, order))}")
        lut = np.array([order.index(str(c)) for c in categories] + [-1], dtype=np.int64)
        codes, categories, ordered = lut[codes], list(order), True
    return _Label(label, False, codes, None, tuple(categories), ordered, False)


def _categorical(label: _Label, who: str) -> None:
    if label.numeric:
        raise ValueError(
            f"{who} is for categorical labels; {label.name!r} is numeric: use "
            f"krippendorff_alpha(judged, {label.name!r}, level='interval') instead")


def _need_judges(layout: _Layout, who: str, *, human: bool = False) -> None:
    n_llm = sum(j != HUMAN for j in layout.judges)
    if human:
        if n_llm < 1 or HUMAN not in layout.judges:
            raise ValueError(f"{who} needs a judge named 'human' and at least one other judge")
    elif n_llm < 2:
        raise ValueError(f"{who} needs at least two judges other than 'human'; the frame has "
                         f"{n_llm}")


def _code_grid(layout: _Layout, label: _Label) -> np.ndarray:
    assert label.codes is not None
    return layout.take(label.codes, -1)


def _value_grid(layout: _Layout, label: _Label) -> np.ndarray:
    assert label.values is not None
    return layout.take(label.values, np.nan)


def voters(judged: pd.DataFrame, chosen: Sequence[str] | None = None) -> list[str]:
    """The LLM judges that vote in a consensus: ``chosen`` (checked against the frame), or every
    judge other than ``human``; sorted by name.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"judge": ["b", "a", "human", "c"]})
    >>> voters(frame), voters(frame, ["c", "a"])
    (['a', 'b', 'c'], ['a', 'c'])
    """
    llm = [j for j in judges(judged) if j != HUMAN]
    if chosen is None:
        return llm
    if isinstance(chosen, str):
        chosen = [chosen]
    names = [str(j) for j in chosen]
    if not names:
        raise ValueError("judges must name at least one judge; the run's judges other than "
                         f"'human': {', '.join(llm) or 'none'}")
    if HUMAN in names:
        raise ValueError("'human' is the reference, not a voter: the consensus is made of the "
                         f"LLM judges ({', '.join(llm) or 'none'})")
    unknown = [n for n in dict.fromkeys(names) if n not in llm]
    if unknown:
        raise ValueError(f"no judge {', '.join(map(repr, unknown))} in this run; its judges "
                         f"other than 'human': {', '.join(llm) or 'none'}")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"judges names {', '.join(map(repr, repeated))} more than once")
    return sorted(names)


def check_min_votes(min_votes: int | None, n_judges: int) -> int:
    """``min_votes`` checked against the ``n_judges`` voting (default: a strict majority of
    them, ⌊J/2⌋ + 1)."""
    if min_votes is None:
        return n_judges // 2 + 1
    if isinstance(min_votes, bool) or not isinstance(min_votes, int | np.integer) \
            or not 1 <= min_votes <= n_judges:
        raise ValueError(f"min_votes must be a whole number from 1 to {n_judges} (the judges "
                         f"that vote); got {min_votes!r}")
    return int(min_votes)


def failed_rule(label: str, failed_as: FailedAs) -> FailedAs:
    """The rule actually applied to ``label``'s failed judgements: ``not_found`` only for the
    found labels (:data:`FOUND_LABELS`); any other label keeps them missing."""
    if failed_as not in FAILED_AS:
        raise ValueError(f"failed_as must be one of {', '.join(map(repr, FAILED_AS))}; "
                         f"got {failed_as!r}")
    return "not_found" if failed_as == "not_found" and label in FOUND_LABELS else "missing"


def count_failed_as_not_found(judged: pd.DataFrame, label: str) -> pd.DataFrame:
    """The judgements of ``label`` with every failed LLM judgement counted as "not found".

    A failed judgement is an item (sample × detector × prompt type) that some judge labelled
    and another did not: no row for that judge (BlockBench's reader leaves failed records
    out) or a missing value. BlockBench's own agreement and consensus count it as a "no"
    (``docs/metrics/agreement.md``); kbench's default keeps it missing. Returns a long frame
    (the item key, ``judge``, ``label``) with every LLM judge's value on every item, ``human``
    rows as they were, so that any coefficient of the package can be computed from it
    unchanged. Only the found labels (:data:`FOUND_LABELS`) have a "not found"; others raise.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"sample": ["s1", "s1", "s2"], "model": "m",
    ...                       "judge": ["a", "b", "a"], "target_found": [True, None, True]})
    >>> count_failed_as_not_found(frame, "target_found")["target_found"].tolist()
    [True, False, True, False]
    """
    if label not in FOUND_LABELS:
        raise ValueError(f"only {', '.join(FOUND_LABELS)} can count a failed judgement as "
                         f"'not found'; {label!r} cannot")
    spec = _label(judged, label)
    if not spec.boolean:
        raise ValueError(f"label {label!r} must be yes/no to count failures as 'not found'")
    layout = _layout(judged, human=True)
    grid = _code_grid(layout, spec)
    llm = np.array([j != HUMAN for j in layout.judges])
    no = spec.categories.index(False)
    grid = np.where((grid < 0) & llm[None, :], no, grid)
    item, judge = np.nonzero(grid >= 0)  # row-major: each item's judges in order
    codes = grid[item, judge]
    out = layout.items.iloc[item].reset_index(drop=True)
    out["judge"] = np.array(layout.judges, dtype=object)[judge]
    out[label] = pd.array(codes == 1, dtype="boolean")
    return out
