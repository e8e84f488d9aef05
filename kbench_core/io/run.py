"""The loaded run (:class:`Run`), the detection of its kind, and load progress reporting."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from kbench_core import families
from kbench_core.native._advice import advise_columns
from kbench_core.problems import (
    RunFormatError,
    Source,
)
from kbench_core.problems import fail as _fail
from kbench_core.readers import (
    _clean_name,
)
from kbench_core.schema import Kind, KindSpec


@dataclass(frozen=True)
class Run:
    """One loaded, validated run.

    ``frame`` holds the canonical columns (categoricals for repeated labels) plus any extra
    columns the file had; ``meta`` records the source file, format, size, content hash and the
    models; ``warnings`` lists what the loader noticed but accepted (skipped rows, BOMs,
    re-encoded text).
    """

    name: str
    kind: Kind
    frame: pd.DataFrame = field(repr=False)
    meta: Mapping[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    @property
    def models(self) -> list[str]:
        return sorted(map(str, self.frame["model"].unique()))

    @property
    def content_hash(self) -> str:
        return str(self.meta.get("sha256", ""))

    def __len__(self) -> int:
        """The run's rows; a bias run reduced by an engine and kept weighted (one row per
        distinct tuple, :func:`kbench_core.engines.reduce.finish`) counts the rows behind
        its tuples, as its repeated frame would."""
        from kbench_core.kahne._common import rows_of

        return rows_of(self.frame)


class LazyTables(Mapping[str, Any]):
    """A :class:`SummedRun`'s tables, each computed the first time it is read: an engine's
    query runs only for what a command reads (``kbench metrics`` of a replication run reads
    ECS's sums, not PAS's or the scatter's). ``given`` are computed already; ``later`` maps a
    name to the function that computes it, called once."""

    def __init__(self, given: Mapping[str, Any], later: Mapping[str, Callable[[], Any]]
                 ) -> None:
        self._tables = dict(given)
        self._later = dict(later)

    def __getitem__(self, name: str) -> Any:
        if name not in self._tables and name in self._later:
            self._tables[name] = self._later.pop(name)()
        return self._tables[name]

    def __iter__(self):
        return iter([*self._tables, *self._later])

    def __len__(self) -> int:
        return len(self._tables) + len(self._later)


@dataclass(frozen=True)
class SummedRun(Run):
    """A run an engine computed without fetching its rows (``frame`` is empty): its name,
    kind and provenance (``meta``, with its ``rows`` and ``models``), and its family's
    sufficient tables (``tables``, from ``Family.engine_run``), from which the family's
    catalog items (``Item.from_tables``) and profile rows are finished."""

    tables: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def models(self) -> list[str]:
        return sorted(map(str, self.meta.get("models", ())))

    def __len__(self) -> int:
        return int(self.meta.get("rows", 0))


# ---------------------------------------------------------------------------- kind detection


def detect_kind(columns: Sequence[str]) -> Kind | None:
    """The run kind whose signature columns are all present, or None.

    Checked from the most to the least specific signature so that a judged or replication
    file that also happens to have a ``score`` column is not taken for a bias run.
    """
    return families.detect(columns)


def _undetected(filename: str, columns: Sequence[str]) -> RunFormatError:
    advice = advise_columns(columns)
    if advice is not None:
        return _fail(filename, advice)
    names = set(columns)

    def closeness(spec: KindSpec) -> tuple[int, int]:
        return (len(spec.signature & names) + bool(spec.signature_any & names),
                -len(spec.signature_none & names))

    best = max((f.spec for f in families.all_families()), key=closeness)
    needs = sorted(best.signature - names)
    if best.signature_any and not best.signature_any & names:
        needs.append("one of " + "/".join(sorted(best.signature_any)))
    extra = sorted(best.signature_none & names)
    what = (f"which also needs: {', '.join(needs)}" if needs else "")
    if extra:
        what += ("; " if what else "which must not have: ") + (
            f"and must not have {', '.join(extra)}" if needs else ", ".join(extra))
    shown = ", ".join(list(columns)[:12]) + (" ..." if len(columns) > 12 else "")
    return _fail(filename, f"cannot tell the run kind from the columns ({shown}). The closest "
                           f"kind is '{best.kind}' ({best.description}), {what}. Rename "
                           "columns with load_run(..., columns={'their name': 'our name'}) "
                           "or pass kind=")


class _CallbackFailed(Exception):
    """Carries an exception raised by the caller's progress callback through the loader's
    boundary (which turns every other exception into a RunFormatError)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


class _Progress:
    """The optional progress callback of :func:`load_run`: called at stage starts only, with
    a fraction that never goes back."""

    def __init__(self, callback: Callable[[float, str], None] | None) -> None:
        self.callback = callback
        self.last = 0.0
        self.stages: list[str] = []

    def __call__(self, fraction: float, stage: str) -> None:
        # A stage is reported once: a big CSV that the streaming parser hands back to the
        # whole-text one does not start "parse" twice.
        if self.callback is None or stage in self.stages:
            return
        self.stages.append(stage)
        self.last = max(self.last, fraction)
        try:
            self.callback(self.last, stage)
        except Exception as exc:
            raise _CallbackFailed(exc) from exc


def _source_name(source: Source) -> str:
    if isinstance(source, tuple):
        return _clean_name(str(source[0]))
    return _clean_name(Path(source).name or str(source))
