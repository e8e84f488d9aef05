"""Tests of the kbench command line."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kbench_core.cli import APP_PATH, app_command, main
from tests import cli_run

GOOD = ("model,bias,condition,intensity,domain,score\n"
        "m1,anchoring_effect,treatment,weak,social,1\n")


def test_validate_prints_kind_and_size(tmp_path, capsys) -> None:
    path = tmp_path / "good.csv"
    path.write_text(GOOD)
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "good.csv: bias, 1 row, 1 model (m1)" in out and "format csv" in out


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
    demo = app_command([], workspace=None, port=None, no_samples=False, headless=True,
                       demo=True)
    assert demo[demo.index("--") + 1:] == ["--demo"]


def _children(pid: int) -> list[int]:
    """Live processes whose parent is ``pid`` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _answers(url: str) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=1) as reply:
            return reply.status == 200
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("signum", ["SIGTERM", "SIGINT"])
def test_a_signal_to_kbench_app_stops_the_dashboard(tmp_path, signum) -> None:
    # Issue 24.2: `kill` of `kbench app` left Streamlit (its child) serving the port, so a
    # container or a service manager could not stop kbench.
    import os
    import signal
    import socket
    import time

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    health = f"http://127.0.0.1:{port}/_stcore/health"
    parent = subprocess.Popen(
        [sys.executable, "-m", "kbench_core.cli", "app", "--port", str(port), "--headless",
         "--no-samples"], cwd=Path(__file__).resolve().parent.parent,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    children: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while not _answers(health):
            assert parent.poll() is None and time.monotonic() < deadline, "no dashboard"
            time.sleep(0.3)
        children = _children(parent.pid)
        assert children, "kbench app runs the dashboard as a child process"
        parent.send_signal(getattr(signal, signum))
        parent.wait(timeout=15)
        deadline = time.monotonic() + 5
        while (_answers(health) or any(map(_alive, children))) \
                and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _answers(health), f"the port still answers after {signum}"
        assert not any(map(_alive, children)), "a child of kbench app outlived it"
    finally:
        for pid in children:  # only the processes this test started
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        if parent.poll() is None:
            parent.kill()
            parent.wait()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_a_dashboard_that_ignores_the_signal_is_killed_after_the_grace(tmp_path) -> None:
    import os
    import signal
    import time

    ready = tmp_path / "child.pid"
    stubborn = ("import os, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                f"open({str(ready)!r}, 'w').write(str(os.getpid())); time.sleep(120)")
    wrapper = ("import sys; from pathlib import Path; from kbench_core.cli import run_app; "
               f"sys.exit(run_app([sys.executable, '-c', {stubborn!r}], cwd=Path('.'), "
               "env=None, grace=1.0))")
    parent = subprocess.Popen([sys.executable, "-c", wrapper],
                              cwd=Path(__file__).resolve().parent.parent)
    child = None
    try:
        deadline = time.monotonic() + 30
        while not ready.exists() or not ready.read_text():
            assert time.monotonic() < deadline and parent.poll() is None
            time.sleep(0.05)
        child = int(ready.read_text())
        started = time.monotonic()
        parent.send_signal(signal.SIGTERM)
        status = parent.wait(timeout=10)
        took = time.monotonic() - started
        assert 1.0 <= took < 5.0, took  # waited out the grace, then killed the child
        assert status == 128 + signal.SIGKILL
        assert not _alive(child)
    finally:
        if child is not None and _alive(child):
            os.kill(child, signal.SIGKILL)
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def test_console_script_is_installed() -> None:
    out = subprocess.run([sys.executable, "-m", "kbench_core.cli", "--version"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.startswith("kbench ")


def test_metrics_prints_the_main_table(capsys) -> None:
    from kbench_core import kahne
    from kbench_core.io import load_run

    assert main(["metrics", "sample_data/bias.csv", "--format", "csv"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("# kbench ")
    table = pd.read_csv(io.StringIO(text), comment="#")
    expected = kahne.fingerprint(load_run("sample_data/bias.csv").frame).biases
    assert len(table) == len(expected)
    np.testing.assert_allclose(table["bms"], expected["bms"])
    assert main(["metrics", "sample_data/bias.csv", "--format", "latex"]) == 0
    tex = capsys.readouterr().out
    assert r"\toprule" in tex and r"anchoring\_effect" in tex


def test_figures_writes_every_figure_and_table(tmp_path) -> None:
    import shutil

    from tests.conftest import in_ci

    if not shutil.which("chromium"):
        if in_ci():
            pytest.fail("CI: chromium is needed for kbench figures")
        pytest.skip("kbench figures needs Debian's chromium")
    out = tmp_path / "figs"
    assert main(["figures", "sample_data/bias.csv", "--out", str(out), "--format", "svg,png",
                 "--size", "one-column", "--scale", "1"]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert "bias_fingerprint.csv" in names and "bias_fingerprint.tex" in names
    assert "bias_bms_curves-anchoring_effect.svg" in names
    assert "bias_bci_heatmap-synthetic-alpha.png" in names
    png = (out / "bias_has_chart.png").read_bytes()
    from kbench_core import figures, kahne
    from kbench_core.figures.base import fit_to_width
    from kbench_core.io import load_run

    chart = figures.has_chart(kahne.has(load_run("sample_data/bias.csv").frame))
    own_height = fit_to_width(chart, 336).layout.height
    # the paper size fixes the width; the height is the figure's own, laid out for that width
    # (its title wraps onto more lines)
    assert own_height > chart.layout.height
    assert (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")) == (
        336, own_height)
    assert len([n for n in names if n.endswith(".svg")]) == len(
        [n for n in names if n.endswith(".png")])


def test_report_is_self_contained_and_escapes_names(tmp_path) -> None:
    run = tmp_path / "x.csv"
    run.write_text("model,bias,condition,intensity,domain,score\n"
                   "<script>alert(1)</script>,anchoring_effect,control,,d,0\n"
                   "<script>alert(1)</script>,anchoring_effect,treatment,weak,d,1\n")
    out = tmp_path / "report.html"
    assert main(["report", str(run), "--out", str(out)]) == 0
    html = out.read_text()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "https://cdn" not in html.split("<body>")[1][:2000]  # plotly.js inlined, no CDN
    assert html.count('class="plotly-graph-div kb-plot"') >= 4  # drawn as they scroll in


def test_figures_rejects_unknown_formats(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["figures", "sample_data/bias.csv", "--out", "x", "--format", "jpeg"])
    assert "--format takes pdf, svg, png" in capsys.readouterr().err


def test_figures_items_keep_only_what_is_named(tmp_path) -> None:
    import shutil

    if not shutil.which("chromium"):
        pytest.skip("kbench figures needs Debian's chromium")
    out = tmp_path / "few"
    assert main(["figures", "sample_data/bias.csv", "--out", str(out), "--format", "svg",
                 "--items", "fingerprint,bms_curves-loss_aversion"]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "bias_bms_curves-loss_aversion.svg", "bias_fingerprint.csv", "bias_fingerprint.tex"]


def test_metrics_of_a_judged_run_stack_one_table_per_judge(capsys) -> None:
    from kbench_core import vuln
    from kbench_core.io import load_run

    assert main(["metrics", "sample_data/judged.csv", "--precision", "full"]) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out), comment="#")
    frame = load_run("sample_data/judged.csv").frame
    # the majority of the three judges, then each judge (SPEC 6)
    assert len(table) == frame["model"].nunique() * (frame["judge"].nunique() + 1)
    assert table["judge"].iloc[0] == "majority"
    one = vuln.tiers(frame, judge="judge-two").set_index("model")
    mine = table[table["judge"] == "judge-two"].set_index("model")
    np.testing.assert_allclose(mine["sui"], one.loc[mine.index, "sui"])
    # without --precision full: 4 significant digits, e.g. 0.596513... -> 0.5965
    assert main(["metrics", "sample_data/judged.csv"]) == 0
    shown = pd.read_csv(io.StringIO(capsys.readouterr().out), comment="#")
    rounded = shown[shown["judge"] == "judge-two"].set_index("model")["sui"]
    expected = [float(f"{v:.4g}") for v in one.loc[rounded.index, "sui"]]
    assert rounded.tolist() == expected
    assert {"tdr_low", "tdr_high", "sui"} <= set(table.columns)


def test_compare_prints_the_verdict_and_the_forest_table(capsys) -> None:
    from kbench_core import compare
    from kbench_core.io import load_run

    assert main(["compare", "sample_data/bias.csv", "--models", "synthetic-alpha",
                 "synthetic-beta", "--format", "csv"]) == 0
    out = capsys.readouterr().out
    verdict, table_text = out.split("\n", 1)
    frame = load_run("sample_data/bias.csv").frame
    est = compare.paired_difference(compare.per_item_values(frame, "bias"),
                                    "treatment_minus_control", "synthetic-alpha",
                                    "synthetic-beta")
    assert f"{est.value:+.3f} [{est.low:+.3f}, {est.high:+.3f}]" in verdict
    table = pd.read_csv(io.StringIO(table_text), comment="#")
    assert sorted(table["bias"]) == sorted(frame["bias"].unique())
    assert main(["compare", "sample_data/judged.csv", "--format", "latex"]) == 0
    assert r"\toprule" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["compare", "sample_data/bias.csv", "--models", "nobody", "synthetic-beta"])


def test_compare_on_native_effects_converts_them_to_d(tmp_path, capsys) -> None:
    from kbench_core import compare
    from kbench_core.io import load_run
    from kbench_core.replication import prepare_tests

    frame = load_run("sample_data/replication.csv").frame.drop(
        columns=["human_d", "agent_d", "human_pi", "agent_pi"])
    path = tmp_path / "native_effects.csv"
    frame.to_csv(path, index=False)
    assert main(["compare", str(path), "--models", "synthetic-agent-mirror",
                 "synthetic-agent-flat", "--format", "csv"]) == 0
    verdict = capsys.readouterr().out.split("\n", 1)[0]
    tests = prepare_tests(load_run(path).frame)
    est = compare.paired_difference(tests.assign(abs_diff=(tests["d_a"] - tests["d_h"]).abs()),
                                    "abs_diff", "synthetic-agent-mirror",
                                    "synthetic-agent-flat", cluster="study")
    assert f"{est.value:+.3f}" in verdict


# ------------------------------------------------------------------ hostile input (issue 19)


def _kbench(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """The command line in a subprocess: what a user sees, exit status and all."""
    return subprocess.run([sys.executable, "-m", "kbench_core.cli", *args], capture_output=True,
                          text=True, timeout=timeout, errors="surrogateescape")


def _kbench_here(*args: str) -> subprocess.CompletedProcess:
    """What :func:`_kbench` returns, the command run in this process (tests/cli_run.py: the
    child's encodings, exit status, warnings and tracebacks on stderr) without the ~2.5 s a
    child spends on its imports."""
    return cli_run.kbench(*args, errors="surrogateescape")


def test_validate_refuses_devices_and_fifos_in_one_line(tmp_path) -> None:
    import os

    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    done = _kbench("validate", "/dev/zero", str(fifo), timeout=30)  # was: reads until OOM
    assert done.returncode == 1
    lines = done.stdout.strip().splitlines()
    assert lines == ["INVALID zero: not a regular file (a device, FIFO or socket); give the "
                     "path of a saved file",
                     "INVALID pipe.csv: not a regular file (a device, FIFO or socket); give the "
                     "path of a saved file"]
    assert "Traceback" not in done.stderr


def test_control_characters_never_reach_the_terminal_raw(tmp_path) -> None:
    name = "m\x1b]0;owned\x07\x1b[2J\u202e"
    path = tmp_path / "esc.csv"
    path.write_text("model,bias,condition,intensity,domain,score\n"
                    f"{name},anchoring_effect,treatment,weak,social,1\n")
    done = _kbench_here("validate", str(path))
    assert done.returncode == 0
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout and "\u202e" not in done.stdout
    assert "m\\x1b]0;owned\\x07\\x1b[2J\\u202e" in done.stdout
    bad = tmp_path / "bad\x1b[31m.csv"
    bad.write_text(f"model,bias,condition,domain,score\n{name},b,control,d,x\n")
    done = _kbench_here("validate", str(bad))
    assert done.returncode == 1 and "\x1b" not in done.stdout
    assert done.stdout.startswith("INVALID bad\\x1b[31m.csv: line 2, field 'score'")


def test_huge_numbers_and_surrogates_are_one_line(tmp_path) -> None:
    import json

    records = [{"model": "m\ud800", "bias": "b", "condition": "control", "domain": "d",
                "score": 0.5}]
    (tmp_path / "s.json").write_text(json.dumps(records))
    (tmp_path / "n.json").write_text(json.dumps(records).replace("\\ud800", "").replace(
        "0.5", "9" * 5000))
    done = _kbench_here("validate", str(tmp_path / "s.json"), str(tmp_path / "n.json"))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stdout.splitlines()[0].startswith("INVALID s.json: record 1, field 'model'")
    assert done.stdout.splitlines()[1].startswith("INVALID n.json: record 1, field 'score'")
    done = _kbench_here("metrics", str(tmp_path / "n.json"))
    assert done.returncode == 1 and done.stderr.startswith("kbench: n.json: record 1")
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1


def test_bad_out_paths_are_one_line_errors(tmp_path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cases = [("metrics", "sample_data/bias.csv", "--out", str(tmp_path / "no" / "dir" / "x.csv")),
             ("report", "sample_data/bias.csv", "--out", str(tmp_path)),
             ("figures", "sample_data/bias.csv", "--out", str(blocker / "sub"), "--items",
              "fingerprint")]
    for args in cases:
        done = _kbench_here(*args)
        assert done.returncode != 0, args
        assert "Traceback" not in done.stderr, done.stderr
        assert done.stderr.strip().splitlines()[-1].startswith("kbench: "), done.stderr


def test_models_starting_with_a_dash_can_be_compared(tmp_path, capsys) -> None:
    from kbench_core.io import load_run

    frame = load_run("sample_data/bias.csv").frame
    names = {"synthetic-alpha": "-alpha", "synthetic-beta": "--beta"}
    frame["model"] = frame["model"].astype(str).replace(names)
    path = tmp_path / "dash.csv"
    frame.to_csv(path, index=False)
    assert main(["compare", str(path), "--models", "-alpha", "--beta", "--format", "csv"]) == 0
    verdict = capsys.readouterr().out.split("\n", 1)[0]
    # names that are not plain words are JSON literals in the CSV's verdict comment (issue
    # 42, item 3), which json.loads reads back
    from kbench_core.text import json_quote

    assert json_quote("-alpha") in verdict and json_quote("--beta") in verdict
    assert main(["compare", str(path), "--model=-alpha", "--model=--beta", "--format",
                 "csv"]) == 0
    assert main(["compare", str(path), "--models", "--format", "csv"]) == 0  # every pair


def test_colliding_and_long_names_give_distinct_files(tmp_path) -> None:
    import shutil

    if not shutil.which("chromium"):
        pytest.skip("kbench figures needs Debian's chromium")
    sources = []
    for i, name in enumerate(("x y", "x_y", "x&y")):
        folder = tmp_path / f"src{i}"
        folder.mkdir()
        shutil.copy("sample_data/bias.csv", folder / f"{name}.csv")
        sources.append(str(folder / f"{name}.csv"))
    out = tmp_path / "out"
    done = _kbench_here("figures", *sources, "--out", str(out), "--items", "fingerprint")
    assert done.returncode == 0, done.stderr
    assert len(list(out.iterdir())) == 6  # 3 runs x (csv + tex); was 2: four overwritten
    text = Path("sample_data/bias.csv").read_text()
    long_bias = "b" * 300  # a 300-character id: was an OSError traceback
    (tmp_path / "long.csv").write_text(text.replace("anchoring_effect", long_bias))
    done = _kbench_here("figures", str(tmp_path / "long.csv"), "--out",
                        str(tmp_path / "long"), "--items", "bms_curves", "--format", "svg")
    assert done.returncode == 0, done.stderr
    names = [p.name for p in (tmp_path / "long").iterdir()]
    assert any(n.startswith("long_bms_curves-bbbb") for n in names)
    assert all(len(n.encode()) < 150 for n in names)


# Every real file of sample_data/real (MIT-licensed releases): what a new user runs first.
REAL = Path(__file__).resolve().parents[1] / "sample_data" / "real"
REPORTS = sorted((REAL / "kahnebench").glob("fingerprint_*.json"))
HSB = REAL / "humanstudy-bench"
# file -> (kind, rows of the main table, a column the main table must have)
REAL_FILES = {
    **{report: ("bias_summary", 15, "bms") for report in REPORTS},
    REAL / "kahnebench": ("bias_summary", 15 * len(REPORTS), "bms"),
    HSB / "simple_results.json": ("replication_summary", 63, "config_ecs"),
    HSB / "simple_studies.csv": ("replication_summary", 63, "mean_study_ecs"),
    # finding rows only: no configuration leaderboard, so the findings table, with a note
    HSB / "simple_findings.csv": ("replication_summary", 4181, "finding_score"),
}


def test_real_files_are_all_covered() -> None:
    assert len(REPORTS) == 11
    data = {p for p in REAL.rglob("*") if p.is_file() and p.suffix in (".json", ".csv")}
    assert data == {p for p in REAL_FILES if p.is_file()}  # a new real file needs a case here


@pytest.mark.parametrize("path", list(REAL_FILES), ids=lambda p: p.name)
def test_validate_and_metrics_work_on_every_real_file(path, capsys) -> None:
    kind, rows, column = REAL_FILES[path]
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"ok      {path}: {kind}, ") and "INVALID" not in out
    assert main(["metrics", str(path), "--format", "csv"]) == 0
    captured = capsys.readouterr()
    table = pd.read_csv(io.StringIO(captured.out), comment="#")
    assert len(table) == rows and column in table and table[column].notna().any()
    assert table["model"].notna().all()
    if path.name == "simple_findings.csv":  # says why it is not the leaderboard, and what to load
        assert "no leaderboard table" in captured.err and "simple_results.json" in captured.err
    else:
        assert captured.err == ""
    assert main(["metrics", str(path), "--format", "latex"]) == 0
    tex = capsys.readouterr().out
    assert r"\begin{tabular}" in tex and r"\toprule" in tex and r"\bottomrule" in tex
    assert main(["metrics", str(path), "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    lines = [line for line in md.splitlines() if line.startswith("|")]
    assert lines[0].startswith("| model |") and set(lines[1]) <= set("|-: ")
    assert len(lines) == rows + 2


def test_real_published_numbers_reach_the_metrics_table(capsys) -> None:
    import json

    published = json.loads((HSB / "simple_results.json").read_text(encoding="utf-8"))["configs"]
    assert main(["metrics", str(HSB / "simple_results.json"), "--precision", "full"]) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out), comment="#").set_index("model")
    for name, config in published.items():
        for ours, theirs in (("config_pas", "pas_raw"), ("config_ecs", "ecs")):
            if config[theirs] is None:
                assert np.isnan(table.loc[name, ours])
            else:
                assert table.loc[name, ours] == pytest.approx(config[theirs], abs=1e-12)


def test_findings_only_run_explains_itself_in_report_and_figures(tmp_path, capsys) -> None:
    out = tmp_path / "r.html"
    assert main(["report", str(HSB / "simple_findings.csv"), "--out", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert "Published finding scores" in html and "study_1_hypothetical_stories/F1" in html
    assert "Why: this run has finding rows only" in html and "simple_results.json" in html
    # the tables alone: no figure to render, only the note for the items left empty
    assert main(["figures", str(HSB / "simple_findings.csv"), "--out", str(tmp_path / "f"),
                 "--items", "leaderboard,findings"]) == 0
    err = capsys.readouterr().err
    assert "simple_findings: no leaderboard: this run has finding rows only" in err
    assert sorted(p.name for p in (tmp_path / "f").iterdir()) == [
        "simple_findings_findings.csv", "simple_findings_findings.tex"]


# ------------------------------------------------------------------ issue 19: outputs and Chromium

FORMULAS = ['=HYPERLINK("https://evil.example","x")', "\uff1dcmd", "\x00@SUM(A1)"]


def test_report_out_is_checked_before_any_run_is_loaded(tmp_path, monkeypatch) -> None:
    import kbench_core.cli.html_report as cli  # where `report` looks up _load_all

    def never(*args, **kwargs):
        raise AssertionError("the runs were loaded before --out was checked")

    monkeypatch.setattr(cli, "_load_all", never)
    for out, why in ((tmp_path / "no" / "dir" / "r.html", "no folder"),
                     (tmp_path, "it is a folder")):
        with pytest.raises(SystemExit) as info:
            main(["report", "sample_data/bias.csv", "--out", str(out)])
        message = str(info.value.code)
        assert message.startswith("kbench: cannot write") and why in message
        assert len(message.splitlines()) == 1
    with pytest.raises(SystemExit, match="no folder"):
        main(["metrics", "sample_data/bias.csv", "--out", str(tmp_path / "no" / "m.csv")])


def test_figures_without_a_working_chromium_is_one_line(tmp_path, monkeypatch) -> None:
    from kaleido.errors import BrowserFailedError

    from kbench_core import export

    def fail(self):
        raise BrowserFailedError("The browser seemed to close immediately after starting.\n"
                                 "You can set the `logging.Logger` level lower to see more.")

    monkeypatch.setattr(export.FigureExporter, "__enter__", fail)
    with pytest.raises(SystemExit) as info:
        main(["figures", "sample_data/bias.csv", "--out", str(tmp_path / "f"), "--items",
              "fingerprint"])
    message = str(info.value.code)
    assert message.startswith("kbench: cannot draw figures: kaleido could not start Chromium")
    assert "seemed to close" in message and len(message.splitlines()) == 1


def _formula_run(tmp_path) -> Path:
    from kbench_core.io import load_run

    frame = load_run("sample_data/bias.csv").frame
    models = sorted(map(str, frame["model"].unique()))
    frame["model"] = frame["model"].astype(str).map(dict(zip(models, FORMULAS, strict=True)))
    frame["bias"] = "-" + frame["bias"].astype(str)  # a bias name starting a formula too
    path = tmp_path / "formulas.parquet"
    frame.to_parquet(path)
    return path


def _assert_no_live_formula(text: str) -> list[list[str]]:
    import csv

    assert "\x00" not in text
    rows = list(csv.reader(io.StringIO(text)))
    for row in rows:
        for cell in row:
            if cell.startswith("#"):
                continue  # a provenance comment line
            try:
                float(cell)
            except ValueError:
                assert not cell.startswith(("=", "+", "-", "@", "\t", "\r", "\uff1d")), cell
    return rows


def test_metrics_csv_neutralises_formulas_in_cells(tmp_path, capsys) -> None:
    path = _formula_run(tmp_path)
    assert main(["metrics", str(path), "--format", "csv"]) == 0
    text = capsys.readouterr().out
    rows = [row for row in _assert_no_live_formula(text) if row and not row[0].startswith("#")]
    column = rows[0].index("model")
    # every name kept, made inert (the loader removes the NUL, issue 28: the @ still leads)
    assert {row[column] for row in rows[1:]} == {
        "'" + FORMULAS[0], "'\uff1dcmd", "'@SUM(A1)"}
    assert all(row[rows[0].index("bias")].startswith("'-") for row in rows[1:])
    assert main(["metrics", str(path), "--format", "csv", "--out",
                 str(tmp_path / "m.csv")]) == 0
    _assert_no_live_formula((tmp_path / "m.csv").read_text())
