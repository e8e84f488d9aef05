"""``kbench ARGS`` run in the test's own process, seen as a child ``python -m kbench_core.cli
ARGS`` would be: its exit status, and its standard output and error as bytes written through
the encodings and error handlers that child would have.

A child spends ~2.5 s of CPU importing pandas, SciPy and kbench before it reads its first
argument; the suite started dozens of them only to read what they print. The tests that are
about the process itself (signals, the console script, Java's log on the terminal, memory
bounds) still start one; so does at least one test of each command.

What a child would show and this reproduces:

- ``sys.stdout`` and ``sys.stderr`` encode as the child's would (read once from a child
  started with the same environment: ``PYTHONIOENCODING``, the locale): a name a strict
  standard output cannot encode fails here as it fails there.
- The exit status: ``main``'s return value; a ``SystemExit``'s code, or its message on
  standard error and status 1; an exception that escapes ``main`` is a ``Traceback`` on
  standard error and status 1, as the interpreter prints it.
- Warnings go to standard error under the child's warning filters, once per place, and
  log records of WARNING and above reach standard error through Python's last-resort
  handler (the child configures no logging), not pytest's capture.
- ``cwd`` and ``env`` apply for the call and are restored after it.
"""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
import traceback
import warnings
from collections.abc import Mapping
from functools import cache

from tests.conftest import ROOT

_PROBE = """
import json, sys, warnings
print(json.dumps({
    "stdout": [sys.stdout.encoding, sys.stdout.errors],
    "stderr": [sys.stderr.encoding, sys.stderr.errors],
    "filters": [[action, getattr(message, "pattern", message), category.__module__,
                 category.__qualname__, getattr(module, "pattern", module), lineno]
                for action, message, category, module, lineno in warnings.filters],
}))
"""


@cache
def _child_stdio(env: tuple[tuple[str, str], ...]) -> dict:
    """The encodings and warning filters of a child interpreter started with ``env``."""
    done = subprocess.run([sys.executable, "-c", _PROBE], env=dict(env), capture_output=True,
                          check=True, timeout=60)
    return json.loads(done.stdout)


def _category(module: str, name: str) -> type[Warning]:
    owner = sys.modules.get(module) or __import__(module)
    return getattr(owner, name)


def _show_on_stderr(message, category, filename, lineno, file=None, line=None) -> None:
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def kbench(*args: str | os.PathLike, cwd: str | os.PathLike | None = ROOT,
           env: Mapping[str, str] | None = None, text: bool = True,
           errors: str = "strict") -> subprocess.CompletedProcess:
    """``kbench *args`` in this process, as :func:`subprocess.run` of ``python -m
    kbench_core.cli *args`` with ``capture_output=True`` returns it: ``stdout`` and ``stderr``
    are ``str`` decoded with UTF-8 and ``errors`` when ``text``, else bytes. ``env``: settings
    added to the environment for the call; ``cwd``: the working folder (the repository's root
    by default, as the suite runs)."""
    from kbench_core.cli import main

    argv = [os.fspath(a) for a in args]
    child_env = {**os.environ, **(env or {})}
    stdio = _child_stdio(tuple(sorted(child_env.items())))
    out_bytes, err_bytes = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(out_bytes, encoding=stdio["stdout"][0], errors=stdio["stdout"][1])
    err = io.TextIOWrapper(err_bytes, encoding=stdio["stderr"][0], errors=stdio["stderr"][1])
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    saved_streams = sys.stdout, sys.stderr
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    try:
        os.environ.update(env or {})
        if cwd is not None:
            os.chdir(cwd)
        sys.stdout, sys.stderr = out, err
        root.handlers = []  # a record reaches stderr through logging.lastResort, as there
        root.setLevel(logging.WARNING)
        with warnings.catch_warnings():
            warnings.resetwarnings()
            for action, message, module, name, where, lineno in reversed(stdio["filters"]):
                warnings.filterwarnings(action, message or "", _category(module, name),
                                        where or "", lineno)
            warnings.showwarning = _show_on_stderr
            try:
                status = main(argv)
            except SystemExit as exc:
                if exc.code is None or isinstance(exc.code, int):
                    status = exc.code or 0
                else:
                    print(exc.code, file=sys.stderr)
                    status = 1
            except Exception:  # what the interpreter prints for an uncaught exception
                sys.stderr.write(traceback.format_exc())  # (an interrupt, or pytest's
                status = 1  # timeout, stops the test as it would have stopped the child)
        out.flush()
        err.flush()
    finally:
        sys.stdout, sys.stderr = saved_streams
        root.handlers = saved_handlers
        root.setLevel(saved_level)
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    stdout, stderr = out_bytes.getvalue(), err_bytes.getvalue()
    if text:
        stdout, stderr = stdout.decode("utf-8", errors), stderr.decode("utf-8", errors)
    return subprocess.CompletedProcess(["kbench", *argv], status, stdout, stderr)


def python_m_kbench(*args: str | os.PathLike, cwd: str | os.PathLike | None = ROOT,
                    env: Mapping[str, str] | None = None, text: bool = True,
                    errors: str = "strict", timeout: float = 300) -> subprocess.CompletedProcess:
    """The same call in a child ``python -m kbench_core.cli``: for the tests that keep one."""
    return subprocess.run([sys.executable, "-m", "kbench_core.cli", *map(os.fspath, args)],
                          capture_output=True, cwd=cwd, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
                          text=text, errors=errors if text else None)

