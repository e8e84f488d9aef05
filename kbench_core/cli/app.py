"""``kbench app``: the dashboard in its own Streamlit process, stopped with kbench."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

APP_PATH = Path(__file__).resolve().parents[2] / "app.py"


def app_command(files: Sequence[str], *, workspace: str | None, port: int | None,
                no_samples: bool, headless: bool, demo: bool = False,
                engine: str | None = None, spark_master: str | None = None) -> list[str]:
    """The ``streamlit run`` command line that ``kbench app`` executes. ``engine`` and
    ``spark_master`` go to the dashboard as they are (no engine: the dashboard's default,
    duckdb for a workspace's saved runs)."""
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
    if engine:
        app_args += ["--engine", engine]
    if spark_master:
        app_args += ["--spark-master", spark_master]
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


def add_parser(sub: argparse._SubParsersAction) -> None:
    app = sub.add_parser("app", help="start the dashboard (bundled sample runs + FILES)")
    app.add_argument("files", nargs="*", help="runs to load at start")
    app.add_argument("--workspace", metavar="DIR",
                     help="keep uploaded runs in DIR as Parquet and reload them next time")
    app.add_argument("--port", type=int, default=None)
    app.add_argument("--no-samples", action="store_true", help="do not load the sample runs")
    app.add_argument("--demo", action="store_true",
                     help="reviewer demo: the sample runs with a guided tour on the home page")
    app.add_argument("--headless", action="store_true", help="do not open a browser")
    from kbench_core.engines import ENGINES

    app.add_argument(
        "--engine", choices=ENGINES, default=None,
        help="how the workspace's saved runs are read on first use: duckdb (the default: "
             "queried in place and reduced, not loaded), spark, or memory (the loader)")
    app.add_argument("--spark-master", metavar="URL", default=None,
                     help="--engine spark: the master (default local[*]; SPARK_REMOTE=sc://... "
                          "for Spark Connect)")
    app.set_defaults(run=_run)


def command(args: argparse.Namespace) -> list[str]:
    """The command line of ``kbench app``'s parsed arguments (:func:`app_command`)."""
    return app_command(args.files, workspace=args.workspace, port=args.port,
                       no_samples=args.no_samples, headless=args.headless, demo=args.demo,
                       engine=args.engine, spark_master=args.spark_master)


def _run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
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
    cmd = command(args)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(APP_PATH.parent), os.environ.get("PYTHONPATH", "")) if p)}
    return run_app(cmd, cwd=APP_PATH.parent, env=env)
