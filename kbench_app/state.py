"""Session-state keys and the cached loader: the only place pages touch ``st.session_state``."""

from __future__ import annotations

import argparse
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import streamlit as st

from kbench_app.registry import LoadReport, RunRegistry
from kbench_core import families
from kbench_core.io import Problem, Run, RunFormatError, load_run
from kbench_core.readonly import freeze
from kbench_core.workspace import Workspace, WorkspaceError

REGISTRY = "kbench_registry"
SEEN_UPLOADS = "kbench_seen_uploads"
UPLOAD_NONCE = "kbench_upload_nonce"
LAST_REPORT = "kbench_last_report"
DEMO = "kbench_demo"
JUST_ADDED = "kbench_just_added"  # runs of the last upload batch, offered as page links
EXPORT_ZIP = "kbench_export_zip"  # the last ZIP the Export page built
GROUPED = "kbench_grouped_uploads"  # run name -> the uploaded files it was made of
SAMPLES = "kbench_sample_runs"  # names of the bundled sample runs this session opened with
FOCUS = "kbench_focus"  # the runs of the last upload (or the run opened): pages show them first
FOCUS_OPENED = "kbench_focus_opened"  # run pickers that have opened on the focus since
GONE = "kbench_gone"  # saved runs another session removed: [{"name", "kind", "told": {keys}}]

# A widget's value kept while the widget is not drawn (the kit's rule, :mod:`kbench_app.kit`);
# here because selecting a run from the Runs page sets a page's widgets.
_VALUE = "kbench_value:"


def _shadow(key: str) -> str:
    return _VALUE + key


def forget(*keys: str) -> None:
    """Drop the values of these widgets: they start from their defaults when next drawn."""
    for key in keys:
        st.session_state.pop(key, None)
        st.session_state.pop(_shadow(key), None)


def set_value(key: str, value: Any) -> None:
    """Make ``value`` the value of widget ``key`` on its next drawing (validated then)."""
    st.session_state[_shadow(key)] = value
    st.session_state[key] = value


def session_get(name: str, default: Any = None) -> Any:
    """``st.session_state[name]``, else ``default``: the one way other app modules (the link,
    :mod:`kbench_app.urlstate`) read the session."""
    return st.session_state.get(name, default)


def session_setdefault(name: str, default: Any) -> Any:
    """``st.session_state.setdefault(name, default)``."""
    return st.session_state.setdefault(name, default)


def session_set(name: str, value: Any) -> None:
    """``st.session_state[name] = value``."""
    st.session_state[name] = value


ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DIR = ROOT / "sample_data"
SAMPLE_FILES = tuple(families.sample_files())  # one synthetic run per family
# Real, MIT-licensed output of two benchmarks (sample_data/real/README.md): the demo opens on
# them; the synthetic runs above stay for the tests and for the vulnerability family.
REAL_SAMPLES = ("real/kahnebench", "real/humanstudy-bench/simple_results.json")


def startup_argv() -> list[str]:
    """The dashboard's own arguments: after ``--`` of ``streamlit run app.py`` (what ``kbench
    app`` passes), or ``KBENCH_APP_ARGS`` (tests, and servers that cannot pass arguments)."""
    import os
    import shlex
    import sys

    if "KBENCH_APP_ARGS" in os.environ:
        return shlex.split(os.environ["KBENCH_APP_ARGS"])
    # Under AppTest or another host sys.argv belongs to that program, not to us.
    if sys.argv and Path(sys.argv[0]).name == "app.py":
        return sys.argv[1:]
    return []


def app_options(argv: list[str]) -> argparse.Namespace:
    """Parse the dashboard's own arguments (see :func:`startup_argv`)."""
    parser = argparse.ArgumentParser(prog="kbench app", add_help=False)
    parser.add_argument("files", nargs="*")
    parser.add_argument("--workspace", default=None)
    parser.add_argument("--no-samples", action="store_true")
    parser.add_argument("--demo", action="store_true")
    # how saved runs are read: checked where the workspace opens, so a bad value is
    # a message on the Runs page, not a crash of the app
    parser.add_argument("--engine", default=None)
    parser.add_argument("--spark-master", default=None)
    options, _ = parser.parse_known_args(argv)
    return options


def workspace_engine(options: argparse.Namespace) -> str:
    """The engine saved runs are read through: ``--engine``, else ``duckdb`` (the default for
    a workspace: a run is queried in place, not read with pandas)."""
    return options.engine or "duckdb"


LOADED_RUNS = 64  # parsed uploads kept for every session (most recently used first)


class _RunCache:
    """Parsed runs by ``(filename, SHA-256)``, shared by every session of the server.

    Data only: a load's progress bar belongs to the session that asked for it, so the cache
    never records (and never replays) Streamlit elements. ``st.cache_resource`` did record the
    progress calls a load made into the first session's bar, and replaying them in another
    session (a second browser, or the same one after F5) raised ``CacheReplayClosureError``
    until the server restarted. A lock per key makes a second session wait for a load already
    under way instead of parsing the same bytes twice; other files load meanwhile.

    The cache holds no frame: it keeps a run's name, kind, meta and warnings and a *weak*
    reference to its frame, so a frame lives exactly as long as some session still holds a run
    of it. Removing the run (in every session holding it) or the end of those sessions releases
    its memory (issue 29: a removed upload stayed referenced by the cache, up to 64 uploads of
    all users); the entries themselves are at most ``size`` small records.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.runs: OrderedDict[tuple[str, ...], tuple[Run, weakref.ref]] = OrderedDict()
        self.loading: dict[tuple[str, ...], threading.Lock] = {}
        self.lock = threading.Lock()

    def _get(self, key: tuple[str, ...]) -> Run | None:
        with self.lock:
            if key not in self.runs:
                return None
            shell, frame_ref = self.runs[key]
            frame = frame_ref()
            if frame is None:  # every session let it go
                del self.runs[key]
                return None
            self.runs.move_to_end(key)
        return replace(shell, frame=frame, meta=dict(shell.meta))

    def __call__(self, filename: str, sha256: str, data: bytes,
                 progress: Callable[[float, str], None] | None = None) -> Run:
        return self.load((filename, sha256),
                         lambda: load_run((filename, data), progress=progress))

    def load(self, key: tuple[str, ...], make: Callable[[], Run]) -> Run:
        """The run kept under ``key``, else ``make()`` (kept when it succeeds)."""
        if (run := self._get(key)) is not None:
            return run
        with self.lock:
            key_lock = self.loading.setdefault(key, threading.Lock())
        with key_lock:
            if (run := self._get(key)) is not None:  # loaded by another session meanwhile
                return run
            try:
                run = make()
            finally:
                with self.lock:
                    self.loading.pop(key, None)
            # every session asking for these bytes gets this very frame: none may write to it
            freeze(run.frame)
            # the shell keeps an empty frame of the same columns, never the data
            shell = replace(run, frame=run.frame.iloc[:0], meta=dict(run.meta))
            with self.lock:
                self.runs[key] = (shell, weakref.ref(run.frame))
                while len(self.runs) > self.size:
                    self.runs.popitem(last=False)
            return run

    def live(self) -> int:
        """How many cached runs some session still holds (tests)."""
        with self.lock:
            return sum(ref() is not None for _, ref in self.runs.values())

    def clear(self) -> None:
        """Forget every parsed run (tests)."""
        with self.lock:
            self.runs.clear()


@st.cache_resource(show_spinner=False)
def _run_cache() -> _RunCache:
    # The one store of the server (kept across reruns and sessions); it draws nothing.
    return _RunCache(LOADED_RUNS)


class _CachedLoad:
    """``_cached_load(filename, sha256, data, progress)``: a load through the shared cache,
    with ``clear()`` for tests (a name tests patch to inject failures)."""

    def __call__(self, filename: str, sha256: str, data: bytes,
                 progress: Callable[[float, str], None] | None = None) -> Run:
        return _run_cache()(filename, sha256, data, progress)

    def clear(self) -> None:
        _run_cache().clear()


_cached_load = _CachedLoad()


def combined_runs(runs: list[Run]):
    """Runs of one kind as one frame (:func:`kbench_core.io.combine_runs`), cached on the runs'
    names and content hashes."""
    from kbench_app import cache
    from kbench_core.io import combine_runs

    return cache.cached(combine_runs, list(runs), runs=runs)


def cached_loader(filename: str, data: bytes, progress=None) -> Run:
    """:func:`kbench_core.io.load_run` through the session-shared cache (``progress(fraction,
    stage)`` as the load goes on). Whatever goes wrong with one file comes back as a
    :class:`RunFormatError` naming it, so a batch of uploads always loads its other files."""
    import hashlib

    try:
        return _cached_load(filename, hashlib.sha256(data).hexdigest(), data, progress)
    except RunFormatError:
        raise
    except Exception as exc:  # load_run lets nothing else out; this guards the cache too
        raise RunFormatError(filename, [Problem(None, None, f"could not be loaded "
                                                            f"({type(exc).__name__})")]) from None


def cached_group_loader(files: list[tuple[str, bytes]], progress=None) -> Run:
    """:func:`kbench_core.io.load_files` (files of one format as one run) through the
    session-shared cache; any failure comes back as a :class:`RunFormatError`."""
    from kbench_core.io import batch_hash, batch_name, load_files

    try:
        return _run_cache().load(("files", batch_hash(files)),
                                 lambda: load_files(files, progress=progress))
    except RunFormatError:
        raise
    except Exception as exc:
        raise RunFormatError(batch_name(files), [Problem(
            None, None, f"could not be loaded ({type(exc).__name__})")]) from None


def add_uploads(registry: RunRegistry, files, progress=None, *,
                group: bool = True) -> LoadReport:
    """Load a batch of uploaded files into ``registry``, one run at a time: a file that
    fails (in any way) becomes one error box naming it; the others load. With ``group``,
    files of one multi-file benchmark format (:func:`kbench_core.io.batch_groups`: the
    reports a folder would hold) make one run, as their folder would.
    ``progress(fraction, text)`` follows the batch, stage by stage of each run (sized by
    its bytes), for a progress bar."""
    from kbench_core.io import batch_groups, batch_name

    report = LoadReport()
    pairs = [(upload.name, upload.getvalue()) for upload in files]
    groups = batch_groups(pairs) if group else [[i] for i in range(len(pairs))]
    sizes = [max(sum(files[i].size for i in members), 1) for members in groups]
    total, done = float(sum(sizes)), 0.0
    for members, size in zip(groups, sizes, strict=True):
        chosen = [pairs[i] for i in members]
        label = chosen[0][0] if len(chosen) == 1 else batch_name(chosen)

        def stage(fraction: float, what: str, start: float = done,
                  share: float = size / total, label: str = label) -> None:
            if progress is not None:
                progress(min(1.0, start + share * fraction), f"{label}: {what}")

        done += size / total
        try:
            if len(chosen) == 1:
                part = registry.add_files(chosen, lambda filename, data, stage=stage:
                                          cached_loader(filename, data, stage))
            else:
                part = registry.add_group(chosen, lambda batch, stage=stage:
                                          cached_group_loader(batch, stage))
                for added in part.added:  # kept so the run can be split again
                    st.session_state.setdefault(GROUPED, {})[added] = chosen
        except Exception as exc:  # e.g. the workspace cannot write: report, go on
            message = RunFormatError(label, [Problem(
                None, None, f"could not be added ({type(exc).__name__}: "
                            f"{str(exc)[:200]})")])
            registry.errors[label] = str(message)
            report.errors[label] = str(message)
            continue
        report.added += part.added
        report.duplicates += part.duplicates
        report.existing += [n for n in part.existing if n not in report.existing]
        report.errors.update(part.errors)
    return report


def grouped_files(name: str, run: Run) -> list[tuple[str, bytes]]:
    """The uploaded files the run ``name`` was made of, when several files of one format
    made it in this session (kept to split it again), else ``[]``."""
    files = list(st.session_state.get(GROUPED, {}).get(name, []))
    # Only for the very run they made (not a later run under a freed name).
    same = [filename for filename, _ in files] == list(run.meta.get("files", ()))
    return files if same else []


def split_group(registry: RunRegistry, name: str) -> LoadReport:
    """Replace the run ``name`` (several uploaded files loaded as one) by one run per file."""
    files = st.session_state.get(GROUPED, {}).pop(name, [])
    registry.remove(name)
    report = LoadReport()
    for filename, data in files:
        part = registry.add_files([(filename, data)], cached_loader)
        report.added += part.added
        report.duplicates += part.duplicates
        report.errors.update(part.errors)
    just_added(report.added)
    return report


def select_run(run: Run) -> str | None:
    """Select ``run`` on its family's page (the page then opens on it); returns the page's
    path, or None for a kind without a page."""
    if not families.is_registered(run.kind) or families.get(run.kind).page is None:
        return None
    page = families.get(run.kind).page
    forget(*page.dependent)
    set_value(page.run_key, run.name if page.single else [run.name])
    for name, value in page.extra.items():
        set_value(name, value)
    return page.path


def focus(names: list[str] | None = None) -> list[str]:
    """The runs the user just uploaded (or opened from the Runs page), still loaded: every
    page showing their kind lists them first and opens on them once (set them by passing
    ``names``; issue 37.5, a page opened by an upload showed another run)."""
    if names is not None:
        st.session_state[FOCUS] = list(names)
        st.session_state[FOCUS_OPENED] = set()
    runs = registry().runs
    return [name for name in st.session_state.get(FOCUS, []) if name in runs]


def focus_to_open(key: str, names: list[str]) -> list[str]:
    """The focused runs among ``names`` when the run picker ``key`` has not opened on them
    yet (it then has: a later choice of the user stays), else ``[]``."""
    opened: set[str] = st.session_state.setdefault(FOCUS_OPENED, set())
    if key in opened:
        return []
    opened.add(key)
    offered = set(names)
    return [name for name in focus() if name in offered]


def focused_kinds() -> set[str]:
    """The kinds of the focused runs (:func:`focus`)."""
    runs = registry().runs
    return {runs[name].kind for name in focus()}


def _note_gone(gone: list[tuple[str, str]]) -> None:
    """Keep what :meth:`RunRegistry.drop_stale` dropped, for the pages to say (each once)."""
    from kbench_app.ui import plain

    notes = st.session_state.setdefault(GONE, [])
    notes.extend({"name": name, "kind": kind, "told": set()} for name, kind in gone)
    names = ", ".join(f"**{plain(name)}**" for name, _ in gone[:3])
    more = f" and {len(gone) - 3:,} more" if len(gone) > 3 else ""
    st.toast(f"{names}{more}: removed from the workspace by another session, no longer "
             "loaded here.", icon=":material/delete_sweep:", duration="long")


def gone_to_tell(key: str, kinds: list[str] | None = None) -> list[str]:
    """The runs (of ``kinds``, or of any kind) another session removed from the workspace
    that the place ``key`` (a page's run picker, the Runs page) has not said yet; they are
    said from now on."""
    told = []
    for note in st.session_state.get(GONE, []):
        if key not in note["told"] and (kinds is None or note["kind"] in kinds):
            note["told"].add(key)
            told.append(note["name"])
    return told


def gone_names() -> set[str]:
    """Every run another session removed from the workspace while this one held it."""
    return {note["name"] for note in st.session_state.get(GONE, [])}


def demo() -> bool:
    """Whether the app runs as the reviewers' demo (``kbench app --demo``)."""
    return bool(st.session_state.get(DEMO))


def registry(argv: list[str] | None = None) -> RunRegistry:
    """This session's registry, created on first use with samples, CLI files and workspace."""
    if REGISTRY in st.session_state:
        reg = st.session_state[REGISTRY]
        # Another session may have removed saved runs since (issue 37.8): they leave this
        # session too, and it says so, rather than listing and serving runs that are gone.
        if gone := reg.drop_stale():
            _note_gone(gone)
        return reg
    options = app_options(startup_argv() if argv is None else argv)
    workspace, problem = None, None
    if options.workspace:
        try:
            workspace = Workspace(Path(options.workspace), engine=workspace_engine(options),
                                  spark_master=options.spark_master)
        except WorkspaceError as err:  # `kbench app` checks first; `streamlit run` does not
            problem = f"{err}; the app runs without a workspace, so uploads are not kept"
        except ValueError as err:  # an unknown --engine (kbench app checks it first)
            problem = f"{err}; the app runs without a workspace, so uploads are not kept"
    reg = RunRegistry(workspace=workspace)
    if problem is not None:
        reg.errors["workspace"] = problem
    samples_added: list[str] = []
    with st.spinner("Loading runs..."):
        reg.load_workspace()
        if not options.no_samples:
            groups = (REAL_SAMPLES, SAMPLE_FILES) if options.demo else (SAMPLE_FILES,
                                                                          REAL_SAMPLES)
            for group in groups:  # in this order, so the pages' defaults follow it
                samples = [SAMPLE_DIR / f for f in group if (SAMPLE_DIR / f).exists()]
                # Samples ship with the code: the workspace keeps only what the user added.
                samples_added += reg.add_paths(samples, cached_loader, persist=False).added
        reg.add_paths(options.files, cached_loader)
    st.session_state[REGISTRY] = reg
    st.session_state[SAMPLES] = frozenset(samples_added)
    st.session_state[DEMO] = bool(options.demo)
    st.session_state[SEEN_UPLOADS] = set()
    return reg


COLORS = "kbench_model_colors"


def model_colors(models) -> dict[str, str]:
    """One colour per model for the whole session: a model keeps the colour it got first,
    whatever else is selected or loaded later (new models take the next free colour)."""
    from kbench_core.figures import PALETTE

    assigned: dict[str, str] = st.session_state.setdefault(COLORS, {})
    for model in sorted(map(str, models)):
        if model not in assigned:
            assigned[model] = PALETTE[len(assigned) % len(PALETTE)]
    return {str(m): assigned[str(m)] for m in models}


def sample_names() -> frozenset[str]:
    """The bundled sample runs this session started with (not the user's own runs)."""
    return st.session_state.get(SAMPLES, frozenset())


def seen_uploads() -> set[str]:
    """The upload ids this session has already loaded (or reported): never loaded twice."""
    return st.session_state.setdefault(SEEN_UPLOADS, set())


def just_added(names: list[str] | None = None) -> list[str]:
    """The runs the last upload batch added (set them by passing ``names``)."""
    if names is not None:
        st.session_state[JUST_ADDED] = list(names)
    return list(st.session_state.get(JUST_ADDED, []))


def export_zip(data: bytes | None = None) -> bytes | None:
    """The last ZIP the Export page built in this session (set it by passing ``data``)."""
    if data is not None:
        st.session_state[EXPORT_ZIP] = data
    return st.session_state.get(EXPORT_ZIP)
