"""The app's run state (issue 37): a page opened by an upload shows that upload first, and a
session learns that another session removed a workspace run (AppTest, two sessions)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from kbench_app import state
from kbench_app.registry import RunRegistry
from kbench_core.workspace import Workspace

ROOT = Path(__file__).resolve().parent.parent
REAL = Path(os.environ.get("KBENCH_REAL_DATA", ROOT.parent / "shared" / "data" / "real"))
RECORDS = ROOT / "tests" / "data" / "formats" / "blockbench_multi_judge_records.json"
BIAS = (ROOT / "sample_data" / "bias.csv").read_bytes()


def session(monkeypatch: pytest.MonkeyPatch, args: str) -> AppTest:
    monkeypatch.setenv("KBENCH_APP_ARGS", args)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def upload(at: AppTest, name: str, data: bytes, mime: str = "text/csv") -> AppTest:
    at.switch_page("views/runs.py").run()
    at.file_uploader(key="runs_uploader").set_value([(name, data, mime)]).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def registry(at: AppTest) -> RunRegistry:
    return at.session_state[state.REGISTRY]


# ------------------------------------------------------------ 37.5: the upload is shown first

def _published(name: str) -> bytes:
    path = REAL / "humanstudy-bench" / name
    if not path.exists():
        pytest.skip(f"the real HumanStudy-Bench file {path} is not on this machine")
    return path.read_bytes()


@pytest.mark.parametrize("name", ["simple_findings.csv", "simple_studies.csv"])
def test_an_uploaded_published_table_opens_replication_on_itself(monkeypatch, name) -> None:
    # Issue 37.5: with the bundled samples loaded, the upload opened Replication on the
    # synthetic per-test run, the upload's section 2,500 px lower.
    at = upload(session(monkeypatch, ""), name, _published(name))
    assert at.title[0].value == "Replication"
    stem = Path(name).stem
    picker = at.selectbox(key="rep_summary_run")
    assert picker.value == stem and picker.options[0] == stem  # chosen, and at the top
    # its section is the page's first, above the synthetic per-test run's
    assert at.subheader[0].value == "Published results"
    assert "Human against agent effects (ECS)" in [s.value for s in at.subheader[1:]]
    # finding scores alone: the page says why there is only their table
    findings_only = [i.value for i in at.info if "finding scores only" in i.value]
    assert len(findings_only) == (name == "simple_findings.csv")


def test_the_per_test_section_stays_first_without_such_an_upload(monkeypatch) -> None:
    at = session(monkeypatch, "")
    at.switch_page("views/replication.py").run()
    assert at.subheader[0].value == "Human against agent effects (ECS)"


def test_judge_agreement_opens_on_the_uploaded_judged_run(monkeypatch) -> None:
    # Issue 37.5: after a multi-judge upload the agreement page opened on the synthetic run,
    # even when the user had never chosen it (and when they had: the upload is the news).
    at = session(monkeypatch, "")
    at.switch_page("views/agreement.py").run()
    assert at.selectbox(key="agr_run").value == "judged"  # only samples: the first
    upload(at, RECORDS.name, RECORDS.read_bytes(), "application/json")
    assert at.title[0].value == "Vulnerability detection"
    assert at.multiselect(key="vuln_runs").value == [RECORDS.stem]
    at.switch_page("views/agreement.py").run()
    assert not at.exception, [e.value for e in at.exception]
    picker = at.selectbox(key="agr_run")
    assert picker.value == RECORDS.stem and picker.options[0] == RECORDS.stem
    assert any("judge\\-x" in c.value for c in at.caption)  # the upload's judges
    # Once shown, the user's own choice stays: the upload does not take the picker back.
    picker.set_value("judged").run()
    at.switch_page("views/runs.py").run()
    at.switch_page("views/agreement.py").run()
    assert at.selectbox(key="agr_run").value == "judged"


def test_a_run_opened_from_the_runs_page_is_shown_first_on_every_page(monkeypatch) -> None:
    at = session(monkeypatch, "")
    at.toggle(key="runs_group_uploads").set_value(False).run()
    # two files: the Runs page offers each on its page instead of switching
    at.file_uploader(key="runs_uploader").set_value([
        ("first.json", RECORDS.read_bytes(), "application/json"),
        ("second.csv", BIAS.replace(b"synthetic-gamma", b"synthetic-d"), "text/csv")]).run()
    assert at.title[0].value == "Runs"
    at.switch_page("views/agreement.py").run()
    assert at.selectbox(key="agr_run").value == "first"


def test_a_one_run_page_opens_on_the_users_run_before_a_sample(monkeypatch) -> None:
    # A run given to `kbench app` comes after the bundled samples; a page showing one run
    # opened on the synthetic sample (a page showing several shows every run of the user's).
    at = session(monkeypatch, str(RECORDS))
    at.switch_page("views/agreement.py").run()
    assert at.selectbox(key="agr_run").value == RECORDS.stem


# -------------------------------------------------- 37.8: a run another session removed

def test_a_run_another_session_removed_is_gone_on_the_next_interaction(monkeypatch,
                                                                      tmp_path) -> None:
    ws = tmp_path / "ws"
    RunRegistry(workspace=Workspace(ws)).add_files(
        [("kept.csv", BIAS), ("other.csv", BIAS.replace(b"synthetic-gamma", b"synthetic-d"))])
    args = f"--no-samples --workspace {ws}"
    user_a, user_b = session(monkeypatch, args), session(monkeypatch, args)
    user_b.switch_page("views/bias.py").run()
    user_b.multiselect(key="bias_runs").set_value(["kept"]).run()
    assert "synthetic-gamma" in set(user_b.dataframe[0].value["model"])  # rows read
    user_a.button(key="remove::kept").click().run()
    assert [p.name.split("-")[0] for p in ws.glob("*.parquet")] == ["other"]

    user_b.run()  # B's next interaction, on the page showing the removed run
    assert not user_b.exception, [e.value for e in user_b.exception]
    assert list(registry(user_b).runs) == ["other"]
    assert any("kept" in w.value and "removed from the workspace" in w.value
               for w in user_b.warning)
    assert any("kept" in t.value for t in user_b.toast)
    # it shows the remaining run, never the removed run's numbers
    assert user_b.multiselect(key="bias_runs").options == ["other"]
    assert user_b.multiselect(key="bias_runs").value == ["other"]
    assert "synthetic-gamma" not in set(user_b.dataframe[0].value["model"])
    # said once per page: the next change of a widget draws no warning again
    user_b.run()
    assert not any("removed from the workspace" in w.value for w in user_b.warning)
    # the Runs page lists only what is left, and says once what went
    user_b.switch_page("views/runs.py").run()
    assert user_b.dataframe[0].value["name"].tolist() == ["other"]
    assert any("kept" in w.value for w in user_b.warning)
    user_b.run()
    assert not any("removed from the workspace" in w.value for w in user_b.warning)


def test_drop_stale_lists_the_folder_only_when_it_changed(monkeypatch, tmp_path) -> None:
    import kbench_app.registry as registry_module

    ws = Workspace(tmp_path / "ws")
    mine = RunRegistry(workspace=ws)
    mine.add_files([("kept.csv", BIAS)])
    old = os.stat(ws.directory).st_mtime_ns - 10**10  # a folder changed 10 s ago
    os.utime(ws.directory, ns=(old, old))
    listed = []
    real = os.scandir
    monkeypatch.setattr(registry_module.os, "scandir",
                        lambda path: listed.append(path) or real(path))
    assert mine.drop_stale() == [] and len(listed) == 1
    assert mine.drop_stale() == [] and len(listed) == 1  # unchanged: one stat, no listing
    saved = mine.runs["kept"].meta["workspace_file"]
    (Path(ws.directory) / saved).unlink()
    assert mine.drop_stale() == [("kept", "bias")] and len(listed) == 2
    assert mine.runs == {}


def test_runs_not_kept_in_the_workspace_are_never_dropped(tmp_path) -> None:
    mine = RunRegistry(workspace=Workspace(tmp_path / "ws"))
    mine.add_files([("sample.csv", BIAS)], persist=False)  # a bundled sample: no file
    assert mine.drop_stale() == [] and list(mine.runs) == ["sample"]
    assert RunRegistry().drop_stale() == []  # no workspace
