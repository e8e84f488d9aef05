"""Files of one benchmark format loaded together (issue 24.8): an upload of a folder's files
is one run, as the folder is, and a folder of renamed reports is recognised by content."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from kbench_core.io import (
    RunFormatError,
    batch_groups,
    batch_hash,
    batch_name,
    load_files,
    load_run,
)

ROOT = Path(__file__).resolve().parent.parent
REPORTS = ROOT / "sample_data" / "real" / "kahnebench"
CSV = b"model,bias,condition,domain,score\nm,anchoring_effect,control,social,0\n"


def report_files() -> list[tuple[str, bytes]]:
    return [(p.name, p.read_bytes()) for p in sorted(REPORTS.glob("fingerprint_*.json"))]


def test_the_eleven_reports_uploaded_together_are_the_folder_run() -> None:
    files = report_files()
    assert len(files) == 11
    assert batch_groups(files) == [list(range(11))]
    run = load_files(files)
    folder = load_run(REPORTS)
    assert run.name == "fingerprint" and run.kind == "bias_summary"
    assert len(run.models) == 11 and len(run) == 11 * 15
    pd.testing.assert_frame_equal(run.frame, folder.frame)
    assert run.meta["format"] == "KahneBench fingerprint reports (11 files)"
    assert run.meta["bytes"] == sum(len(d) for _, d in files)
    assert run.meta["files"] == [name for name, _ in files]
    # The hash is the folder's: a folder's hash covers the files read (its LICENSE is
    # skipped unread, issue 29), here just these reports.
    assert batch_hash(files) == folder.content_hash


def test_other_files_of_the_batch_stay_runs_of_their_own() -> None:
    files = report_files()[:3]
    batch = [("a.csv", CSV), files[0], ("notes.json", b'{"model_id": "x"}'), *files[1:],
             ("b.csv", CSV)]
    # The reports in one group at the place of the first; a JSON that only has a model_id
    # is no report; CSV files are runs of their own.
    assert batch_groups(batch) == [[0], [1, 3, 4], [2], [5]]
    # One file of the format is a group of one; the same name twice cannot share a folder.
    assert batch_groups(files[:1]) == [[0]]
    assert batch_groups([files[0], files[0], files[1]]) == [[0, 2], [1]]


def test_renamed_reports_are_recognised_by_content(tmp_path) -> None:
    files = [(f"model_{i}.json", data) for i, (_, data) in enumerate(report_files())]
    assert batch_groups(files) == [list(range(11))]
    assert batch_name(files) == "model"
    uploaded = load_files(files)
    for name, data in files:
        (tmp_path / name).write_bytes(data)
    folder = load_run(tmp_path)  # not fingerprint_*.json: the files' content decides
    assert folder.meta["format"] == "KahneBench fingerprint reports (folder)"
    assert len(folder.models) == 11
    pd.testing.assert_frame_equal(uploaded.frame, folder.frame)


def test_batch_names_and_errors() -> None:
    assert batch_name([("fingerprint_a.json", b""), ("fingerprint_b.json", b"")]) \
        == "fingerprint"
    assert batch_name([("a.json", b""), ("b.json", b""), ("c.json", b"")]) == "a and 2 more"
    with pytest.raises(RunFormatError, match="holds no benchmark output"):
        load_files([("a.csv", CSV), ("b.csv", CSV)])
    with pytest.raises(RunFormatError, match="over the file size limit"):
        load_files(report_files()[:2], max_bytes=1000)
