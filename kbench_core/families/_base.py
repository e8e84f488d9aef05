"""What a family is made of: the :class:`Family` record and its parts (options, comparison
defaults, page entry). Family modules import these from here, so nothing a family is built
from imports the registry (:mod:`kbench_core.families`), which loads the families."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

import pandas as pd

if TYPE_CHECKING:  # only for annotations
    import plotly.graph_objects as go

    from kbench_core.catalog import Item
    from kbench_core.io import Run
    from kbench_core.schema import KindSpec

__all__ = ["CompareDefaults", "Family", "Options", "PageInfo", "Profile", "Rule"]

Rule = Callable[[Mapping[str, Any], pd.DataFrame, Callable[..., None]], None]


class Options:
    """Base of each family's frozen options (the page's metric options, which the exports
    record): built from any mapping of option names (the command line's, an export's), with
    unknown names ignored; :meth:`provenance` is what an exported file records."""

    @classmethod
    def from_mapping(cls, options: Mapping[str, Any] | None) -> Self:
        """The options named in ``options`` (others ignored), the rest at their defaults."""
        if isinstance(options, cls):
            return options
        names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        return cls(**{k: v for k, v in (options or {}).items() if k in names})

    def provenance(self) -> dict[str, Any]:
        """The options as an exported file records them."""
        return asdict(self)  # type: ignore[call-overload]


@dataclass(frozen=True)
class CompareDefaults:
    """What a run kind compares by default: ``values`` (label, per-item column) pairs in menu
    order, the forest plot's ``group`` (one row per level), the ``cluster`` whose items share
    errors, the ``noun`` an item is called on the page, and the ``headline`` column compared
    when none is asked for (the family's headline quantity, e.g. TDR's per-item target
    found; None: the first of ``values``); ``renamed``: (name, column) pairs of metrics a
    user may name that the kind compares as another column (a judged run's ``target_found``
    is ``target_found_vulnerable``: a target can only be found on a vulnerable sample)."""

    values: tuple[tuple[str, str], ...]
    group: str
    cluster: str | None
    noun: str
    headline: str | None = None
    renamed: tuple[tuple[str, str], ...] = ()

    @property
    def options(self) -> dict[str, str]:
        """``{label: column}`` for a metric menu."""
        return dict(self.values)

    @property
    def default(self) -> str:
        """The column compared by default: ``headline``, else the first of ``values``."""
        return self.headline or self.values[0][1]

    def label_of(self, column: str) -> str:
        """The words for ``column`` (its label in ``values``; else the column's name with
        spaces for underscores)."""
        return next((label for label, c in self.values if c == column),
                    column.replace("_", " "))


@dataclass(frozen=True)
class PageInfo:
    """Where the app shows a run of this kind: the page file (relative to the repository, or
    absolute for a family defined outside it) and its menu title, icon, URL path and place;
    the widget state that selects the run there (a list of runs, or one run when
    ``single``), widget values to set with it, and the widgets that depend on the run
    (cleared when another run is selected); ``keys``, the page's ``Keys`` class: every
    widget key of the page (also the names of its link parameters), each written once, the
    ones above among them. The page reads its keys from here."""

    path: str
    title: str
    run_key: str
    single: bool = False
    extra: Mapping[str, object] = field(default_factory=dict)
    dependent: tuple[str, ...] = ()
    icon: str = ":material/insights:"
    url: str = ""
    order: int = 50  # place in the menu (families sharing a page share it)
    keys: type | None = None


@dataclass(frozen=True)
class Profile:
    """A run kind's rows in the cross-benchmark profile (``kbench profile``, the Models page;
    :func:`kbench_core.profile.profile`).

    ``rows(run) -> (rows, n_models, judge)``: one row per model and metric, made with
    :func:`kbench_core.profile.metric_rows` from the family's own leaderboard (so the profile
    never disagrees with the page), the number of models the run ranks among and the judge
    whose verdicts the rows count (else ""). ``metrics``: ``(metric, label, short label)``
    of every metric the rows may hold, in the order a model's rows are listed (the label
    for the full table, the short one for the Models page's compact table); ``headline``:
    the one a card shows first. ``benchmark``: the benchmark family the kind belongs to
    (trial runs and published reports of one benchmark are one family), ``title`` its name
    on the Models page; ``configurations``: the run's model ids may be configurations
    (``model · prompt version``, :meth:`kbench_core.aliases.AliasTable.join`). ``card(run,
    raw_ids) -> figure or None``: the figure the Models page shows for one model (its ids
    in the run), drawn by the family's own figure function on its rows (``rows`` and
    ``card`` are also given a :class:`~kbench_core.io.SummedRun` of a family with
    ``engine_run``)."""

    benchmark: str
    title: str
    metrics: tuple[tuple[str, str, str], ...]
    headline: str
    rows: Callable[[Run], tuple[pd.DataFrame, int, str]]
    configurations: bool = False
    card: Callable[[Run, frozenset[str]], go.Figure | None] | None = None

    @property
    def labels(self) -> dict[str, str]:
        """``{metric: label}`` in :attr:`metrics` order."""
        return {metric: label for metric, label, _ in self.metrics}


@dataclass(frozen=True)
class Family:
    """One run kind (``docs/formats.md``) and everything kbench does with it.

    Parameters
    ----------
    kind : str
        The public run-kind name (``bias``, ``judged``, ...).
    title : str
        What the family is called in messages and menus.
    spec : KindSpec
        Columns, key and detection signature.
    item_key : tuple of str, optional
        The item a model answers, for paired comparisons (repeats averaged within).
    comparison : CompareDefaults, optional
        Default per-item metrics, forest-plot group, error cluster and item noun.
    per_item : callable, optional
        ``frame -> frame`` adding the per-item columns :attr:`comparison` names.
    lower_is_better : frozenset of str
        This family's metrics where lower is better.
    catalog : callable, optional
        ``() -> list[Item]``: every figure and table of a run (main table first).
    unavailable : callable, optional
        ``frame -> str | None``: why a run has nothing to show, in words for the user.
    rules : callable, optional
        Row checks beyond single columns: ``rules(columns, frame, add)`` where ``add(mask,
        field, message)`` reports the rows of ``mask`` (``columns`` holds the converted values
        by name: numbers as numpy arrays, labels as Series). Called once before the rows are
        read with ``columns`` empty, where ``add(None, field, message)`` reports a problem of
        the whole file (a missing column the family needs).
    notes : callable, optional
        ``frame -> list[str]``: warnings about a valid run (what its metrics will leave out).
    aliases : mapping
        Other names of canonical columns (``{"their name": "our name"}``).
    key_where_given : bool
        The key applies only to rows that have it (bias rows are keyed by ``id`` when given).
    sample_files : tuple of str
        The bundled synthetic sample run(s), under ``sample_data/``.
    sample_frame : callable, optional
        ``seed -> frame``: the family's synthetic sample run (planted effects known in closed
        form), the frame of its one sample file; :meth:`write_sample` writes it with
        ``samples.write_csv`` and the tests read it.
    sample : callable, optional
        ``(directory, seed) -> list[Path]``: writes :attr:`sample_files` into ``directory``
        (``python -m kbench_core.samples`` calls it through :meth:`write_sample`), for a
        family whose sample is not one frame; else :attr:`sample_frame` is written. One of
        the two is required when :attr:`sample_files` is given.
    format_doc : str or Path, optional
        The Markdown file documenting this kind's columns, holding a section headed
        ``## `<kind>` ...`` with one ``| `column` |`` table row per column (a path relative
        to the repository, or absolute); :func:`format_section` reads it.
    page : PageInfo, optional
        Where the app shows it.
    headline_items : tuple of str
        The catalog items a reader looks at first, in order (the ranking and the one figure
        that sums the run up): the report opens the run on them, the rest folded.
    judges : bool
        Its rows are the verdicts of judges (a ``judge`` column, LLM judges and a person's
        labels): the judge options of the command line (``--judge``, the majority of
        several), the Judge agreement page and the judge audit apply to its runs.
    profile : Profile, optional
        Its rows in the cross-benchmark profile (``kbench profile``, the Models page).
    detection_order : int
        The family's place among the built-in families (the modules of
        :mod:`kbench_core.families`, found, not listed): a file's kind is the first family in
        this order whose signature it matches. A family added with ``register`` comes after
        them, in the order of registration.
    weighted : bool
        The engines' finish keeps the reduced table with its counts as weights instead of
        repeating its rows (the main table reads ``engines.reduce.COUNT`` as weights: bias).
    not_read : tuple of str
        Canonical columns the family's metrics, figures and tables never read: they stay in
        the engine (``engines.reduce.read_columns``).
    schema_only : bool
        The family's metrics read nothing beyond its schema's columns, so a column a file
        adds stays in the engine too (a judged run's tiers read the ``difficulty`` a reader
        adds: not schema-only).
    suspect_rows : callable, optional
        :attr:`rules` as an engine predicate: ``suspect_rows(absent, said, columns)`` gives
        the boolean Ibis expression of the rows a rule may reject (None: no rule applies to
        these ``columns``), built from ``absent(name)`` (the value is missing) and
        ``said(name, word)`` (the label is ``word``) (``engines.validate``).
    engine_tables : callable, optional
        The main tables of ``kbench metrics`` computed inside an engine from per-cluster
        sums, no row fetched: ``engine_tables(src, backend, options)`` gives the named tables
        and what an export records of the options, or None when this source's columns need
        the loader (judged: the tiers from ``engines.judged.EngineCells``; replication: ECS
        from ``engines.replication.finding_sums``). Without it an engine reduces the run to
        :attr:`weighted` tuples or fetches its rows.
    engine_run : callable, optional
        ``engine_run(src, backend)``: the run as an engine computes it, its family's
        sufficient tables and no row (a :class:`~kbench_core.io.SummedRun`), which every
        catalog item with ``from_tables`` and the profile finish (``kbench metrics``,
        ``figures``, ``report``, ``profile`` on DuckDB or Spark); None when this source's
        columns need the loader (replication: ECS's and PAS's tables and the scatter's,
        ``engines.replication``; judged: the run kept in the engine, every item from its
        cells, from :attr:`engine_run_setting`'s rows on).
    engine_items : callable, optional
        ``engine_items(table, src, value, options)``: the run (its engine ``table`` opened
        from ``src``) validated by the engine, then as the comparison of ``value`` pairs it,
        one row per model's answer to an item with the per-item columns :attr:`per_item`
        adds, written as engine expressions (``kbench compare`` groups it by item in the
        engine: ``engines.items.item_means``), and what an export records of ``options`` (a
        judged run's judge); None when this table's columns need the loader (replication:
        ``abs_diff``, ``engines.replication.per_item``; judged: the chosen judge's answers,
        ``engines.judged.answers``, with ``correct`` and ``target_found_vulnerable``).
    engine_tables_rows : callable, optional
        The fewest rows of a run whose :attr:`engine_tables` are used (read when asked, so a
        setting can change it); a smaller run is fetched, where that is faster (judged:
        ``engines.settings.JUDGED_CELLS_ROWS``). None: every run.
    engine_run_setting : str, optional
        The environment setting from whose row count :attr:`engine_run` keeps a run in the
        engine (named in an out-of-memory error as the way to fetch it instead; judged:
        ``KBENCH_JUDGED_RUN_ROWS``). None: every run, and no such way out.
    """

    kind: str
    title: str
    spec: KindSpec
    item_key: tuple[str, ...] | None = None
    comparison: CompareDefaults | None = None
    per_item: Callable[[pd.DataFrame], pd.DataFrame] | None = None
    lower_is_better: frozenset[str] = frozenset()
    catalog: Callable[[], list[Item]] | None = None
    unavailable: Callable[[pd.DataFrame], str | None] | None = None
    rules: Rule | None = None
    notes: Callable[[pd.DataFrame], list[str]] | None = None
    aliases: Mapping[str, str] = field(default_factory=dict)
    key_where_given: bool = False
    sample_files: tuple[str, ...] = ()
    sample: Callable[[Path, int], Sequence[Path]] | None = None
    sample_frame: Callable[[int], pd.DataFrame] | None = None
    format_doc: str | Path | None = None
    page: PageInfo | None = None
    headline_items: tuple[str, ...] = ()
    judges: bool = False
    profile: Profile | None = None
    detection_order: int = 100
    weighted: bool = False
    not_read: tuple[str, ...] = ()
    schema_only: bool = False
    suspect_rows: Callable[[Callable[[str], Any], Callable[[str, str], Any], set[str]],
                           Any] | None = None
    engine_tables: Callable[[Any, Any, Mapping[str, Any] | None],
                            tuple[list[tuple[str, pd.DataFrame]], dict] | None] | None = None
    engine_tables_rows: Callable[[], int] | None = None
    engine_run_setting: str | None = None
    engine_run: Callable[[Any, Any], Any] | None = None
    engine_items: Callable[[Any, Any, str, Mapping[str, Any] | None],
                           tuple[Any, dict] | None] | None = None

    def __post_init__(self) -> None:
        if self.kind != self.spec.kind:
            raise ValueError(f"family {self.kind!r} carries the spec of {self.spec.kind!r}")

    def write_sample(self, directory: str | Path, seed: int = 0) -> list[Path]:
        """Write :attr:`sample_files` into ``directory``: :attr:`sample`, else the frame of
        :attr:`sample_frame` as the one sample file (``samples.write_csv``). A
        ``ValueError`` names the family when it has neither."""
        if self.sample is not None:
            return [Path(p) for p in self.sample(Path(directory), seed)]
        if self.sample_frame is None or len(self.sample_files) != 1:
            raise ValueError(f"family {self.kind!r} names sample files "
                             f"{list(self.sample_files)} but registers no sample writer "
                             "(a sample_frame for one file, or a sample)")
        from kbench_core.samples._common import write_csv

        return [write_csv(Path(directory) / self.sample_files[0], self.sample_frame(seed))]

    def matches(self, columns: Iterable[str]) -> bool:
        """Whether a table with these column names (aliases applied) is of this kind."""
        return self.spec.matches({self.aliases.get(c, c) for c in columns})
