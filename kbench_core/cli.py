"""The ``kbench`` command line: ``kbench app`` and ``kbench validate``.

The dashboard runs in its own Streamlit process; this module only builds its command line, so
``kbench_core`` stays importable without Streamlit.
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

APP_PATH = Path(__file__).resolve().parent.parent / "app.py"


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def validate(paths: Sequence[str], *, max_mb: float) -> int:
    """Print each file's kind and size, or its errors; 1 if any file is invalid."""
    status = 0
    for path in paths:
        try:
            run = load_run(path, max_bytes=int(max_mb * 1024**2))
        except RunFormatError as err:
            status = 1
            print(f"INVALID {err}")
            continue
        print(f"ok      {path}: {run.kind}, {len(run):,} rows, {len(run.models)} models "
              f"({', '.join(run.models[:6])}{', ...' if len(run.models) > 6 else ''}), "
              f"{_size(int(run.meta['bytes']))}, format {run.meta['format']}")
        for warning in run.warnings:
            print(f"        warning: {warning}")
    return status


def app_command(files: Sequence[str], *, workspace: str | None, port: int | None,
                no_samples: bool, headless: bool) -> list[str]:
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
    return cmd + (["--", *app_args] if app_args else [])


def main(argv: Sequence[str] | None = None) -> int:
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
    app.add_argument("--headless", action="store_true", help="do not open a browser")

    val = sub.add_parser("validate", help="check files: kind and size, or every error")
    val.add_argument("files", nargs="+")
    val.add_argument("--max-mb", type=float, default=DEFAULT_MAX_BYTES / 1024**2,
                     help="size limit in MB (default %(default)g)")

    args = parser.parse_args(argv)
    if args.command == "validate":
        return validate(args.files, max_mb=args.max_mb)
    missing = [f for f in args.files if not Path(f).is_file()]
    if missing:
        parser.error(f"no such file: {', '.join(missing)}")
    if not APP_PATH.exists():
        parser.error(f"the dashboard is not next to the package ({APP_PATH}); install kbench "
                     "from a source checkout with `pip install -e .`")
    cmd = app_command(args.files, workspace=args.workspace, port=args.port,
                      no_samples=args.no_samples, headless=args.headless)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(APP_PATH.parent), os.environ.get("PYTHONPATH", "")) if p)}
    try:
        return subprocess.call(cmd, cwd=APP_PATH.parent, env=env)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
