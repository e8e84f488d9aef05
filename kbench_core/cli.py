"""The ``kbench`` command line: ``app``, ``validate``, ``metrics``, ``figures`` and ``report``.

The dashboard runs in its own Streamlit process; this module only builds its command line, so
``kbench_core`` stays importable without Streamlit. ``metrics``, ``figures`` and ``report`` use
:mod:`kbench_core.catalog`, the same list of tables and figures the app's Export page offers.

Every failure ends in one line on standard error (``kbench: ...``) and a non-zero status, never a
traceback: invalid files (:class:`~kbench_core.io.RunFormatError`), paths that cannot be read or
written, an interrupt. Text from a run (file and model names, warnings, table cells) never reaches
a terminal raw: control and bidi characters are printed as ``\x1b``-style escapes.
``--models`` takes model names that start with ``-`` (``--models -a -b``); a name that equals an
option of ``compare`` can be given as ``--model=NAME``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from kbench_core import __version__
from kbench_core.io import DEFAULT_MAX_BYTES, RunFormatError, load_run
from kbench_core.text import count_noun, escape_controls

APP_PATH = Path(__file__).resolve().parent.parent / "app.py"


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def _safe(text: object) -> str:
    """Text from a run, for a terminal: every control, bidi or invisible character escaped."""
    return escape_controls(str(text))


def _emit(text: str) -> None:
    """Data (a table) on standard output: as is into a pipe or file, escaped line by line on
    a terminal so no escape sequence in a cell reaches it."""
    if sys.stdout.isatty():
        text = "\n".join(_safe(line) for line in text.split("\n"))
    sys.stdout.write(text)


def _make_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SystemExit(f"kbench: cannot create the folder {_safe(folder)}: "
                         f"{exc.strerror or exc}") from None
    if not folder.is_dir():
        raise SystemExit(f"kbench: {_safe(folder)} is not a folder")


def _write(path: Path, data: bytes) -> None:
    try:
        path.write_bytes(data)
    except OSError as exc:
        raise SystemExit(f"kbench: cannot write {_safe(path)}: {exc.strerror or exc}") from None


def _check_out_file(path: Path) -> None:
    """Refuse an output file that cannot be written, before any work is done for it (a report
    of many runs takes minutes; its path should not fail at the end)."""
    if path.is_dir():
        raise SystemExit(f"kbench: cannot write {_safe(path)}: it is a folder")
    parent = path.parent
    if not parent.is_dir():
        raise SystemExit(f"kbench: cannot write {_safe(path)}: no folder {_safe(parent)}")
    if not os.access(parent, os.W_OK | os.X_OK) or (path.exists()
                                                    and not os.access(path, os.W_OK)):
        raise SystemExit(f"kbench: cannot write {_safe(path)}: permission denied")


def _browser_failed(exc: BaseException) -> bool:
    """Whether ``exc`` says kaleido could not start or find its Chromium."""
    try:
        from kaleido.errors import BrowserFailedError, ChromeNotFoundError
    except ImportError:  # another kaleido: recognise the errors by name
        return type(exc).__name__ in ("BrowserFailedError", "ChromeNotFoundError",
                                      "BrowserDepsError")
    return isinstance(exc, BrowserFailedError | ChromeNotFoundError)


def validate(paths: Sequence[str], *, max_mb: float) -> int:
    """Print each file's kind and size, or its errors; 1 if any file is invalid."""
    status = 0
    for path in paths:
        try:
            run = load_run(path, max_bytes=int(max_mb * 1024**2))
        except RunFormatError as err:
            status = 1
            print(f"INVALID {err}")  # RunFormatError messages are escaped already
            continue
        size = f"{_size(int(run.meta['bytes']))}, " if run.meta.get("bytes") else ""
        models = ", ".join(_safe(m) for m in run.models[:6])
        print(f"ok      {_safe(path)}: {run.kind}, {count_noun(len(run), 'row')}, "
              f"{count_noun(len(run.models), 'model')} "
              f"({models}{', ...' if len(run.models) > 6 else ''}), "
              f"{size}format {_safe(run.meta['format'])}")
        for warning in run.warnings:
            print(f"        warning: {_safe(warning)}")
    return status


def _load_all(paths: Sequence[str]) -> list:
    runs = []
    for path in paths:
        try:
            runs.append(load_run(path))
        except RunFormatError as err:
            raise SystemExit(f"kbench: {err}") from None
    return runs


def _progress(done: int, total: int, label: str) -> None:
    """A one-line progress bar on stderr (rewritten in place on a terminal)."""
    width = 24
    filled = width * done // max(total, 1)
    line = f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {label}"
    if sys.stderr.isatty():
        print(f"\r{line[:110]:<110}", end="" if done < total else "\n", file=sys.stderr,
              flush=True)
    else:
        print(line, file=sys.stderr, flush=True)


def _judges(run, judges: dict | None) -> tuple[dict, dict]:
    """For a judged run: the judge options (``--judge``, ``--judges``, ``--min-votes``,
    ``--failed-as``) checked against its judges, and what its exports record of them (with
    several LLM judges: the majority's voters, votes and rule). Anything else: nothing."""
    if run.kind != "judged":
        return {}, {}
    from kbench_core.families.judged import MAJORITY, check_judges, default_judge

    try:
        chosen = check_judges(run.frame, judges)
    except ValueError as err:
        raise SystemExit(f"kbench: {_safe(run.name)}: {_safe(err)}") from None
    several = default_judge(run.frame) == MAJORITY
    return dict(judges or {}), (chosen.provenance() if several else {})


def metrics(path: str, *, fmt: str, out: str | None, precision: str = "display",
            judges: dict | None = None) -> int:
    """Print (or write) the family's main table of one run (of a run with several LLM
    judges: the majority's rows first, then each judge's; ``judges``: the judge options)."""
    from kbench_core.catalog import items_for, main_table, unavailable
    from kbench_core.export import provenance_of, table_bytes

    if out:
        _check_out_file(Path(out))
    (run,) = _load_all([path])
    why = unavailable(run.kind, run.frame)
    if why:
        raise SystemExit(f"kbench: {run.name}: no metrics to print. {why}")
    try:
        item = main_table(run.kind)
    except ValueError as err:
        raise SystemExit(f"kbench: {err}") from None
    import pandas as pd

    # One table per judge (judged runs) stacks into one; its `judge` column tells them apart.
    options, chosen = _judges(run, judges)
    tables = [t for _, t in item.objects(run.frame, options, meta=run.meta)]
    if not tables:
        # A valid run the main table has nothing of (HumanStudy-Bench's simple_findings.csv:
        # finding rows, no study rows): say why, and print the first table that has rows.
        note = f"{run.name}: no {item.name} table" + (f": {item.empty}" if item.empty else "")
        for other in items_for(run.kind):
            if other.what != "table" or other is item:
                continue
            tables = [t for _, t in other.objects(run.frame, options, meta=run.meta)]
            if tables:
                item = other
                break
        if not tables:
            raise SystemExit(f"kbench: {_safe(note)}")
        print(f"kbench: {_safe(note)}. Printing {_safe(item.title.lower())} instead.",
              file=sys.stderr)
    table = pd.concat(tables, ignore_index=True)
    data = table_bytes(table, fmt, best=item.best, caption=f"{item.title} ({run.name})",
                       provenance=provenance_of([run], what=item.name, options=chosen),
                       precision=precision)
    if out:
        _write(Path(out), data)
        print(f"wrote {_safe(out)} ({len(table)} rows)", file=sys.stderr)
    else:
        _emit(data.decode())
    return 0


def write_figures(paths: Sequence[str], *, out: str, formats: Sequence[str],
                  width: int | None, height: int | None, scale: float,
                  tables: bool = True, only: Sequence[str] = (),
                  judges: dict | None = None) -> list[Path]:
    """Every figure (and table) of each run into ``out`` as ``<run>_<item>[-<suffix>].<fmt>``;
    one kaleido render server for the whole command. ``only`` keeps the items (or file stems,
    e.g. ``bms_curves-anchoring_effect``) named."""
    from kbench_core.catalog import items_for, unavailable
    from kbench_core.export import FigureExporter, provenance_of, table_bytes
    from kbench_core.text import FileNamer

    runs = _load_all(paths)
    folder = Path(out)
    _make_folder(folder)
    jobs = []
    # Unique, short names: "x/y", "x y" and "x_y" would all be "x_y" (short hash on a
    # collision), and a 300-character id would be too long for the file system (cut + hash).
    namer = FileNamer()
    seen: dict[str, int] = {}
    for index, run in enumerate(runs):
        why = unavailable(run.kind, run.frame)
        if why:
            print(f"kbench: {_safe(run.name)}: nothing to draw, skipped. {why}",
                  file=sys.stderr)
            continue
        empty: dict[str, list[str]] = {}  # why -> the items it leaves empty, said once
        options, chosen = _judges(run, judges)
        for item in items_for(run.kind):
            if item.what == "table" and not tables:
                continue
            if only and item.name not in only and not any(o.startswith(item.name + "-")
                                                            for o in only):
                continue
            made = 0
            for stem, obj in item.objects(run.frame, options, meta=run.meta):
                made += 1
                if only and item.name not in only and stem not in only:
                    continue
                label = f"{run.name}_{stem}"
                seen[label] = seen.get(label, 0) + 1
                key = f"{index}\0{label}\0{seen[label]}"
                jobs.append((run, item, namer.name(label, key=key), obj, chosen))
            if not made and item.empty:
                empty.setdefault(item.empty, []).append(item.name)
        for why, names in empty.items():
            print(f"kbench: {_safe(run.name)}: no {_safe(', '.join(names))}: {_safe(why)}",
                  file=sys.stderr)
    n_files = sum(len(formats) if item.what == "figure" else 2 for _, item, _, _, _ in jobs)
    written: list[Path] = []
    try:
        with FigureExporter() as exporter:
            for run, item, stem, obj, chosen in jobs:
                prov = provenance_of([run], what=stem, options=chosen)
                if item.what == "figure":
                    for fmt in formats:
                        path = folder / f"{stem}.{fmt}"
                        _write(path, exporter.to_bytes(obj, fmt, width=width, height=height,
                                                       scale=scale, provenance=prov))
                        written.append(path)
                        _progress(len(written), n_files, path.name)
                else:
                    for fmt, suffix in (("csv", "csv"), ("latex", "tex")):
                        path = folder / f"{stem}.{suffix}"
                        _write(path, table_bytes(obj, fmt, best=item.best, provenance=prov,
                                                 caption=item.title))
                        written.append(path)
                        _progress(len(written), n_files, path.name)
    except Exception as exc:
        if not _browser_failed(exc):
            raise
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        raise SystemExit("kbench: cannot draw figures: kaleido could not start Chromium"
                         + (f" ({_safe(first)})" if first else "") + ". Install Chromium "
                         "(Debian: apt install chromium) or run `kbench report` for figures "
                         "drawn in the browser") from None
    return written


def compare_command(path: str, *, metric: str | None, models: Sequence[str],
                    judge: str | None, fmt: str, correction: str | None,
                    judges: dict | None = None) -> int:
    """Print the paired comparison of two models (or every pair) for a paper."""
    from kbench_core import compare
    from kbench_core.export import provenance_of, table_bytes

    (run,) = _load_all([path])
    if run.kind not in compare.COMPARISONS:
        raise SystemExit(f"kbench: runs of kind {run.kind!r} have no per-item comparison")
    spec = compare.COMPARISONS[run.kind]
    value, group, cluster = spec.values[0][1], spec.group, spec.cluster
    if metric == "target_found" and run.kind == "judged":
        metric = "target_found_vulnerable"  # a target can only be found on a vulnerable sample
    value = metric or value
    voting: dict = {}
    if run.kind == "judged":
        # One judge's answers: the majority of several LLM judges unless --judge says.
        from kbench_core.families.judged import default_judge, judge_views

        options, voting = _judges(run, {**(judges or {}), "judge": judge})
        options["judge"] = judge or default_judge(run.frame)
        ((chosen, rows),) = judge_views(run.frame, options)
        frame = compare.per_item_values(rows, run.kind)
        voting = {**voting, "judge": chosen} if voting else {"judge": chosen}
        print(f"# judge: {_safe(chosen)}", file=sys.stderr)
    else:
        frame = compare.per_item_values(run.frame, run.kind)
    if value not in frame.columns:
        raise SystemExit(f"kbench: no per-item column {_safe(repr(value))} in this run")
    known = sorted(map(str, frame["model"].unique()))
    unknown = [m for m in models if m not in known]
    if unknown:
        raise SystemExit(f"kbench: unknown model(s) {_safe(', '.join(unknown))}; the run has "
                         f"{_safe(', '.join(known))}")
    if len(models) == 2:
        # One pair asked for: its p is not adjusted for pairs nobody asked about (issue 23,
        # item 11); the per-group table is adjusted over its groups.
        a, b = models
        result = compare.compare_pair(frame, value, a, b, group=group, cluster=cluster,
                                      correction=correction, noun=spec.noun)
        _emit(result.verdict + "\n")
        table = result.groups
        if correction is not None and len(table):
            print(f"# p_adjusted: {result.correction_name} over the {len(table)} "
                  f"{_safe(group)} levels", file=sys.stderr)
    else:
        table = compare.compare_models(frame, value, cluster=cluster, correction=correction)
        if correction is not None:
            name = {"holm": "Holm", "fdr_bh": "Benjamini–Hochberg"}[correction]
            print(f"# p_adjusted: {name} over all {len(table)} pairs", file=sys.stderr)
    prov = provenance_of([run], what=f"compare {value}",
                         options={"models": list(models), "cluster": cluster,
                                  "correction": correction, **voting})
    _emit(table_bytes(table, fmt, provenance=prov).decode())
    return 0


def report(paths: Sequence[str], *, out: str, judges: dict | None = None) -> int:
    from kbench_core.report import report_html

    _check_out_file(Path(out))
    runs = _load_all(paths)
    recorded: dict = {}
    for run in runs:  # every judged run's judges checked before the long work
        recorded.update(_judges(run, judges)[1])
    # The judge options go to every item (other families ignore them); the report records
    # the majority's choice when a judged run has one.
    options = {k: v for k, v in (judges or {}).items() if v is not None} if recorded else {}
    text = report_html(runs, options=options or None,
                       progress=lambda label: print(f"  {_safe(label)}", file=sys.stderr))
    _write(Path(out), text.encode("utf-8"))
    print(f"wrote {_safe(out)} ({len(text.encode()) / 1024**2:.1f} MB, opens offline)",
          file=sys.stderr)
    return 0


def _bounded(kind: type, low: float, high: float):
    """An argparse type: a number of ``kind`` from ``low`` to ``high``. A size of 0 or less
    wrote empty figure files; a huge one asks the renderer for gigabytes."""

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not (low <= value <= high):  # NaN fails too
            raise argparse.ArgumentTypeError(f"expected {low:g} to {high:,g}, got {text}")
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its messages
    return parse


def app_command(files: Sequence[str], *, workspace: str | None, port: int | None,
                no_samples: bool, headless: bool, demo: bool = False) -> list[str]:
    """The ``streamlit run`` command line that ``kbench app`` executes."""
    cmd = [sys.executable, "-m", "streamlit", "run", str(APP_PATH),
           "--browser.gatherUsageStats", "false"]
    if port is not None:
        cmd += ["--server.port", str(port)]
    if headless:
        cmd += ["--server.headless", "true"]
    app_args = [str(Path(f).resolve()) for f in files]
    if workspace:
        app_args += ["--workspace", str(Path(workspace).resolve())]
    if no_samples:
        app_args.append("--no-samples")
    if demo:
        app_args.append("--demo")
    return cmd + (["--", *app_args] if app_args else [])


STOP_SIGNALS = ("SIGTERM", "SIGINT", "SIGHUP")  # those present on the platform are forwarded
STOP_GRACE_S = 10.0  # after a forwarded signal, the dashboard's time to stop before a kill


def run_app(cmd: Sequence[str], *, cwd: Path, env: dict[str, str],
            grace: float = STOP_GRACE_S) -> int:
    """Run the dashboard (``cmd``) as a child process that stops when kbench is told to stop.

    A stop signal sent to kbench (``kill``, a container or service manager's SIGTERM, Ctrl-C)
    is passed on to the child, and kbench waits for it to exit, killing it after ``grace``
    seconds: Streamlit re-parented and still serving the port is what a bare
    ``subprocess.call`` left behind on SIGTERM. Returns the child's exit status, ``128 + N``
    when a signal N ended it (the shell's convention).
    """
    import contextlib
    import signal
    import threading
    import time

    received: list[int] = []
    started: list[subprocess.Popen] = []

    def forward(signum: int, _frame: object) -> None:
        received.append(signum)
        if started and started[0].poll() is None:
            started[0].send_signal(signum)

    previous = {}
    if threading.current_thread() is threading.main_thread():  # handlers live there only
        for name in STOP_SIGNALS:
            if hasattr(signal, name):
                number = getattr(signal, name)
                previous[number] = signal.signal(number, forward)
    try:
        child = subprocess.Popen(list(cmd), cwd=cwd, env=env)
        started.append(child)
        if received:  # told to stop while the child was starting
            child.send_signal(received[0])
        deadline = None
        while (status := child.poll()) is None:
            if received and deadline is None:
                deadline = time.monotonic() + grace
            if deadline is not None and time.monotonic() > deadline:
                child.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=0.2)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        if started and started[0].poll() is None:  # kbench failed: never leave it running
            started[0].kill()
            started[0].wait()
    if status < 0:
        return 128 - status
    return 130 if status == 0 and signal.SIGINT in received else status


_COMPARE_OPTIONS = ("--metric", "--models", "--model", "--judge", "--judges", "--min-votes",
                    "--failed-as", "--correction", "--format", "-h", "--help")


def _judge_arguments(parser: argparse.ArgumentParser, *, judge: bool = True) -> None:
    """``--judge``, ``--judges``, ``--min-votes`` and ``--failed-as``: which judge a judged run
    with several LLM judges is shown by, and how their majority is made
    (docs/metrics/agreement.md)."""
    group = parser.add_argument_group("judged runs with several judges")
    if judge:
        group.add_argument("--judge", default=None, metavar="majority|NAME",
                           help="only this judge's rows: 'majority' (the consensus) or a "
                                "judge's name (default: the majority first, then each judge)")
    group.add_argument("--judges", default=None, metavar="A,B,C",
                       help="the judges whose majority is taken (default: every judge "
                            "other than 'human')")
    group.add_argument("--min-votes", type=int, default=None, metavar="K",
                       help="votes a value needs (default: a strict majority of --judges)")
    group.add_argument("--failed-as", choices=["missing", "not-found"], default="missing",
                       help="a failed judgement is missing (default) or counts as 'not "
                            "found' (BlockBench's convention)")


def _judge_choice(args: argparse.Namespace) -> dict:
    """The judge options given on the command line, as :class:`~kbench_core.families.judged.
    ConsensusOptions` reads them."""
    return {"judge": getattr(args, "judge", None), "judges": args.judges,
            "min_votes": args.min_votes, "failed_as": args.failed_as.replace("-", "_")}


def _models_argv(argv: list[str]) -> list[str]:
    """``compare ... --models A B``, with names that start with ``-`` taken as names.

    argparse reads ``--models -a -b`` as two unknown options; every word after ``--models`` up
    to the next option of ``compare`` (or ``--``) is rewritten as ``--model=WORD``, which
    argparse never mistakes for an option.
    """
    if "compare" not in argv:
        return argv
    out: list[str] = []
    words = iter(argv)
    for word in words:
        if word != "--models":
            out.append(word)
            continue
        out.append("--models")  # an empty --models still means "every pair"
        for name in words:
            if name == "--":
                break
            if name.split("=", 1)[0] in _COMPARE_OPTIONS:
                out.append(name)
                break
            out.append(f"--model={name}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``kbench`` command; any failure is one line on standard error, not a
    traceback (``KBENCH_DEBUG=1`` shows the traceback of an unexpected error)."""
    try:
        return _main(list(sys.argv[1:] if argv is None else argv))
    except KeyboardInterrupt:
        print("kbench: interrupted", file=sys.stderr)
        return 130
    except RunFormatError as err:
        print(f"kbench: {err}", file=sys.stderr)
        return 1
    except OSError as exc:
        where = f" {_safe(exc.filename)}" if exc.filename else ""
        print(f"kbench: cannot use{where}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except (SystemExit, MemoryError):
        raise
    except Exception as exc:
        if os.environ.get("KBENCH_DEBUG"):
            raise
        print(f"kbench: unexpected error ({type(exc).__name__}: {_safe(str(exc)[:300])}); "
              "set KBENCH_DEBUG=1 to see where", file=sys.stderr)
        return 2


def _main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="kbench", description="Results dashboard and metrics for LLM behavioural benchmarks.")
    parser.add_argument("--version", action="version", version=f"kbench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    app = sub.add_parser("app", help="start the dashboard (bundled sample runs + FILES)")
    app.add_argument("files", nargs="*", help="runs to load at start")
    app.add_argument("--workspace", metavar="DIR",
                     help="keep uploaded runs in DIR as Parquet and reload them next time")
    app.add_argument("--port", type=int, default=None)
    app.add_argument("--no-samples", action="store_true", help="do not load the sample runs")
    app.add_argument("--demo", action="store_true",
                     help="reviewer demo: the sample runs with a guided tour on the home page")
    app.add_argument("--headless", action="store_true", help="do not open a browser")

    val = sub.add_parser("validate", help="check files: kind and size, or every error")
    val.add_argument("files", nargs="+")
    val.add_argument("--max-mb", type=float, default=DEFAULT_MAX_BYTES / 1024**2,
                     help="size limit in MB (default %(default)g)")

    met = sub.add_parser("metrics", help="the main table of a run (fingerprint, ECS/PAS, tiers)")
    met.add_argument("file")
    met.add_argument("--format", choices=["csv", "latex", "markdown"], default="csv")
    met.add_argument("--out", metavar="FILE", help="write to FILE instead of standard output")
    met.add_argument("--precision", choices=["display", "full"], default="display",
                     help="CSV numbers to 4 significant digits (display, the default) or "
                          "every digit (full)")
    _judge_arguments(met)

    fig = sub.add_parser("figures", help="write every figure (and table) of each run")
    fig.add_argument("files", nargs="+")
    fig.add_argument("--out", metavar="DIR", required=True)
    fig.add_argument("--format", default="pdf,svg,png",
                     help="comma-separated: pdf, svg, png (default %(default)s)")
    fig.add_argument("--size", choices=["one-column", "two-column", "screen"], default=None,
                     help="paper size preset (overridden by --width/--height)")
    fig.add_argument("--width", type=_bounded(int, 50, 10_000), default=None,
                     help="CSS pixels (96 per inch), 50 to 10,000")
    fig.add_argument("--height", type=_bounded(int, 50, 10_000), default=None,
                     help="CSS pixels, 50 to 10,000")
    fig.add_argument("--scale", type=_bounded(float, 0.1, 10.0), default=2.0,
                     help="PNG pixel density, 0.1 to 10 (default 2); PDF and SVG keep the "
                          "paper size")
    fig.add_argument("--no-tables", action="store_true", help="figures only")
    fig.add_argument("--items", default="",
                     help="comma-separated item names or file stems to keep, e.g. "
                          "fingerprint_heatmap,bms_curves-anchoring_effect (default: all)")
    _judge_arguments(fig)

    cmp_ = sub.add_parser("compare", help="paired comparison of models, for papers")
    cmp_.add_argument("file")
    cmp_.add_argument("--metric", default=None,
                      help="per-item column (default: score, correct or abs_diff by run kind)")
    cmp_.add_argument("--models", nargs="*", default=[], metavar="MODEL",
                      help="two models: their difference per group; none: every pair "
                           "(names may start with '-')")
    cmp_.add_argument("--model", action="append", dest="models", metavar="NAME",
                      help="one model (repeat for two); --model=NAME for any name")
    cmp_.add_argument("--judge", default=None, metavar="majority|NAME",
                      help="judged runs: which judge (default: the majority of several LLM "
                           "judges, else the only judge)")
    _judge_arguments(cmp_, judge=False)
    cmp_.add_argument("--correction", choices=["holm", "fdr_bh", "none"], default="holm")
    cmp_.add_argument("--format", choices=["csv", "latex", "markdown"], default="markdown")

    rep = sub.add_parser("report", help="one self-contained interactive HTML report")
    rep.add_argument("files", nargs="+")
    rep.add_argument("--out", metavar="FILE", default="report.html")
    _judge_arguments(rep)

    args = parser.parse_args(_models_argv(argv))
    if args.command == "validate":
        return validate(args.files, max_mb=args.max_mb)
    if args.command == "metrics":
        return metrics(args.file, fmt=args.format, out=args.out, precision=args.precision,
                       judges=_judge_choice(args))
    if args.command == "report":
        return report(args.files, out=args.out, judges=_judge_choice(args))
    if args.command == "compare":
        if len(args.models) not in (0, 2):
            parser.error("--models takes two models (or none for every pair)")
        return compare_command(args.file, metric=args.metric, models=args.models,
                               judge=args.judge, fmt=args.format,
                               correction=None if args.correction == "none" else args.correction,
                               judges=_judge_choice(args))
    if args.command == "figures":
        from kbench_core.export import FIGURE_FORMATS, PAPER_SIZES

        formats = [f.strip().lower() for f in args.format.split(",") if f.strip()]
        unknown = [f for f in formats if f not in FIGURE_FORMATS]
        if unknown or not formats:
            parser.error(f"--format takes pdf, svg, png; got {args.format!r}")
        # A paper size fixes the width; the height stays the figure's own (its legend and
        # panels are laid out for it) unless --height says otherwise.
        width, height = (PAPER_SIZES[args.size][0], None) if args.size else (None, None)
        written = write_figures(args.files, out=args.out, formats=formats,
                                width=args.width or width, height=args.height or height,
                                scale=args.scale, tables=not args.no_tables,
                                only=[i.strip() for i in args.items.split(",") if i.strip()],
                                judges=_judge_choice(args))
        print(f"wrote {len(written)} files to {args.out}", file=sys.stderr)
        return 0
    missing = [f for f in args.files if not Path(f).exists()]
    if missing:
        parser.error(f"no such file: {', '.join(missing)}")
    if not APP_PATH.exists():
        parser.error(f"the dashboard is not next to the package ({APP_PATH}); install kbench "
                     "from a source checkout with `pip install -e .`")
    if args.workspace:
        from kbench_core.workspace import WorkspaceError, check_directory

        try:
            check_directory(args.workspace)
        except WorkspaceError as err:
            print(f"kbench app: {err}", file=sys.stderr)
            return 2
    cmd = app_command(args.files, workspace=args.workspace, port=args.port,
                      no_samples=args.no_samples, headless=args.headless, demo=args.demo)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(APP_PATH.parent), os.environ.get("PYTHONPATH", "")) if p)}
    return run_app(cmd, cwd=APP_PATH.parent, env=env)


if __name__ == "__main__":
    raise SystemExit(main())
