"""The page kit: what every page does, declared once.

- **Widgets that live in the URL.** :func:`select`, :func:`multiselect`, :func:`radio`,
  :func:`toggle`, :func:`slider` and :func:`text` create a Streamlit widget whose value is
  validated against what it offers, starts from the link on a session's first visit, survives
  moving between pages, and is written back to the URL by :func:`done`. One call per widget:
  the value the call returns is the value the widget shows, so a page can never compute with
  one value while showing another. Widgets whose value depends on another (the models of the
  chosen runs) are named in ``resets=`` of the one they depend on.
- **One page opening.** :func:`open_runs` writes the title, finds the runs of the page's kinds,
  says what to do when there are none, warns about runs a link names that this session has not
  loaded, and offers the run picker.
- **Figures and tables with their downloads.** :func:`chart` and :func:`table`.

Why a shadow value: Streamlit forgets a widget's state when a run of the script does not draw
it (another page, a section switched off). The kit keeps each value under its own key, so a
widget drawn again comes back with the value in use, and sets the widget from it before the
widget is created.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from kbench_app import runtime, state, urlstate
from kbench_app.downloads import figure_downloads, table_downloads
from kbench_app.state import _VALUE, _shadow, forget, set_value  # noqa: F401  (the kit's API)
from kbench_core.io import Run

BIG_RUN_ROWS = 100_000  # beyond this, sections that cost seconds compute when opened
MANY_MODELS = 30  # beyond this, model pickers open on the ends of the leaderboard
ENDS = 5  # ... the best ENDS and the worst ENDS models

__all__ = [
    "BIG_RUN_ROWS",
    "ENDS",
    "MANY_MODELS",
    "PageRuns",
    "chart",
    "done",
    "focused_kinds",
    "forget",
    "lazy_section",
    "leaderboard_ends",
    "model_picker",
    "multiselect",
    "number_style",
    "open_runs",
    "radio",
    "runs_of",
    "select",
    "set_value",
    "slider",
    "stop",
    "table",
    "text",
    "toggle",
    "value_of",
]

_MISSING = urlstate.MISSING


def value_of(key: str, default: Any = None) -> Any:
    """The value in use of the widget ``key`` (its last declared value), else ``default``."""
    return st.session_state.get(_shadow(key), default)


def _valid(value: Any, kind: urlstate.Kind, options: Sequence[Any] | None,
           low: float | None, high: float | None) -> Any:
    """``value`` as the widget would hold it, or ``_MISSING`` when it is not a valid one."""
    if value is _MISSING:
        return _MISSING
    if kind == "many":
        if not isinstance(value, list | tuple):
            return _MISSING
        if options is None:
            return list(value)
        offered = {str(o): o for o in options}
        kept = [offered[str(v)] for v in value if str(v) in offered]
        # A list that kept nothing of a non-empty one is stale (another run), not a choice.
        return kept if kept or not value else _MISSING
    if kind == "one":
        if options is None:
            return value
        offered = {str(o): o for o in options}
        return offered.get(str(value), _MISSING)
    if kind == "bool":
        return bool(value) if isinstance(value, bool) else _MISSING
    if kind == "text":
        return value if isinstance(value, str) else _MISSING
    try:
        number = float(value)
    except (TypeError, ValueError):
        return _MISSING
    if number != number or (low is not None and number < low) \
            or (high is not None and number > high):
        return _MISSING
    return int(number) if kind == "int" else number


def _declare(key: str, kind: urlstate.Kind, default: Any, options: Sequence[Any] | None = None,
             *, low: float | None = None, high: float | None = None,
             resets: Sequence[str] = (), in_url: bool = True, label: str = "") -> Any:
    """Settle the value of widget ``key`` before it is drawn and return it.

    Order: the widget's own state (the user just changed it, or it was drawn last run), else
    the value kept while it was not drawn, else (first visit of the session) the link's value,
    else ``default``; anything not valid for what the widget now offers falls back to the
    default. A changed value forgets the widgets in ``resets``.
    """
    state_ = st.session_state
    shadow = _shadow(key)
    value = _held(key, kind, options, low, high, in_url)
    if value is _MISSING:
        value = _valid(default, kind, options, low, high)
        if value is _MISSING:
            raise ValueError(f"widget {key!r}: default {default!r} is not among its options")
    previous = state_.get(shadow, _MISSING)
    if previous is not _MISSING and previous != value:
        forget(*resets)
    state_[shadow] = value
    if key not in state_ or state_[key] != value:
        state_[key] = value
    if in_url:
        urlstate.register(key, kind, label)
    return value


def _held(key: str, kind: urlstate.Kind, options: Sequence[Any] | None,
          low: float | None = None, high: float | None = None, in_url: bool = True) -> Any:
    """The value widget ``key`` keeps (its state, else the value kept while it was not drawn,
    else the link's) if still valid for ``options``; else ``_MISSING``."""
    state_ = st.session_state
    shadow = _shadow(key)
    if key in state_:
        candidate = state_[key]
    elif shadow in state_:
        candidate = state_[shadow]
    else:
        candidate = urlstate.url_value(key, kind) if in_url else _MISSING
    return _valid(candidate, kind, options, low, high)


def held(key: str, options: Sequence[Any]) -> Any | None:
    """What a selectbox or radio ``key`` would keep among ``options`` (None when its value is
    gone or it has none yet), without drawing it: a widget's default can then avoid it."""
    value = _held(key, "one", list(options))
    return None if value is _MISSING else value


def select(label: str, options: Sequence[Any], *, key: str, default: Any = _MISSING,
           resets: Sequence[str] = (), container: Any = None, in_url: bool = True,
           **kwargs: Any) -> Any:
    """A selectbox (``default``: the first option)."""
    options = list(options)
    _declare(key, "one", options[0] if default is _MISSING and options else default, options,
             resets=resets, in_url=in_url, label=label)
    return (container or st).selectbox(label, options, key=key, **kwargs)


TOGETHER = "all"  # the run-group choice that ranks every chosen run in one leaderboard


def pick_group(groups: Sequence[Sequence[str]], *, key: str, resets: Sequence[str],
               help: str, why: str, apart: str) -> int | None:
    """The "Leaderboard of" choice a family page offers when its chosen runs must not be
    ranked together (:func:`kbench_core.families.judged.leaderboard_groups`,
    :func:`kbench_core.bias_reports.leaderboard_groups`): the index of the group of runs
    shown, one at a time by default, or None for every run together (the user asked).
    ``why`` ends "The chosen runs ..., so each of"; ``apart`` how each is ranked."""
    from kbench_app.ui import plain

    options = [" + ".join(group) for group in groups] + [TOGETHER]
    chosen = radio("Leaderboard of", options, key=key, horizontal=True, resets=resets,
                   format_func=lambda o: "every run together" if o == TOGETHER else o,
                   help=help)
    if chosen == TOGETHER:
        return None
    st.caption(f":material/info: {why} "
               + "; ".join(f"**{plain(' + '.join(g))}**" for g in groups)
               + f" {apart}. Choose one above, or every run together.")
    return options.index(chosen)


def radio(label: str, options: Sequence[Any], *, key: str, default: Any = _MISSING,
          resets: Sequence[str] = (), container: Any = None, in_url: bool = True,
          **kwargs: Any) -> Any:
    """Radio buttons (``default``: the first option)."""
    options = list(options)
    _declare(key, "one", options[0] if default is _MISSING and options else default, options,
             resets=resets, in_url=in_url, label=label)
    return (container or st).radio(label, options, key=key, **kwargs)


def multiselect(label: str, options: Sequence[Any], *, key: str, default: Sequence[Any],
                resets: Sequence[str] = (), container: Any = None, in_url: bool = True,
                **kwargs: Any) -> list[Any]:
    """A multiselect; values no longer offered (another run) are dropped."""
    options = list(options)
    _declare(key, "many", list(default), options, resets=resets, in_url=in_url, label=label)
    return (container or st).multiselect(label, options, key=key, **kwargs)


def leaderboard_ends(frame: pd.DataFrame, kind: str, *,
                     ends: int = ENDS) -> tuple[list[str], str]:
    """The ``ends`` best and ``ends`` worst models of ``frame`` (best first, then the worst,
    worst last) by the mean of the family's first per-item metric
    (:data:`kbench_core.compare.COMPARISONS`, e.g. the bias score; the metric's own direction),
    and the metric's label. One grouped mean over the rows: cheap enough for every rerun of a
    page with hundreds of models. Models without a known value come after the others."""
    from kbench_core import compare

    label, value = next(iter(compare.COMPARISONS[kind].options.items()))
    data = frame if value in frame.columns else compare.per_item_values(frame, kind)
    means = (pd.to_numeric(data[value], errors="coerce")
             .groupby(data["model"].astype(str).to_numpy()).mean())
    lower = compare.is_lower_better(value)
    board = pd.DataFrame({"model": means.index.astype(str),
                          "key": means.to_numpy() if lower else -means.to_numpy()})
    board = board.sort_values(["key", "model"], na_position="last", kind="stable")
    ranked = board["model"].tolist()
    if len(ranked) <= 2 * ends:
        return ranked, label
    known = int(board["key"].notna().sum())
    worst = ranked[max(ends, known - ends):max(known, 2 * ends)]
    return ranked[:ends] + worst, label


def model_picker(label: str, options: Sequence[str], *, key: str, frame: pd.DataFrame,
                 kind: str, resets: Sequence[str] = (), container: Any = None,
                 runs: Sequence[Any] | None = None, **kwargs: Any) -> list[str]:
    """The model multiselect of a family page: every model by default, or with more than
    :data:`MANY_MODELS` the top and bottom of the leaderboard (:func:`leaderboard_ends`), said
    in a caption under it. Each chosen model costs the page (its figures, every pair of the
    Compare panel): 600 models opened at once took minutes (issue 29). ``runs``: the runs
    ``frame`` is (all their rows): the leaderboard is then cached on them (a grouped mean
    of 100k rows on every rerun otherwise)."""
    from kbench_app import cache

    options = list(options)
    note = ""
    default = options
    if len(options) > MANY_MODELS:
        default, metric = (leaderboard_ends(frame, kind) if runs is None else
                           cache.cached(leaderboard_ends, frame, runs=runs, kind=kind))
        note = (f"{len(options):,} models: showing the {ENDS} best and {ENDS} worst by mean "
                f"{metric} (add others here).")
    chosen = multiselect(label, options, key=key, default=default, resets=resets,
                         container=container, **kwargs)
    if note:
        (container or st).caption(note)
    return chosen


def toggle(label: str, *, key: str, default: bool = False, resets: Sequence[str] = (),
           container: Any = None, in_url: bool = True, **kwargs: Any) -> bool:
    """A toggle switch."""
    _declare(key, "bool", bool(default), resets=resets, in_url=in_url, label=label)
    return (container or st).toggle(label, key=key, **kwargs)


def slider(label: str, low: float, high: float, *, key: str, default: float,
           resets: Sequence[str] = (), container: Any = None, in_url: bool = True,
           **kwargs: Any) -> Any:
    """A slider over [``low``, ``high``] (integers when all three numbers are)."""
    kind: urlstate.Kind = "int" if all(isinstance(v, int) for v in (low, high, default)) \
        else "float"
    _declare(key, kind, default, low=low, high=high, resets=resets, in_url=in_url,
             label=label)
    return (container or st).slider(label, low, high, key=key, **kwargs)


def number(label: str, low: int, high: int, *, key: str, default: int,
           resets: Sequence[str] = (), container: Any = None, in_url: bool = True,
           **kwargs: Any) -> int:
    """A whole-number box from ``low`` to ``high`` (in the link like the others)."""
    _declare(key, "int", int(default), low=low, high=high, resets=resets, in_url=in_url)
    return int((container or st).number_input(label, min_value=low, max_value=high, key=key,
                                               **kwargs))


def text(label: str, *, key: str, default: str = "", container: Any = None,
         in_url: bool = False, **kwargs: Any) -> str:
    """A text box (not in the URL by default: searches are not views)."""
    _declare(key, "text", default, in_url=in_url, label=label)
    return (container or st).text_input(label, key=key, **kwargs)


def done() -> None:
    """End of a page: write every URL widget's value into the link."""
    urlstate.publish()


def stop() -> None:
    """Stop the page early, keeping the link in step with the widgets drawn so far."""
    urlstate.stop()


@dataclass(frozen=True)
class PageRuns:
    """The runs a page shows: the chosen runs, their rows as one frame, and their names."""

    runs: tuple[Run, ...]
    frame: pd.DataFrame

    @property
    def names(self) -> list[str]:
        return [run.name for run in self.runs]


def runs_of(kinds: Sequence[str]) -> dict[str, Run]:
    """The loaded runs of these kinds, by name."""
    return {name: run for name, run in state.registry().runs.items() if run.kind in kinds}


def focused_kinds() -> set[str]:
    """The kinds of the runs just uploaded (or opened from the Runs page): a page showing
    several kinds puts the section of these first."""
    return state.focused_kinds()


def open_runs(title: str | None, kinds: Sequence[str], *, key: str, empty: str,
              resets: Sequence[str] = (), single: bool = False,
              eligible: Callable[[dict[str, Run]], dict[str, Run]] | None = None,
              none_eligible: str = "", container: Any = None,
              prefer: Callable[[Run], bool] | None = None) -> PageRuns:
    """The opening every family page shares.

    Writes ``title`` (when given); stops with ``empty`` when no run of ``kinds`` is loaded (or
    ``none_eligible`` when ``eligible`` keeps none of them); warns about runs the link names
    that are not loaded; offers the runs (several, combined as one frame with clashing model
    names told apart, or one when ``single``); stops with a hint when none is chosen. A new
    choice of runs forgets the widgets in ``resets``. ``prefer`` (a ``single`` picker): of
    the runs it would open on, the first it is true of (a run the page can draw more of).
    """
    if title:
        st.title(title)
    _say_gone(key, kinds)
    runs = runs_of(kinds)
    if not runs:
        st.info(empty)
        st.stop()
    if eligible is not None:
        runs = eligible(_usable(runs))  # eligibility looks at the rows: read them first
        if not runs:
            st.info(none_eligible)
            st.stop()
    # a run another session removed was just said to be gone: not "upload it again"
    urlstate.warn_missing_runs([*runs, *state.gone_names()], key)
    names = _focus_first(list(runs), key, resets, single)
    if single:
        first = _default_runs(names)
        if prefer is not None:  # only runs whose rows read (a damaged save is named later)
            readable = state.registry().usable(first)
            first = [n for n in first if n in readable and prefer(readable[n])] or first
        chosen = [select("Run", names, key=key, default=first[0],
                         resets=resets, container=container)]
    else:
        chosen = multiselect(
            "Runs", names, key=key, default=_default_runs(names), resets=resets,
            container=container,
            help="Several runs are viewed together; a model name found in more than one run "
                 "is shown as 'model (run)'.")
    if not chosen:
        st.warning("Choose at least one run.")
        stop()
    usable = _usable({name: runs[name] for name in chosen})
    if not usable:
        stop()
    picked = tuple(usable.values())
    load_warnings(picked)
    return PageRuns(picked, state.combined_runs(list(picked)))


def _usable(runs: dict[str, Run]) -> dict[str, Run]:
    """The runs whose rows can be used: a saved run is read and validated on its first use
    (:meth:`RunRegistry.usable`); one whose file is damaged or was replaced is named here,
    with its message, and left out."""
    from kbench_app.ui import plain

    registry = state.registry()
    usable = registry.usable(list(runs))
    for name in runs:
        if name not in usable:
            st.error(f"**{plain(name)}** cannot be used and is left out:",
                     icon=":material/error:")
            st.code(registry.problem(name), language=None, wrap_lines=True)
    return usable


def _focus_first(names: list[str], key: str, resets: Sequence[str],
                 single: bool) -> list[str]:
    """``names`` with the runs just uploaded (:func:`kbench_app.state.focus`) first; the
    first time the picker ``key`` is drawn since the upload, they become its choice (the
    first of them for a ``single`` picker), whatever it held before: a page opened after an
    upload shows that upload (issue 37.5)."""
    offered = set(names)
    focused = [name for name in state.focus() if name in offered]
    if not focused:
        return names
    ordered = focused + [name for name in names if name not in focused]
    if opened := state.focus_to_open(key, ordered):
        value: Any = opened[0] if single else opened
        if _held(key, "one" if single else "many", ordered) != value:
            forget(*resets)  # what depended on the runs shown before
            set_value(key, value)
    return ordered


def _say_gone(key: str, kinds: Sequence[str]) -> None:
    """Say once, on the page of their kind, which runs another session removed from the
    workspace since this session loaded them (they are no longer offered)."""
    from kbench_app.ui import plain

    gone = state.gone_to_tell(key, list(kinds))
    if not gone:
        return
    one = len(gone) == 1
    names = ", ".join(f"**{plain(name)}**" for name in gone[:5])
    more = f" and {len(gone) - 5:,} more" if len(gone) > 5 else ""
    st.warning(f"{'The run' if one else 'The runs'} {names}{more} {'was' if one else 'were'} "
               "removed from the workspace by another session (or its files were deleted): "
               f"{'it is' if one else 'they are'} no longer loaded here, and this page shows "
               "the other runs.", icon=":material/delete_sweep:")


def _default_runs(names: list[str]) -> list[str]:
    """What a family page shows first: every run of its kinds the user loaded (uploads,
    files given to ``kbench app``, the workspace), all at once; when only bundled samples
    are loaded, the first of them (the demo puts the real released runs first)."""
    samples = state.sample_names()
    own = [name for name in names if name not in samples]
    return own or names[:1]


def load_warnings(runs: Sequence[Run]) -> None:
    """What loading the chosen runs warned about (failed judgements, inferred ground truth,
    unscored responses...), folded away but on the page, not only on the Runs page."""
    from kbench_app.ui import plain

    noted = [(run.name, warning) for run in runs for warning in run.warnings]
    if not noted:
        return
    with st.expander(f"{len(noted)} load warning{'s' * (len(noted) != 1)} for the chosen "
                     f"run{'s' * (len(runs) != 1)}", icon=":material/warning:"):
        for name, warning in noted[:50]:
            st.caption(f"**{plain(name)}**: {plain(warning)}")
        if len(noted) > 50:
            st.caption(f"... and {len(noted) - 50:,} more (see the Runs page).")


def chart(fig: go.Figure, name: str, *, runs: Sequence[Run], key: str,
          options: Mapping[str, Any] | None = None, container: Any = None) -> None:
    """A figure with its PNG / SVG / PDF downloads (file stem ``name``)."""
    target = container or st.container()
    with target:
        st.plotly_chart(fig, key=f"{key}_chart")
        figure_downloads(fig, name, runs=runs, options=options, key=f"{key}_dl")


def table(frame: pd.DataFrame, name: str, *, runs: Sequence[Run], key: str,
          view: pd.DataFrame | None = None, config: Mapping[str, Any] | None = None,
          options: Mapping[str, Any] | None = None, best: Mapping[str, str] | None = None,
          container: Any = None, **kwargs: Any) -> None:
    """A table (``view`` shown, ``frame`` downloaded as CSV / LaTeX, file stem ``name``)."""
    target = container or st.container()
    shown = frame if view is None else view
    with target:
        st.dataframe(shown, hide_index=True, width="stretch",
                     column_config=number_style(shown, config), key=key, **kwargs)
        table_downloads(frame, name, runs=runs, options=options, best=best, key=f"{key}_dl")


def number_style(view: pd.DataFrame, config: Mapping[str, Any] | None) -> dict[str, Any]:
    """``config`` with every number column a page formats as ``%.4g`` (four significant
    digits, which Streamlit writes without their trailing zeros: "0" beside "0.3084") given
    the app's one number style instead, :func:`kbench_app.ui.decimals_format` of the values
    shown (issue 37.12)."""
    from kbench_app.ui import decimals_format

    out = dict(config or {})
    for column, given in out.items():
        type_config = given.get("type_config") if isinstance(given, Mapping) else None
        if isinstance(type_config, Mapping) and type_config.get("type") == "number" \
                and type_config.get("format") == "%.4g" and column in view.columns:
            out[column] = {**given, "type_config": {
                **type_config, "format": decimals_format(view[column])}}
    return out


def lazy_section(title: str, *, key: str, lazy: bool, what: str) -> tuple[Any, bool]:
    """A section under ``title``: on a big run (``lazy``) a closed expander whose content is
    computed only once it is opened (what a page does not show is not computed); else a
    plain container. Returns the container and whether to fill it."""
    st.subheader(title)
    if not lazy:
        return st.container(), True
    box = st.expander(f"{what} (a big run: computed when opened)", key=key,
                      on_change="rerun", icon=":material/hourglass_top:")
    return box, bool(box.open)


runtime.settle()  # once per server process, before its first page
