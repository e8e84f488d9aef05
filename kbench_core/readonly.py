"""Frames several holders share, made read-only so that no holder can change another's numbers.

The app's run cache hands two sessions that upload the same bytes the very same frame, and a
saved run validated once serves every session of a server (``kbench_app.state``,
:mod:`kbench_core.workspace`). A page or an export that wrote into such a frame would change
the numbers another user sees. :func:`freeze` makes a frame read-only in place (the same
object, every reference to it kept):

* its block manager refuses every change pandas makes through it: a cell or a slice
  (``frame.loc[i, col] = v``, ``.iloc``, ``.at``), a column replaced, added or deleted
  (``frame[col] = v``, ``insert``, ``del``), new column or row labels (``frame.columns =``);
  each raises ``ValueError`` naming the frame as shared. Under pandas' copy-on-write a write
  to a frame some view refers to copies the block first, so read-only arrays alone would let
  such a write through, changing the shared object;
* every NumPy array under it (columns, categorical codes, the data and masks of nullable
  columns) is read-only, so a write through ``frame[col].to_numpy()`` raises too (Arrow-backed
  text is immutable already).

Derived frames (a copy, a filter, a group-by, ``assign``) are new and writable as usual. The
``inplace=True`` methods (deprecated by pandas) are not caught; ``tests/test_shared_server.py``
runs every page and the exports on shared frames and compares them before and after.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
from pandas.core.internals.managers import BlockManager

__all__ = ["freeze", "is_frozen"]

# Where pandas keeps an extension array's NumPy buffers (codes, values, masks).
_BUFFERS = ("_ndarray", "_data", "_mask", "_codes")


def _arrays(frame: pd.DataFrame) -> Iterator[np.ndarray]:
    """Every NumPy array holding the frame's values."""
    for block in frame._mgr.blocks:  # the arrays themselves, not copies
        values = block.values
        if isinstance(values, np.ndarray):
            yield values
            continue
        for name in _BUFFERS:
            buffer = getattr(values, name, None)
            if isinstance(buffer, np.ndarray):
                yield buffer


_REFUSED = ("a run's frame is shared by every session holding the run and is read-only; "
            "copy it (frame.copy()) to change it")


class _FrozenManager(BlockManager):
    """A :class:`BlockManager` whose mutators raise. What it derives (copies, slices, the
    results of operations) is a plain, writable manager."""

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        # pandas makes derived managers with type(self)(...): plain ones
        return BlockManager(*args, **kwargs)

    @classmethod
    def from_blocks(cls, blocks: Any, axes: Any) -> Any:  # type: ignore[override]
        return BlockManager.from_blocks(blocks, axes)

    def equals(self, other: object) -> bool:
        # pandas compares managers of the same type: this one's blocks as a plain manager
        return BlockManager(self.blocks, self.axes, verify_integrity=False).equals(other)

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise ValueError(_REFUSED)

    iset = column_setitem = setitem = insert = idelete = set_axis = _refuse


def freeze(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` itself, made read-only (see the module docstring)."""
    if type(frame._mgr) is BlockManager:
        frame._mgr.__class__ = _FrozenManager
    for array in _arrays(frame):
        array.flags.writeable = False
    return frame


def is_frozen(frame: pd.DataFrame) -> bool:
    """Whether ``frame`` refuses writes (its manager and every array under it)."""
    return isinstance(frame._mgr, _FrozenManager) and not any(
        array.flags.writeable for array in _arrays(frame))
