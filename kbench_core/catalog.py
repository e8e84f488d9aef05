"""Every figure and table kbench makes for a run kind: the one list behind ``kbench figures``,
``kbench metrics``, ``kbench report`` and the app's Export page, so they never disagree.

An :class:`Item` builds from a validated run frame either one object or several (one BMS curve
per bias, one domain heatmap per model); each comes with a stable name (``bms_curves-
anchoring_effect``) used as the file name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd
import plotly.graph_objects as go

# safe_name lives in text (below every module that names files); catalog and export use it
# and still offer it (old import paths).
from kbench_core.text import safe_name

__all__ = ["Item", "heat_pages", "one", "paged", "safe_name", "split_pages"]

Built = go.Figure | pd.DataFrame


@dataclass(frozen=True)
class Item:
    """One figure or table of a run kind.

    ``build(frame, options)`` yields ``(suffix, object)`` pairs; the file name is ``name`` or
    ``name-suffix``. ``best`` says, per table column, whether the highest (``"max"``) or lowest
    (``"min"``) value is best (bold in LaTeX and Markdown). ``empty`` says, in words for the
    user, why the item can yield nothing for a valid run (and what to load instead); the
    commands print it when it does, rather than an empty table or nothing at all.
    """

    name: str
    title: str
    what: Literal["figure", "table"]
    build: Callable[..., Iterator[tuple[str, Built]]]
    best: Mapping[str, str] = field(default_factory=dict)
    main: bool = False
    uses_meta: bool = False  # build(frame, options, meta): needs the run's meta (summaries)
    empty: str = ""
    # from_tables(tables, options): the same objects from a SummedRun's sufficient tables
    # (an engine's, no row fetched); None: the item needs the rows
    from_tables: Callable[..., Iterator[tuple[str, Built]]] | None = None

    def objects(self, frame: pd.DataFrame, options: Mapping[str, Any] | None = None, *,
                meta: Mapping[str, Any] | None = None,
                tables: Mapping[str, Any] | None = None) -> Iterator[tuple[str, Built]]:
        """``(file stem, figure or table)`` for every object this item makes of ``frame``
        (``meta``: the run's :attr:`~kbench_core.io.Run.meta`, for items that use it;
        ``tables``: a :class:`~kbench_core.io.SummedRun`'s sufficient tables, which it is
        made from instead, or nothing when the item needs the rows)."""
        if tables is not None:
            built = (self.from_tables(tables, options or {}) if self.from_tables is not None
                     else iter(()))
        elif self.uses_meta:
            built = self.build(frame, options or {}, meta or {})
        else:
            built = self.build(frame, options or {})
        for suffix, obj in built:
            stem = f"{self.name}-{safe_name(suffix)}" if suffix else self.name
            for k, page in enumerate(paged(obj), start=1):
                yield (stem if page is obj else f"{stem}-p{k}"), page


def paged(obj: Built) -> list[Built]:
    """A figure too tall for a page (more rows than fit 9 in at one column) as pages of rows
    (:func:`kbench_core.figures.base.row_pages`); anything else as it is. Every catalog figure
    passes through here, so ``kbench figures``, ``kbench report`` and the Export page never
    make a figure taller than a page."""
    if not isinstance(obj, go.Figure):
        return [obj]
    from kbench_core.figures.base import row_pages

    return row_pages(obj)


def one(obj: Built) -> Iterator[tuple[str, Built]]:
    yield "", obj


# Models per reliability page: small multiples, three to a row in the app and two at one
# column, where three rows of two (with the title and legend) still fit a 9 in page.
RELIABILITY_PAGE = 6


def split_pages(names: list[str], size: int) -> list[list[str]]:
    """``names`` in pages of at most ``size`` (one page when they fit)."""
    return [names[i:i + size] for i in range(0, len(names), size)] or [[]]


def heat_pages(frame: pd.DataFrame, key: str) -> Iterator[tuple[str, pd.DataFrame]]:
    """A heatmap's rows in pages of at most
    :data:`~kbench_core.figures.base.MAX_HEAT_ROWS`, by the longer of its two dimensions."""
    from kbench_core.figures.base import MAX_HEAT_ROWS

    names = sorted(map(str, frame[key].unique()))
    pages = split_pages(names, MAX_HEAT_ROWS)
    for k, page in enumerate(pages, start=1):
        yield ("" if len(pages) == 1 else f"p{k}"), frame[frame[key].astype(str).isin(page)]


