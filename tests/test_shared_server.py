"""A shared demo server (issue 28): two strangers, one server, one workspace.

Each test plays two sessions against the same workspace folder (two registries, as two browser
sessions have) or opens the app with input a stranger controls. Nobody removes another session's
run, removal removes exactly the run removed, a failed save says so and leaves nothing behind, a
bad workspace path never stops the app, and every saved run comes back under its name.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from kbench_app import state
from kbench_app.registry import RunRegistry
from kbench_core.io import RunFormatError, load_run
from kbench_core.workspace import Workspace, WorkspaceError

ROOT = Path(__file__).resolve().parent.parent
GOOD = (b"model,bias,condition,intensity,domain,score\n"
        b"m1,anchoring_effect,treatment,weak,social,1\n"
        b"m1,anchoring_effect,control,,social,0\n")
OTHER = GOOD.replace(b"m1", b"m2")


def files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def session(folder: Path) -> RunRegistry:
    """A new session on the shared workspace, as the app starts one."""
    registry = RunRegistry(workspace=Workspace(folder))
    assert not registry.load_workspace().errors
    return registry


def test_removing_a_run_renamed_on_collision_removes_exactly_it(tmp_path) -> None:
    # two strangers each upload their own "results.csv"; a later session lists both, the
    # second as "results (2)", and removes that one
    session(tmp_path).add_files([("results.csv", GOOD)])
    session(tmp_path).add_files([("results.csv", OTHER)])
    later = session(tmp_path)
    assert list(later.runs) == ["results", "results (2)"]
    kept = later.runs["results"].models
    removed = later.runs["results (2)"].models
    later.remove("results (2)")
    again = session(tmp_path)
    assert list(again.runs) == ["results"] and again.runs["results"].models == kept != removed
    assert len(files(tmp_path)) == 2  # one Parquet file and its sidecar


def test_a_stranger_removing_the_same_bytes_does_not_remove_my_run(tmp_path) -> None:
    alice, bob = session(tmp_path), session(tmp_path)
    alice.add_files([("results.csv", GOOD)])
    bob.add_files([("results.csv", GOOD)])  # the same bytes, another session
    alice.remove("results")
    assert list(bob.runs) == ["results"]
    assert list(session(tmp_path).runs) == ["results"], "Bob's run is gone on the next start"
    bob.remove("results")
    assert files(tmp_path) == [] and list(session(tmp_path).runs) == []


def test_a_failed_save_leaves_nothing_and_says_the_run_is_not_kept(tmp_path,
                                                                   monkeypatch) -> None:
    real_write_text = Path.write_text

    def disk_full(self: Path, *args, **kwargs):
        if self.name.endswith(".json.tmp"):  # the Parquet file is written, then the disk fills
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", disk_full)
    registry = session(tmp_path)
    report = registry.add_files([("results.csv", GOOD)])
    assert report.added == ["results"]  # the run stays in this session...
    assert files(tmp_path) == []  # ...no partial file (*.parquet.tmp) is left...
    warning = registry.runs["results"].warnings[-1]
    assert "could not be saved in the workspace (No space left on device)" in warning
    assert "will not come back on the next start" in warning  # ...and it says so
    monkeypatch.undo()
    assert list(session(tmp_path).runs) == []
    registry.remove("results")  # removing an unsaved run deletes nothing, raises nothing


@pytest.mark.parametrize("layout", ["file", "under a file", "dangling link"])
def test_a_workspace_path_that_cannot_be_a_folder_is_named(tmp_path, layout) -> None:
    (tmp_path / "plain").write_text("not a folder")
    path = {"file": tmp_path / "plain", "under a file": tmp_path / "plain" / "ws",
            "dangling link": tmp_path / "link"}[layout]
    if layout == "dangling link":
        path.symlink_to(tmp_path / "nowhere")
    with pytest.raises(WorkspaceError, match=r"the workspace '.*' (is a file|cannot be "
                                             r"created: a part of its path is a file|is a "
                                             r"link to '.*nowhere', which does not exist)"):
        Workspace(path)
    # `kbench app` refuses to start, with one line
    result = subprocess.run([sys.executable, "-m", "kbench_core.cli", "app", "--workspace",
                             str(path), "--no-samples"], capture_output=True, text=True,
                            timeout=60, cwd=ROOT)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("kbench app: the "
                                                                        "workspace")
    # the app itself (started by `streamlit run`) starts without a workspace and says why
    os.environ["KBENCH_APP_ARGS"] = f"--no-samples --workspace {path}"
    try:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
        at.run()
    finally:
        del os.environ["KBENCH_APP_ARGS"]
    assert not at.exception, [e.value for e in at.exception]
    registry = at.session_state[state.REGISTRY]
    assert registry.workspace is None
    assert "the app runs without a workspace" in registry.errors["workspace"]


HOSTILE_NAMES = [" ", "\u202egnp.exe", "a" * 5000, "tab\there", "name\x00nul", "CON",
                 "..", ".hidden", "%{x}", "&lt;b&gt;", "https&colon;&sol;&sol;evil.example",
                 "x\ud800y"]


def test_every_saved_run_reloads_under_its_name(tmp_path) -> None:
    uploader = session(tmp_path)
    for i, name in enumerate(HOSTILE_NAMES):
        data = GOOD.replace(b"m1", f"model{i}".encode())
        report = uploader.add_files([(f"{name}.csv", data)])
        assert report.added and not report.errors, name
    assert len(uploader.runs) == len(HOSTILE_NAMES)
    fresh = RunRegistry(workspace=Workspace(tmp_path))
    report = fresh.load_workspace()
    assert not report.errors
    assert list(fresh.runs) == list(uploader.runs)
    for name in fresh.runs:  # no control, bidi or NUL character survives in a run's name
        assert name.isprintable() and len(name) <= 204, repr(name)


def test_nul_characters_in_labels_are_removed_and_the_row_named() -> None:
    records = [{"model": "ok", "bias": "b", "condition": "control", "domain": "d", "score": 0},
               {"model": "evil\u0000model", "bias": "b", "condition": "control", "domain": "d",
                "score": 1}]
    run = load_run(("nul.json", json.dumps(records).encode()))
    assert run.models == ["evilmodel", "ok"]
    assert run.warnings == ("field 'model': 1 row had NUL characters (\\x00) in the label, "
                            "removed (first: record 2)",)


# ------------------------------------------------------------------ links are input too

ENTITY_URLS = ["https&colon;&sol;&sol;evil.example&sol;login", "&#119;ww.evil.example",
               "mailto&colon;victim&commat;evil.example"]


def live_links(markdown: str) -> list[str]:
    """What Markdown would turn into a link in ``markdown``: code spans are literal; outside
    them an unescaped ``&`` starts an entity (``&colon;`` is ``:``), after which a URL, www. or
    an e-mail address is autolinked."""
    import html
    import re

    outside = re.sub(r"(`+).*?\1", "", markdown, flags=re.S)
    resolved = html.unescape(re.sub(r"\\&", "", outside))
    return re.findall(r"https?://\S+|www\.\S+|\w+@\w+\.\w+", resolved)


def rendered(at: AppTest) -> list[str]:
    """The Markdown of every element a page shows (boxes, captions, labels, headings)."""
    texts = [e.value for kind in ("markdown", "caption", "warning", "info", "error", "success",
                                  "subheader", "header", "title") for e in getattr(at, kind)]
    texts += [e.label for e in at.expander] + [e.label for e in at.button]
    return [str(t) for t in texts]


def open_page(page: str, params: dict[str, object], args: str = "") -> AppTest:
    os.environ["KBENCH_APP_ARGS"] = args
    try:
        at = AppTest.from_file(str(ROOT / "views" / page), default_timeout=60)
        for key, value in params.items():
            at.query_params[key] = value
        at.run()
    finally:
        del os.environ["KBENCH_APP_ARGS"]
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_link_naming_entity_encoded_urls_renders_no_live_link() -> None:
    at = open_page("bias.py", {"bias_runs": ["bias", *ENTITY_URLS]})
    boxes = [w.value for w in at.warning if "has not loaded" in w.value]
    assert len(boxes) == 1, boxes  # named once, in one box
    assert "3 runs" in boxes[0]
    for text in rendered(at):
        assert not live_links(text), text


def test_a_long_link_is_capped_and_summarised_in_one_line() -> None:
    names = [f"someone-elses-upload-{i:04d}" for i in range(800)] + ["x" * 30_000]
    at = open_page("bias.py", {"bias_runs": ["bias", *names]})
    boxes = [w.value for w in at.warning if "has not loaded" in w.value]
    assert len(boxes) == 1
    # the first 50 names are read ("bias" is loaded), the other 751 and the long one ignored
    assert "49 runs" in boxes[0] and "and 44 more" in boxes[0]
    assert "752 more run names in the link were ignored" in boxes[0]
    assert len(at.warning) <= 3


def test_a_run_named_like_a_url_is_inert_text_on_another_users_runs_page(tmp_path) -> None:
    alice = session(tmp_path)
    for i, name in enumerate(ENTITY_URLS):
        alice.add_files([(f"{name}.csv", GOOD.replace(b"m1", f"m{i}".encode()))])
    assert len(alice.runs) == 3
    at = open_page("runs.py", {}, f"--no-samples --workspace {tmp_path}")
    shown = rendered(at)
    assert sum("evil" in t for t in shown) >= 3, shown  # Bob sees the runs...
    for text in shown:  # ...as text
        assert not live_links(text), text


# ------------------------------------------------------------- unusual Parquet types


def _parquet(**columns) -> bytes:
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    base = {"model": ["a", "a"], "bias": ["anchoring_effect"] * 2,
            "condition": ["control", "treatment"], "intensity": [None, "weak"],
            "domain": ["s", "s"], "score": [0.0, 1.0]}
    sink = io.BytesIO()
    pq.write_table(pa.table({**base, **columns}), sink)
    return sink.getvalue()


def test_unusual_parquet_types_load_or_are_named() -> None:
    import datetime
    import decimal

    import pyarrow as pa

    utc = datetime.UTC
    loads = {
        "decimal scores": _parquet(score=pa.array([decimal.Decimal("0.00"),
                                                   decimal.Decimal("1.00")],
                                                  pa.decimal128(5, 2))),
        "a timestamp column beside": _parquet(when=pa.array(
            [datetime.datetime(2024, 1, 1, tzinfo=utc)] * 2, pa.timestamp("us", tz="UTC"))),
        "large strings": _parquet(model=pa.array(["a", "a"], pa.large_string())),
        "dictionary-encoded integers": _parquet(model=pa.array([1, 1]).dictionary_encode()),
    }
    for what, data in loads.items():
        run = load_run((f"{what}.parquet", data))
        assert run.frame["score"].tolist() == [0.0, 1.0], what
    named = {
        "timestamp": (pa.array([datetime.datetime(2024, 1, 1, tzinfo=utc)] * 2,
                               pa.timestamp("us", tz="UTC")), "got a date or time"),
        "duration": (pa.array([0, 1], pa.duration("s")), "got a duration"),
    }
    for what, (scores, message) in named.items():
        with pytest.raises(RunFormatError, match=rf"row 1, field 'score': expected a number "
                                                 rf"in \[0, 1\], {message}"):
            load_run((f"{what}.parquet", _parquet(score=scores)))
    good = _parquet()
    for data, message in [(good[:-12] + b"\0" * 8 + b"PAR1", "cannot read Parquet"),
                          (good[:50], "cannot read Parquet")]:
        with pytest.raises(RunFormatError, match=message):
            load_run(("broken.parquet", data))


# ------------------------------------------------------------------ exports (issue 29)


@pytest.mark.parametrize("option, value", [("--scale", "0"), ("--scale", "-1"),
                                           ("--scale", "nan"), ("--width", "0"),
                                           ("--height", "-5"), ("--width", "100000")])
def test_figure_sizes_must_be_positive_and_sane(tmp_path, option, value) -> None:
    from kbench_core.cli import main

    with pytest.raises(SystemExit) as done:
        main(["figures", str(ROOT / "sample_data" / "bias.csv"), "--out", str(tmp_path),
              option, value])
    assert done.value.code == 2 and not list(tmp_path.iterdir())  # no empty files


def test_export_names_are_short_and_never_reserved_by_windows() -> None:
    from kbench_core.export import safe_name

    for reserved in ("CON", "nul", "COM1", "lpt9.csv", "AUX "):
        assert safe_name(reserved).startswith("_"), reserved
    long = safe_name("m" * 475)
    assert len(long.encode()) <= 130 and long != safe_name("m" * 474)
    assert "\u202e" not in safe_name("gpt\u202e4")


def test_the_export_zip_has_no_folder_windows_cannot_extract() -> None:
    import io
    import zipfile

    from kbench_core.bundle_export import ExportChoice, export_zip

    run = load_run(("CON.csv", GOOD))
    data = export_zip([run], ExportChoice(items=("fingerprint",), figure_formats=(),
                                          table_formats=("csv",)))
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    folders = {n.split("/")[0] for n in names if "/" in n}
    assert folders and all(f.upper().split(".")[0] not in {"CON", "NUL", "PRN", "AUX"}
                           for f in folders), names


def test_a_name_never_becomes_a_hover_placeholder_or_reverses_a_legend() -> None:
    import json as json_

    from kbench_core.families import items_for

    evil = "zz%{y}zz\u202e"
    run = load_run(("evil.csv", GOOD.replace(b"m1", evil.encode())))
    seen = 0
    for item in items_for(run.kind):
        for _, obj in item.objects(run.frame, meta=run.meta):
            if hasattr(obj, "to_plotly_json"):
                text = json_.dumps(obj.to_plotly_json(), default=str)
                seen += "zz" in text
                assert "zz%{y}zz" not in text and "\\u202e" not in text.replace(
                    "\\\\u202e", ""), item.name
    assert seen  # the figures do show the model


# ------------------------------------------------------------------ memory (issue 29)


def test_a_removed_upload_is_released_from_the_shared_cache(monkeypatch) -> None:
    """The cache shared by every session keeps no frame of its own: once the run is removed
    (and no other session holds it) its memory goes; a second session still gets the first
    one's parse while the first holds it."""
    import gc

    monkeypatch.setenv("KBENCH_APP_ARGS", "--no-samples")
    state._cached_load.clear()
    first = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    first.run()
    payload = GOOD.replace(b"m1", b"memory-probe")
    first.file_uploader(key="runs_uploader").set_value([("probe.csv", payload, "text/csv")]).run()
    assert not first.exception, [e.value for e in first.exception]
    cache = state._run_cache()
    assert cache.live() == 1
    held = first.session_state[state.REGISTRY].runs["probe"]
    second = state._cached_load("probe.csv", __import__("hashlib").sha256(payload).hexdigest(),
                                payload)
    assert second.frame is held.frame  # shared while held
    del second, held
    first.session_state[state.REGISTRY].remove("probe")
    gc.collect()
    assert cache.live() == 0, "the removed run's frame is still referenced"


def test_a_deep_archive_tree_is_named_in_one_short_line(tmp_path) -> None:
    import io
    import zipfile

    sink = io.BytesIO()
    with zipfile.ZipFile(sink, "w") as archive:
        archive.writestr("/".join(["d"] * 200) + "/x.csv", GOOD)
    with pytest.raises(RunFormatError) as err:
        load_run(("deep.zip", sink.getvalue()))
    assert len(str(err.value)) < 400 and "\u2026d/d/d" in str(err.value)


# -------------------------------------------- issue 42: strangers through the shared caches


def test_two_sessions_uploading_the_same_bytes_share_one_read_only_frame() -> None:
    import hashlib

    from kbench_core.readonly import is_frozen

    state._cached_load.clear()
    payload = GOOD.replace(b"m1", b"shared-probe")
    alice = state.cached_loader("same.csv", payload)
    bob = state.cached_loader("same.csv", payload)
    assert alice.frame is bob.frame and is_frozen(alice.frame)
    before = alice.frame.copy()
    with pytest.raises(ValueError, match="read-only"):
        bob.frame.loc[0, "score"] = 0.0
    with pytest.raises(ValueError, match="read-only"):
        bob.frame["score"].to_numpy()[0] = 9.0
    with pytest.raises(ValueError, match="read-only"):
        bob.frame["model"].cat.codes.to_numpy()[0] = 1  # a label's code
    assert alice.frame.equals(before)
    # a copy, a filter or a derived table stays the caller's own, writable
    mine = bob.frame.copy()
    mine.loc[0, "score"] = 0.0
    assert alice.frame.loc[0, "score"] == before.loc[0, "score"]
    assert hashlib.sha256(payload).hexdigest() == alice.content_hash


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_a_saved_run_every_session_shares_is_read_only(tmp_path, engine) -> None:
    from kbench_core.readonly import is_frozen

    session(tmp_path).add_files([("results.csv", GOOD)])
    runs = [Workspace(tmp_path, engine=engine).open_all()[0][0] for _ in range(2)]
    frames = [run.frame for run in runs]
    assert all(is_frozen(frame) for frame in frames)
    if engine == "memory":
        assert frames[0] is frames[1]  # validated once per server
    with pytest.raises(ValueError, match="read-only"):
        frames[0].loc[0, "score"] = 0.0


def test_same_bytes_under_two_names_and_two_files_under_one_name_never_share_a_result(
        ) -> None:
    from kbench_app import cache

    calls: list[str] = []

    def table(frame, *, label: str):
        calls.append(label)
        return frame.groupby("model", observed=True)["score"].mean().reset_index().assign(
            run=label)

    cache.clear()
    a = load_run(("a.csv", GOOD))
    b = load_run(("b.csv", GOOD))                    # the same bytes, another name
    c = load_run(("a.csv", OTHER))                   # other bytes, the same name
    results = {run.name + run.content_hash[:6]: cache.cached(table, run.frame, runs=[run],
                                                              label=run.name)
               for run in (a, b, c)}
    assert len(calls) == 3 and len(results) == 3
    assert set(results[c.name + c.content_hash[:6]]["model"]) == {"m2"}
    assert set(results[a.name + a.content_hash[:6]]["model"]) == {"m1"}
    # the same run asked again by another session finds its own result
    assert cache.cached(table, a.frame, runs=[a], label="a") is results[
        a.name + a.content_hash[:6]] and len(calls) == 3


def _page(monkeypatch, path: str) -> AppTest:
    monkeypatch.setenv("KBENCH_APP_ARGS", "")
    at = AppTest.from_file(str(ROOT / path), default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_one_stranger_s_aliases_never_reach_another_s_models_page(monkeypatch) -> None:
    alice = _page(monkeypatch, "views/models.py")
    alice.text_input(key="models_alias_raw").set_value("synthetic-alpha")
    alice.text_input(key="models_alias_canonical").set_value("alice-private-name")
    alice.button[[b.label for b in alice.button].index("Add alias")].click().run()
    assert not alice.exception, [e.value for e in alice.exception]
    assert "alice-private-name" in alice.dataframe[0].value.to_string() or any(
        "alice-private-name" in df.value.to_string() for df in alice.dataframe)
    bob = _page(monkeypatch, "views/models.py")
    assert "models_aliases" not in bob.session_state
    assert not any("alice-private-name" in df.value.to_string() for df in bob.dataframe)
    assert not any("alice-private-name" in str(m.value) for m in bob.markdown)


def test_one_stranger_s_judge_never_becomes_another_s(monkeypatch) -> None:
    from kbench_app.vuln import Keys

    alice = _page(monkeypatch, "views/vuln.py")
    judges = alice.selectbox(key=Keys.JUDGE).options
    default = alice.selectbox(key=Keys.JUDGE).value
    other = next(j for j in judges if j != default)
    alice.selectbox(key=Keys.JUDGE).set_value(other).run()
    assert not alice.exception and alice.selectbox(key=Keys.JUDGE).value == other
    bob = _page(monkeypatch, "views/vuln.py")
    assert bob.selectbox(key=Keys.JUDGE).value == default
    assert alice.selectbox(key=Keys.JUDGE).value == other


PAGES = tuple(f"views/{page.name}" for page in sorted((ROOT / "views").glob("*.py")))


def test_no_page_and_no_export_writes_to_a_run_s_frame(monkeypatch) -> None:
    """Every page opened on the shared (read-only) frames of the sample and real runs, the
    export ZIP and the report built: no exception, and every run's frame is afterwards what
    it was (a whole column replaced or added would pass the read-only flags)."""
    from kbench_core.readonly import freeze, is_frozen

    state._cached_load.clear()
    monkeypatch.setenv("KBENCH_APP_ARGS", "")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    runs = dict(at.session_state[state.REGISTRY].runs)
    # the files are shared through the run cache (frozen there); the real runs' folders are
    # each session's own: frozen here, so that every page runs on read-only frames
    assert sum(is_frozen(run.frame) for run in runs.values()) >= 5
    for run in runs.values():
        freeze(run.frame)
    before = {name: (run.frame, run.frame.copy(deep=True), list(run.frame.columns))
              for name, run in runs.items()}
    assert len(PAGES) >= 8  # every page of the app
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
    # Every figure of every run is built for the ZIP; drawing them is kaleido's work
    # (tests/test_export.py), not what could write to a frame, and took half a minute here.
    import kaleido

    drawn = []
    monkeypatch.setattr(kaleido, "start_sync_server", lambda *a, **k: None)
    monkeypatch.setattr(kaleido, "stop_sync_server", lambda *a, **k: None)
    monkeypatch.setattr(kaleido, "calc_fig_sync", lambda fig, opts=None: drawn.append(fig)
                        or b'<svg xmlns="http://www.w3.org/2000/svg"></svg>')
    at.switch_page("views/export.py").run()
    at.multiselect(key="export_figure_formats").set_value(["svg"]).run()
    at.button(key="export_build").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state[state.EXPORT_ZIP] and len(drawn) >= 20
    from kbench_core.report import report_html

    report_html(list(runs.values()))
    for name, (frame, copy, columns) in before.items():
        assert at.session_state[state.REGISTRY].runs[name].frame is frame, name
        assert list(frame.columns) == columns and frame.equals(copy), name
        assert is_frozen(frame), name


CHURN = """
import dataclasses, sys
from pathlib import Path
from kbench_core.io import load_run
from kbench_core.workspace import Workspace

folder, who, n = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
good = sys.stdin.buffer.read()
workspace = Workspace(folder)  # this server's own Workspace object
kept = []
for i in range(n):
    run = load_run((f"{who}{i}.csv", good.replace(b"m1", f"{who}{i}".encode())))
    path = workspace.save(run)
    if i % 2:
        workspace.remove(dataclasses.replace(run, meta={**run.meta,
                                                        "workspace_file": path.name}))
    else:
        kept.append(run.name)
print(" ".join(kept))
"""


def test_two_servers_saving_and_removing_at_once_leave_a_consistent_workspace(
        tmp_path) -> None:
    """Two processes, each with its own Workspace on one folder, save 30 runs each and
    remove every other one while a third starts over and over: no start ever reports a
    problem, and at the end exactly the kept runs are there, whole, with nothing else."""
    import time

    from kbench_core.workspace_files import recover

    servers = [subprocess.Popen([sys.executable, "-c", CHURN, str(tmp_path), who, "30"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
               for who in ("alice", "bob")]
    for server in servers:
        server.stdin.write(GOOD)
        server.stdin.close()
    starts = 0
    deadline = time.monotonic() + 240
    while any(server.poll() is None for server in servers):
        assert time.monotonic() < deadline
        runs, errors = Workspace(tmp_path).open_all()
        assert errors == [], [str(e) for e in errors]
        starts += 1
    kept = set()
    for server in servers:
        assert server.wait() == 0
        kept |= set(server.stdout.read().decode().split())
    assert starts > 0 and len(kept) == 30
    runs, errors = Workspace(tmp_path).load_all()
    assert errors == [] and {run.name for run in runs} == kept
    assert all(run.models == [run.name] for run in runs)  # each its own bytes
    assert len(files(tmp_path)) == 2 * len(kept)
    found = recover(tmp_path)
    assert not (found.finished or found.rolled_back or found.left)


def test_a_removal_killed_between_its_two_files_is_finished_on_the_next_start(
        tmp_path) -> None:
    from kbench_core.workspace_files import REMOVAL, SaveJournal

    path = Workspace(tmp_path).save(load_run(("results.csv", GOOD)))
    side = path.with_suffix(".json")
    # what a removal killed after its journal and the Parquet file leaves
    journal = SaveJournal.begin(tmp_path, path.stem, name="results",
                                parquet_sha256=__import__("hashlib").sha256(
                                    path.read_bytes()).hexdigest(),
                                sidecar=side.read_bytes(), suffix=REMOVAL)
    path.unlink()
    os.close(journal.handle)  # the process is gone: its lock with it
    runs, errors = Workspace(tmp_path).open_all()
    assert runs == [] and errors == [] and files(tmp_path) == []
