"""Tests of the kbench command line."""

from __future__ import annotations

import subprocess
import sys

from kbench_core.cli import APP_PATH, app_command, main

GOOD = ("model,bias,condition,intensity,domain,score\n"
        "m1,anchoring_effect,treatment,weak,social,1\n")


def test_validate_prints_kind_and_size(tmp_path, capsys) -> None:
    path = tmp_path / "good.csv"
    path.write_text(GOOD)
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "good.csv: bias, 1 rows, 1 models (m1)" in out and "format csv" in out


def test_validate_exit_status_one_on_any_error(tmp_path, capsys) -> None:
    good, bad = tmp_path / "good.csv", tmp_path / "bad.csv"
    good.write_text(GOOD)
    bad.write_text(GOOD.replace("social,1", "social,yes"))
    assert main(["validate", str(good), str(bad)]) == 1
    out = capsys.readouterr().out
    assert "INVALID bad.csv: line 2, field 'score'" in out
    assert main(["validate", str(tmp_path / "missing.csv")]) == 1


def test_validate_size_limit(tmp_path, capsys) -> None:
    path = tmp_path / "good.csv"
    path.write_text(GOOD * 1000)
    assert main(["validate", "--max-mb", "0.001", str(path)]) == 1
    assert "over the" in capsys.readouterr().out


def test_app_command_passes_files_and_workspace(tmp_path) -> None:
    run = tmp_path / "r.csv"
    cmd = app_command([str(run)], workspace=str(tmp_path / "ws"), port=8600,
                      no_samples=True, headless=True)
    assert cmd[:5] == [sys.executable, "-m", "streamlit", "run", str(APP_PATH)]
    assert "--server.port" in cmd and "8600" in cmd
    assert cmd[cmd.index("--") + 1:] == [str(run), "--workspace", str(tmp_path / "ws"),
                                         "--no-samples"]


def test_console_script_is_installed() -> None:
    out = subprocess.run([sys.executable, "-m", "kbench_core.cli", "--version"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.startswith("kbench ")


def test_kbench_core_never_imports_streamlit() -> None:
    code = ("import sys, kbench_core.io, kbench_core.cli, kbench_core.workspace, "
            "kbench_core.schema; assert 'streamlit' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
