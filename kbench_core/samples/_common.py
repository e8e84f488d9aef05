"""Helpers shared by the sample generators: option checks, seeded generators, labels."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

# ================================================================================== helpers


def _names(option: str, values: Sequence[str]) -> tuple[str, ...]:
    """A non-empty tuple of distinct names, or a ValueError naming ``option``."""
    if isinstance(values, str):
        raise TypeError(f"{option} must be a sequence of names, not the string {values!r}")
    names = tuple(str(v) for v in values)
    if not names:
        raise ValueError(f"{option} must name at least one item")
    if len(set(names)) != len(names):
        repeated = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"{option} repeats {', '.join(map(repr, repeated))}")
    return names


def _count(option: str, value: int, minimum: int) -> int:
    """An int >= ``minimum``, or a ValueError naming ``option``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{option} must be an int, got {value!r}")
    if value < minimum:
        raise ValueError(f"{option} must be at least {minimum}, got {value}")
    return int(value)


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(_count("seed", seed, 0))


def _labels(values: Sequence[object] | np.ndarray, codes: np.ndarray) -> pd.Categorical:
    """``values[codes]`` as a categorical, categories in order of first appearance in ``values``.

    A code of -1, or a missing value in ``values``, gives a missing cell. Costs O(rows) integer
    work, whatever the number of rows: the labels are built once, at the level they vary.
    """
    inverse, uniques = pd.factorize(np.asarray(values, dtype=object))
    lookup = np.append(inverse, -1)  # code -1 picks the trailing -1 (missing)
    return pd.Categorical.from_codes(lookup[codes], categories=pd.Index(uniques, dtype=object))


def _numbered(prefix: str, count: int, *, width: int, start: int = 1) -> np.ndarray:
    """``prefix`` followed by the numbers start..start+count-1 zero-padded to ``width``."""
    numbers = pd.Series(np.arange(start, start + count)).astype(str).str.zfill(width)
    return (prefix + numbers).to_numpy(dtype=object)


def _round_half_up(values: np.ndarray) -> np.ndarray:
    """Nearest integer, halves up; the 1e-9 absorbs float noise such as 2.4999999999999996."""
    return np.floor(np.asarray(values, dtype=float) + 0.5 + 1e-9).astype(np.int64)


SIGNIFICANT_DIGITS = 10
"""Significant digits of every computed float the generators write.

A transcendental such as ``arctanh`` may differ in its last bit between CPUs (NumPy dispatches
to SIMD kernels, e.g. SVML on AVX-512, and libm has FMA variants), and the shortest round-trip
form of a float shows that bit. Rounded to 10 digits, a one-ulp difference (about 1e-16 of the
value) changes the written digits only when the value lies within 1e-16 of a rounding boundary
(a chance of about 1e-6 per value), and the written numbers are still far more precise than any
metric they feed.
"""


def _significant(values: np.ndarray | pd.Series, digits: int = SIGNIFICANT_DIGITS) -> np.ndarray:
    """``values`` rounded to ``digits`` significant digits (NaN stays NaN).

    Rounded through Python's correctly rounded float formatting (``'%.{digits}g'``), which gives
    the same digits on every machine; a power-of-ten scale computed with ``log10`` could itself
    differ by an ulp at a boundary.
    """
    flat = np.asarray(values, dtype=float).ravel()
    spec = f"{{:.{digits}g}}"
    rounded = np.array([float(spec.format(v)) for v in flat.tolist()], dtype=float)
    return rounded.reshape(np.shape(values))


def _within(group_sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For contiguous groups of the given sizes: the group of each element and its index in
    the group (0..size-1)."""
    group = np.repeat(np.arange(group_sizes.size), group_sizes)
    starts = np.cumsum(group_sizes) - group_sizes
    return group, np.arange(group.size) - starts[group]


def _ceil_div(a: int, b: int) -> int:
    """How many of 0..a-1 are multiples of b."""
    return -(-a // b)




# ================================================================================== writing


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """CSV as kbench reads it: ``true``/``false``, empty cells for missing values, floats in
    their shortest round-trip form (so a reload gives the same numbers), ``\\n`` line ends."""
    out = frame.copy()
    for name in out.columns:
        if out[name].dtype == bool:
            out[name] = np.where(out[name].to_numpy(), "true", "false")
        elif isinstance(out[name].dtype, pd.BooleanDtype):  # true / false / empty
            out[name] = out[name].map({True: "true", False: "false"}).astype(object)
    return out.to_csv(index=False, lineterminator="\n").encode("utf-8")


def write_csv(path: str | Path, frame: pd.DataFrame) -> Path:
    """Write ``frame`` to ``path`` as :func:`csv_bytes` (what a family's ``sample`` calls)."""
    path = Path(path)
    path.write_bytes(csv_bytes(frame))
    return path
