"""A save killed at any step is finished or rolled back on the next start (issue 42, item 7).

Each test saves a run in a child process that SIGKILLs itself just before one file operation
of ``Workspace.save`` (or halfway through writing the Parquet file), then opens the workspace
as a new server would. The run is either back, complete and with a note, or reported as not
saved; nothing of the save is left, and the files kbench did not write are all still there.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kbench_core.io import load_run
from kbench_core.workspace import Workspace
from kbench_core.workspace_files import recover

ROOT = Path(__file__).resolve().parent.parent
GOOD = (b"model,bias,condition,intensity,domain,score\n"
        b"m1,anchoring_effect,treatment,weak,social,1\n"
        b"m1,anchoring_effect,control,,social,0\n")

# The child: counts the file operations of one save (the journal's write and rename, the two
# temporary files, the two renames, the journal's removal) and dies by SIGKILL before the
# ``KILL_AT``-th; ``KILL_AT=half`` dies with half the Parquet file written. ``PAUSE`` (a file
# name): before that operation, wait until the file exists (a save in progress).
CHILD = textwrap.dedent("""
    import os, signal, sys, time
    from pathlib import Path
    from kbench_core.io import load_run
    from kbench_core.workspace import Workspace

    folder, kill_at, pause = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    run = load_run(("results.csv", sys.stdin.buffer.read()))
    count = [0]

    def step():
        count[0] += 1
        if kill_at == str(count[0]):
            os.kill(os.getpid(), signal.SIGKILL)
        if pause != "-" and count[0] == 5:
            (folder.parent / "paused").touch()
            while not Path(pause).exists():
                time.sleep(0.01)

    def counted(real):
        def wrapper(*args, **kwargs):
            step()
            return real(*args, **kwargs)
        return wrapper

    real_write_bytes = Path.write_bytes

    def write_bytes(self, data):
        if kill_at == "half":
            with open(self, "wb") as handle:
                handle.write(data[: len(data) // 2])
            os.kill(os.getpid(), signal.SIGKILL)
        step()
        return real_write_bytes(self, data)

    os.write = counted(os.write)
    os.replace = counted(os.replace)
    os.unlink = counted(os.unlink)
    Path.write_bytes = write_bytes
    Path.write_text = counted(Path.write_text)
    Workspace(folder).save(run)
""")

# Files kbench did not write, some named as if it had: none may be removed or renamed.
FOREIGN = {
    "mine.parquet.tmp": b"a user's own file",
    "notes.json": b"{}",
    "results-0123456789ab-deadbeef.parquet.tmp": b"not kbench's bytes",
    "other-0123456789ab-cafebabe.json.tmp": b"{",
}


def child(folder: Path, kill_at: str, pause: str = "-") -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", CHILD, str(folder), kill_at, pause],
                            stdin=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})


def killed_save(folder: Path, kill_at: str) -> None:
    proc = child(folder, kill_at)
    proc.communicate(GOOD, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.returncode


def contents(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


@pytest.mark.parametrize(("kill_at", "outcome"), [
    ("2", "rolled back"),      # the journal written, not yet in place
    ("3", "rolled back"),      # the journal in place, nothing else
    ("half", "rolled back"),   # half the Parquet file written
    ("4", "rolled back"),      # the Parquet file written, not the sidecar
    ("5", "finished"),         # both written, neither renamed
    ("6", "finished"),         # the sidecar renamed, not the Parquet file (the case)
    ("7", "complete"),         # both renamed, the journal not yet removed
])
def test_a_save_killed_at_each_step_is_finished_or_rolled_back(tmp_path, kill_at,
                                                               outcome) -> None:
    folder = tmp_path / "ws"
    folder.mkdir()
    for name, data in FOREIGN.items():
        (folder / name).write_bytes(data)
    killed_save(folder, kill_at)
    runs, errors = Workspace(folder).open_all()
    reported = {err.file: str(err) for err in errors}
    left = {name for name in reported if "left in place" in reported[name]}
    assert left == set(FOREIGN) - {"mine.parquet.tmp", "notes.json"}  # named as kbench's
    kept = contents(folder)
    assert {name: kept[name] for name in FOREIGN} == FOREIGN
    mine = set(kept) - set(FOREIGN)
    if outcome == "rolled back":
        assert mine == set() and runs == []
        (message,) = [m for name, m in reported.items() if name not in left]
        assert "run 'results' was not saved: kbench stopped" in message
        assert "upload it again" in message
    else:
        (run,) = runs
        assert len(mine) == 2 and {Path(n).suffix for n in mine} == {".parquet", ".json"}
        assert run.frame.equals(load_run(("results.csv", GOOD)).frame)
        noted = [w for w in run.warnings if "was interrupted" in w]
        assert len(noted) == (outcome == "finished")
        assert set(reported) == left
    # the next start has nothing more to do or say
    again = recover(folder)
    assert not again.finished and not again.rolled_back and set(again.left) == left
    assert contents(folder) == kept


def test_a_save_in_progress_in_another_process_is_left_alone(tmp_path) -> None:
    folder = tmp_path / "ws"
    folder.mkdir()
    go = tmp_path / "go"
    proc = child(folder, "-", str(go))  # stops between its two temporary files and renames
    proc.stdin.write(GOOD)
    proc.stdin.close()
    deadline = time.monotonic() + 120
    while not (tmp_path / "paused").exists():
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    before = contents(folder)
    assert any(name.endswith(".saving") for name in before)
    found = recover(folder)  # another server starts meanwhile
    assert not found.finished and not found.rolled_back and not found.left
    assert contents(folder) == before
    go.touch()
    assert proc.wait(timeout=120) == 0
    (run,) = Workspace(folder).load_all()[0]
    assert run.name == "results" and not any("interrupted" in w for w in run.warnings)


def test_an_earlier_kbench_s_half_done_save_is_finished_when_its_bytes_are_whole(
        tmp_path) -> None:
    # what the issue found: the sidecar renamed, the Parquet file still *.parquet.tmp, no
    # journal (kbench kept none then)
    folder = tmp_path / "ws"
    path = Workspace(folder).save(load_run(("results.csv", GOOD)))
    path.rename(path.with_name(path.name + ".tmp"))
    (run,), errors = Workspace(folder).load_all()
    assert errors == [] and path.exists() and any("was interrupted" in w for w in run.warnings)
    # its bytes are not the ones the sidecar records: listed, never removed
    path.rename(path.with_name(path.name + ".tmp"))
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(b"truncated")
    runs, errors = Workspace(folder).open_all()
    assert runs == [] and tmp.read_bytes() == b"truncated"
    assert {err.file for err in errors} == {path.with_suffix(".json").name, tmp.name}
    assert all("left in place" in str(err) for err in errors)


def test_a_forged_journal_removes_no_file_it_does_not_name_as_its_own(tmp_path) -> None:
    folder = tmp_path / "ws"
    folder.mkdir()
    stem = "results-0123456789ab-deadbeef"
    (folder / f"{stem}.parquet").write_bytes(b"someone else's bytes")
    (folder / "keep.txt").write_bytes(b"x")
    (folder / f"{stem}.saving").write_text(json.dumps(
        {"name": "results", "stem": stem, "parquet_sha256": "0" * 64,
         "sidecar_sha256": "0" * 64}))
    found = recover(folder)
    assert (folder / f"{stem}.parquet").read_bytes() == b"someone else's bytes"
    assert (folder / "keep.txt").exists()
    assert f"{stem}.parquet" in found.left and f"{stem}.parquet" in found.rolled_back


@pytest.mark.timeout(60)
def test_fifos_named_like_a_save_s_files_never_stall_a_start(tmp_path) -> None:
    # a journal, a temporary file and a sidecar that are FIFOs: opening one for reading would
    # wait for a writer forever (issue 42, item 8's class)
    folder = tmp_path / "ws"
    folder.mkdir()
    stem = "results-0123456789ab-deadbeef"
    for name in (f"{stem}.saving", f"{stem}.parquet.tmp", "other-0123456789ab-cafebabe.json",
                 "gone-0123456789ab-0badf00d.removing"):
        os.mkfifo(folder / name)
    start = time.monotonic()
    runs, errors = Workspace(folder).open_all()
    assert time.monotonic() - start < 10 and runs == []
    assert {err.file for err in errors} >= {f"{stem}.parquet.tmp",
                                            "other-0123456789ab-cafebabe.json"}
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [f"{stem}.saving", f"{stem}.parquet.tmp", "other-0123456789ab-cafebabe.json",
         "gone-0123456789ab-0badf00d.removing"])  # nothing removed


@pytest.mark.parametrize("suffix", [".removing.tmp", ".removing", ".saving.tmp"])
def test_a_journal_that_ended_after_the_listing_is_not_called_unreadable(tmp_path, suffix,
                                                                        monkeypatch) -> None:
    """Another server's removal (or save) can end between this start's listing of the folder
    and its lock on the journal: the name then holds nothing, and the journal it opened is a
    deleted file with a whole record. It was reported as "left in place: not a journal kbench
    can read" (a shared-server test met it: two servers removing at once)."""
    from kbench_core import workspace_files

    stem = "bob21-17a3844faada-c6d9d90d"
    journal = tmp_path / f"{stem}{suffix}"
    journal.write_text(json.dumps({"name": "bob21", "stem": stem, "parquet_sha256": "a" * 64,
                                   "sidecar_sha256": "b" * 64}))
    opened = workspace_files._open_journal

    def open_then_end(path: Path) -> int | None:
        handle = opened(path)
        path.unlink()  # the other process ends its journal: renamed, deleted, unlocked
        return handle

    monkeypatch.setattr(workspace_files, "_open_journal", open_then_end)
    found = recover(tmp_path)
    assert not found.left and not found.rolled_back and not found.finished
