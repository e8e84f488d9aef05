"""Non-UTF-8 (Latin-1) paths on every command that reads, writes or prints one (issue 42, 9).

A Linux path is bytes; Python hands a byte that is not UTF-8 over as a surrogate escape
(``"r\\udce9sultats"``), which cannot be encoded as UTF-8. ``kbench report`` of a folder named
in Latin-1 ended with "unexpected error (UnicodeEncodeError)" (its name reached the HTML) where
``validate``, ``metrics`` and ``figures`` worked. The commands run here as on a machine whose
standard output refuses what it cannot encode (``PYTHONIOENCODING=utf-8:strict``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import cli_run

ROOT = Path(__file__).resolve().parent.parent
REPORTS = sorted((ROOT / "sample_data" / "real" / "kahnebench").glob("fingerprint_*.json"))


def latin1(parent: Path, name: bytes) -> Path:
    """``parent / name`` for a name of raw (Latin-1) bytes, as Python sees it."""
    return parent / os.fsdecode(name)


def kbench(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    """``kbench`` in a child process whose standard output is strict UTF-8."""
    return subprocess.run([sys.executable, "-m", "kbench_core.cli", *map(str, args)],
                          capture_output=True, timeout=300, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT),
                               "PYTHONIOENCODING": "utf-8:strict"})


def kbench_here(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    """What :func:`kbench` returns, the command run in this process with the streams such a
    child has (tests/cli_run.py) and without its ~2.5 s of imports. Each command keeps one
    test through a real child (``report``, ``profile``, ``figures``, ``compare``)."""
    return cli_run.kbench(*args, cwd=cwd, env={"PYTHONIOENCODING": "utf-8:strict"},
                          text=False)


@pytest.fixture(scope="module")
def place(tmp_path_factory) -> Path:
    """A folder ``r\\xe9sultats`` holding a folder run ``fp\\xe9`` (three KahneBench
    fingerprint reports named in Latin-1), a bias CSV and a judged CSV named in Latin-1."""
    top = tmp_path_factory.mktemp("paths")
    where = latin1(top, b"r\xe9sultats")
    folder = latin1(where, b"fp\xe9")
    folder.mkdir(parents=True)
    for i, report in enumerate(REPORTS[:3]):
        shutil.copy(report, latin1(folder, b"fingerprint_\xe9%d.json" % i))
    shutil.copy(ROOT / "sample_data" / "bias.csv", latin1(where, b"bias\xe9.csv"))
    shutil.copy(ROOT / "sample_data" / "judged.csv", latin1(where, b"judged\xe9.csv"))
    return where


def ok(done: subprocess.CompletedProcess) -> None:
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 0 and "unexpected error" not in err, err[-800:]


@pytest.mark.parametrize("run", [b"fp\xe9", b"bias\xe9.csv"])
def test_report_of_a_latin1_path_writes_valid_utf8(place, run) -> None:
    out = latin1(place, b"rapport\xe9.html")
    run_kbench = kbench if run == b"fp\xe9" else kbench_here  # one in a real child
    done = run_kbench("report", latin1(place, run), "--out", out, cwd=place)
    ok(done)
    assert b"wrote " in done.stderr and b"rapport\\udce9.html" in done.stderr
    out.read_bytes().decode("utf-8")  # the run's name and source, as text


@pytest.mark.parametrize("command", [
    ("validate",), ("metrics",), ("metrics", "--format", "latex"),
    ("profile",), ("profile", "--format", "markdown"),
])
def test_the_commands_that_print_accept_a_latin1_folder(place, command) -> None:
    run_kbench = kbench if command == ("profile",) else kbench_here  # one in a real child
    done = run_kbench(command[0], latin1(place, b"fp\xe9"), *command[1:], cwd=place)
    ok(done)
    assert done.stdout.strip()


def test_figures_and_tables_go_to_a_latin1_folder(place) -> None:
    out = latin1(place, b"figures\xe9")
    ok(kbench("figures", latin1(place, b"fp\xe9"), "--out", out, "--format", "svg",
              cwd=place))
    assert any(out.glob("*.svg"))
    table = latin1(place, b"table\xe9.csv")
    ok(kbench_here("metrics", latin1(place, b"judged\xe9.csv"), "--out", table, cwd=place))
    assert table.exists()


def test_compare_of_a_latin1_file(place) -> None:
    done = kbench("compare", latin1(place, b"judged\xe9.csv"), cwd=place)
    ok(done)
    assert done.stdout.strip()


def test_a_missing_latin1_path_is_one_line(place) -> None:
    done = kbench_here("metrics", latin1(place, b"nope\xe9.csv"), cwd=place)
    assert done.returncode == 1 and b"no such file" in done.stderr
    assert len(done.stderr.splitlines()) == 1
