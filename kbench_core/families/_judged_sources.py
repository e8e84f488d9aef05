"""What the judged family's catalog reads of a run, from its rows in memory
(:class:`FrameJudged`) or kept in an engine (:class:`EngineJudged`, issue 39): the answers of
each judge it is shown by, whether a column has a value, the fixed versions' table, Cohen's
κ between the judges and the judges' spread. Every catalog item is written once against
these methods, so a report of a run computed in DuckDB or Spark makes the same items, from
per-cluster sums, as one of its rows. A helper module of :mod:`kbench_core.families.judged`
(its name starts with ``_``, so the registry does not take it for a family)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import pandas as pd

from kbench_core.families._judges import (
    MAJORITY,
    ConsensusOptions,
    check_judges,
    judge_views,
    offered_judges,
)

__all__ = ["EngineJudged", "FrameJudged", "fixed_versions"]


def fixed_versions(judged: pd.DataFrame, *, judges: Sequence[str] | None = None,
                   consensus: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """:func:`kbench_core.vuln.fixed_claims` of, with several LLM judges in ``judged``, their
    consensus ``majority`` (:func:`kbench_core.agreement.consensus` with the
    :class:`ConsensusOptions` ``consensus``) first, then each of ``judges`` (default: every
    judge; ``majority`` among them is the consensus); empty when no answer assesses a fixed
    contract."""
    from kbench_core import vuln
    from kbench_core.agreement import judge_rows

    every = vuln.judges_of(judged)
    parts = []
    llm = [j for j in every if j != "human"]
    chosen = ConsensusOptions.from_mapping(consensus)
    if len(llm) > 1:
        from kbench_core.agreement import consensus as vote

        parts.append(vuln.fixed_claims(vote(judged, **chosen.consensus())))
    # each judge's TDR beside counts its failed judgements as the majority's (failed_as)
    parts += [vuln.fixed_claims(judge_rows(judged, judge, failed_as=chosen.failed_as),
                                judge=judge)
              for judge in (every if judges is None else judges) if judge != MAJORITY]
    kept = [p for p in parts if len(p)]
    return pd.concat(kept, ignore_index=True) if kept else parts[0]


def _judge_answers(table: Any, judge: str, chosen: ConsensusOptions,
                   files: tuple[str, ...], normalised_rows: Any = None,
                   names: Sequence[str] | None = None) -> Any:
    """The answers of ``judge`` made by the engine (:func:`kbench_core.engines.judged.answers`):
    the majority under ``chosen``'s voters, votes and rule, or one judge's rows under its
    ``failed_as``; what :func:`judge_views` gives of a frame."""
    from kbench_core.engines.judged import answers

    if judge == MAJORITY:
        return answers(table, judges=list(chosen.judges) or None, min_votes=chosen.min_votes,
                       failed_as=chosen.failed_as, files=files,
                       normalised_rows=normalised_rows, names=names)
    return answers(table, judge=judge, failed_as=chosen.failed_as, files=files,
                   normalised_rows=normalised_rows, names=names)


class FrameJudged:
    """A judged run's rows in memory, as the catalog reads them."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame

    @property
    def judges(self) -> pd.DataFrame:
        """A frame whose ``judge`` column names the run's judges (what
        :func:`~kbench_core.families.judged.check_judges` reads)."""
        return self.frame

    def views(self, options: Mapping[str, Any] | None) -> list[tuple[str, Any]]:
        """:func:`~kbench_core.families.judged.judge_views`: ``(judge, rows)``."""
        return judge_views(self.frame, options)

    def has_values(self, column: str) -> bool:
        """The run has ``column`` with at least one value."""
        return column in self.frame and bool(self.frame[column].notna().any())

    def fixed_versions(self, options: Mapping[str, Any] | None) -> pd.DataFrame:
        return fixed_versions(self.frame, consensus=options)

    def kappa(self, label: str, failed_as: str) -> tuple[pd.DataFrame, str]:
        """Cohen's κ of every pair of LLM judges on ``label`` under the ``failed_as`` rule,
        and the rule applied (:func:`kbench_core.agreement.labels_as_judged`)."""
        from kbench_core import agreement

        data, rule = agreement.labels_as_judged(self.frame, label, failed_as)  # type: ignore[arg-type]
        return agreement.pairwise_kappa(data, label), rule

    def spread(self, options: Mapping[str, Any] | None) -> pd.DataFrame:
        """:func:`kbench_core.agreement.judge_spread` under the consensus ``options``."""
        from kbench_core import agreement

        return agreement.judge_spread(self.frame,
                                      **ConsensusOptions.from_mapping(options).consensus())


class EngineJudged:
    """A judged run kept in DuckDB or Spark (its validated Parquet ``table``, as
    :func:`kbench_core.engines.source.open_table` opens it; ``files``: its files in the order
    the memory engine reads them; ``names``: its judges): each judge's answers are made by the
    engine once per choice (:func:`kbench_core.engines.judged.answers`) and read as the cells
    the engine sums (:class:`kbench_core.engines.judged.EngineCells`); the fixed versions, κ
    and the judges' spread likewise come back as sums, never as answers. ``guard()`` is
    entered around each catalog item's queries; ``labels``: the table's distinct labels the
    validation fetched (:class:`kbench_core.engines.keys.Labels`), read again by
    :attr:`rows` instead of fetched again; ``rows``: the run's rows, from which DuckDB makes
    each view's answers and sums in parts of the samples
    (:func:`kbench_core.engines.judged_cells.parts_of`)."""

    def __init__(self, table: Any, files: tuple[str, ...], names: list[str], *,
                 guard: Callable[[], AbstractContextManager[Any]] = nullcontext,
                 labels: Any = None, rows: int = 0) -> None:
        self.table = table
        self.n_rows = rows  # the run's rows (0: unknown): a large run's cells made in parts
        self.labels = labels
        self.guard = guard  # around each item's queries (kbench_core.engines.guarded)
        self.files = files
        self.names = list(names)
        self._cells: dict[tuple, Any] = {}
        self._values: dict[str, bool] = {}
        self._fixed: dict[tuple, pd.DataFrame] = {}
        self._rows: Any = None

    @property
    def judges(self) -> pd.DataFrame:
        return pd.DataFrame({"judge": self.names})

    @property
    def rows(self) -> Any:
        """The table as every judge's answers read it (:func:`kbench_core.engines.judged.
        normalised`), made once: making it reads each label column's distinct values (those
        the validation fetched, when given)."""
        if self._rows is None:
            from kbench_core.engines.judged import normalised

            self._rows = normalised(self.table, self.labels)
        return self._rows

    def cells(self, judge: str, chosen: ConsensusOptions) -> Any:
        """The cells of ``judge``'s answers (``majority``: the consensus under ``chosen``'s
        voters, votes and rule; a judge: under its ``failed_as``), made once per choice and
        kept in the engine with every other choice's: a report reads each view for every
        item, and re-making a view's answers when coming back to it was half of a 3M-row
        report's time (376 -> 179 s). DuckDB keeps the tables past its memory limit on disk
        (the 10M-row report, five views held: 1.06 GiB resident under the default 512 MB),
        Spark in its cache."""
        from kbench_core.engines.judged import EngineCells

        key = ((judge, chosen.judges, chosen.min_votes, chosen.failed_as) if judge == MAJORITY
               else (judge, chosen.failed_as))
        if key not in self._cells:
            self._cells[key] = EngineCells(_judge_answers(
                self.table, judge, chosen, self.files, self.rows, self.names),
                rows=self.n_rows)
        return self._cells[key]

    def views(self, options: Mapping[str, Any] | None) -> list[tuple[str, Any]]:
        """``(judge, cells)`` in :func:`~kbench_core.families.judged.judge_views`' order and
        under its checks."""
        chosen = check_judges(self.judges, options)
        names = [chosen.judge] if chosen.judge is not None else offered_judges(self.judges)
        return [(name, self.cells(name, chosen)) for name in names]

    def has_values(self, column: str) -> bool:
        if column not in self._values:
            table = self.table
            self._values[column] = column in table.columns and bool(
                table.filter(table[column].notnull()).limit(1).count().to_pyarrow().as_py())
        return self._values[column]

    def fixed_versions(self, options: Mapping[str, Any] | None) -> pd.DataFrame:
        from kbench_core.engines import judged_fixed

        chosen = ConsensusOptions.from_mapping(options)
        key = (chosen.judges, chosen.min_votes, chosen.failed_as)
        if key not in self._fixed:  # the table and its chart read it
            self._fixed[key] = judged_fixed.fixed_versions(
                self.table, chosen.consensus(), self.files, normalised_rows=self.rows,
                names=self.names)
        return self._fixed[key].copy()

    def kappa(self, label: str, failed_as: str) -> tuple[pd.DataFrame, str]:
        from kbench_core import agreement
        from kbench_core.engines.judged_kappa import pairwise_kappa

        rule = agreement.failed_rule(label, failed_as)  # type: ignore[arg-type]
        return pairwise_kappa(self.table, label, failed_as=failed_as,
                              normalised_rows=self.rows, names=self.names), rule

    def spread(self, options: Mapping[str, Any] | None) -> pd.DataFrame:
        """:func:`kbench_core.agreement.judge_spread` of the engine's cells: every judge
        under the ``failed_as`` rule, then the consensus."""
        from kbench_core import agreement, vuln

        chosen = ConsensusOptions.from_mapping(options)
        names = vuln.judges_of(self.judges)
        parts = [(name, vuln.tiers(self.cells(name, chosen))) for name in names]
        if any(n != agreement.HUMAN for n in names):
            parts.append((MAJORITY, vuln.tiers(self.cells(MAJORITY, chosen))))
        return agreement.stacked_spread(parts)
