"""Bounded cost and no silent loss on JSON that looks valid (issue 29, items 1-4).

Each case passes every limit of the loader, yet cost gigabytes or minutes, or lost rows
without a word. Memory and time are measured in a child process (``VmHWM``, as in
:mod:`tests.test_hostile`), with generous bounds: far above what the fixed loader needs and
far below what it needed before (``benchmarks/hostile.py`` prints the exact figures).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kbench_core.io import RunFormatError, load_run
from tests.test_hostile import ROOT, _peak_rss_mb

RECORD = {"model": "m", "bias": "anchoring_effect", "condition": "control",
          "domain": "social", "score": 0.5}


def _error(name: str, data: bytes) -> str:
    with pytest.raises(RunFormatError) as err:
        load_run((name, data))
    return str(err.value)


# ------------------------------------------------------------------ 1. two record lists


@pytest.mark.parametrize("keys", [("records", "data"), ("rows", "records"),
                                  ("data", "rows")])
def test_an_object_with_two_record_lists_is_refused_naming_both(keys) -> None:
    # Was: the first list loaded (4 of 8 rows), no warning.
    payload = {keys[0]: [RECORD] * 4, keys[1]: [{**RECORD, "model": "n"}] * 4}
    message = _error("two.json", json.dumps(payload).encode())
    assert f"'{keys[0]}' (4 records)" in message and f"'{keys[1]}' (4 records)" in message
    assert "drop" in message


def test_one_record_list_beside_other_keys_still_loads() -> None:
    run = load_run(("one.json", json.dumps({"records": [RECORD] * 4, "note": [1, 2],
                                            "meta": {"a": 1}}).encode()))
    assert len(run) == 4


# ------------------------------------------------------------------ 3. folders


def _reports_folder(folder: Path, n: int = 40) -> None:
    reports = sorted((ROOT / "sample_data" / "real" / "kahnebench").glob("fingerprint_*.json"))
    for i in range(n):
        data = reports[i % len(reports)].read_bytes()
        (folder / f"fingerprint_m{i}.json").write_bytes(
            data.replace(b'"model_id": "', f'"model_id": "m{i}-'.encode(), 1))


@pytest.mark.parametrize("name", [".cache.bin", "weights.bin"])
def test_hidden_and_unrelated_files_of_a_folder_are_never_read(tmp_path: Path, name) -> None:
    # Was: the folder's content hash read every file, hidden ones too (a 600 MB hidden file
    # next to 40 reports peaked at 614 MB; the red team's 1.7 GB); a big unrelated file was
    # read whole into the folder's members.
    folder = tmp_path / "reports"
    folder.mkdir()
    _reports_folder(folder)
    with open(folder / name, "wb") as handle:
        handle.write(os.urandom(1 << 20) * 300)
    base, peak, out = _peak_rss_mb(
        "from kbench_core.io import load_run\n"
        f"run = load_run({str(folder)!r})\n"
        "print('ROWS', len(run), any('unread' in w and "
        f"{name!r} in w for w in run.warnings))\n")
    assert "ROWS 600 True" in out, out[-500:]
    assert peak - base < 150, peak - base  # was 300 MB + the reports


def test_a_folder_file_counts_against_the_decompressed_limit(tmp_path: Path) -> None:
    folder = tmp_path / "reports"
    folder.mkdir()
    _reports_folder(folder, 3)
    total = sum(p.stat().st_size for p in folder.iterdir())
    with pytest.raises(RunFormatError, match="decompressed-size limit"):
        load_run(folder, max_decompressed=total - 1)
    assert len(load_run(folder, max_decompressed=total)) > 0
