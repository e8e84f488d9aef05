"""Hostile uploads in the app (issue 19): a file that fails in any way is one error box naming
it, the rest of its batch loads, a rerun never loads or reports it again, and names never render
as Markdown links or images."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from streamlit.testing.v1 import AppTest

from kbench_app import state
from kbench_app.registry import RunRegistry
from kbench_app.ui import plain
from kbench_core.workspace import Workspace

ROOT = Path(__file__).resolve().parent.parent
GOOD = (b"model,bias,condition,intensity,domain,score\n"
        b"m1,anchoring_effect,treatment,weak,social,1\n"
        b"m1,anchoring_effect,control,,social,0\n")
RECORDS = [{"model": "m", "bias": "b", "condition": "control", "domain": "d", "score": 0.5}]


def start(monkeypatch: pytest.MonkeyPatch, args: str = "--no-samples") -> AppTest:
    monkeypatch.setenv("KBENCH_APP_ARGS", args)
    state._cached_load.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _hostile_files() -> list[tuple[str, bytes, str]]:
    surrogate = json.dumps(RECORDS).replace('"m"', '"m\\ud800"').encode()
    huge = json.dumps(RECORDS).replace("0.5", "9" * 5000).encode()
    sink = io.BytesIO()
    pq.write_table(pa.table({"model": pa.array([["a", "b"]], pa.list_(pa.string())),
                             "bias": ["b"], "condition": ["control"], "domain": ["d"],
                             "score": [0.1]}), sink)
    return [("surrogate.json", surrogate, "application/json"),
            ("huge.json", huge, "application/json"),
            ("good.csv", GOOD, "text/csv"),
            ("list.parquet", sink.getvalue(), "application/octet-stream")]


def test_a_hostile_batch_loads_its_good_file_and_names_each_bad_one(monkeypatch) -> None:
    at = start(monkeypatch)
    at.file_uploader(key="runs_uploader").set_value(_hostile_files()).run()
    assert not at.exception, [e.value for e in at.exception]
    assert list(at.session_state[state.REGISTRY].runs) == ["good"]
    errors = [e.value for e in at.error]
    assert errors == ["Could not load **surrogate\\.json**", "Could not load **huge\\.json**",
                      "Could not load **list\\.parquet**"]
    codes = [c.value for c in at.code]
    assert codes[0].startswith("surrogate.json: record 1, field 'model'")
    assert codes[1].startswith("huge.json: record 1, field 'score'")
    assert codes[2].startswith("list.parquet: row 1, field 'model'")
    at.run()  # a rerun: the same three boxes, nothing loaded or reported twice
    assert not at.exception and [e.value for e in at.error] == errors
    assert list(at.session_state[state.REGISTRY].runs) == ["good"]


def test_a_loader_crash_is_one_box_and_never_repeats(monkeypatch) -> None:
    at = start(monkeypatch)
    calls: list[str] = []
    real = state._cached_load

    def flaky(filename: str, sha256: str, data: bytes, progress=None):
        calls.append(filename)
        if filename == "boom.csv":
            raise TypeError("unhashable type: 'list'")
        return real(filename, sha256, data, progress)

    monkeypatch.setattr(state, "_cached_load", flaky)
    at.file_uploader(key="runs_uploader").set_value(
        [("boom.csv", GOOD + b"m2,b,control,,d,0\n", "text/csv"),
         ("good.csv", GOOD, "text/csv")]).run()
    assert not at.exception, [e.value for e in at.exception]
    assert list(at.session_state[state.REGISTRY].runs) == ["good"]
    assert [e.value for e in at.error] == ["Could not load **boom\\.csv**"]
    assert "TypeError" in at.code[0].value
    at.run()
    at.run()
    assert calls == ["boom.csv", "good.csv"]  # neither file is loaded again on rerun
    assert len(at.error) == 1


def test_duplicate_upload_message_renders_no_link_or_image(monkeypatch) -> None:
    at = start(monkeypatch)
    name = "[verify](https://evil.example) ![x](https://evil.example/p.png).csv"
    at.file_uploader(key="runs_uploader").set_value([("first.csv", GOOD, "text/csv")]).run()
    at.switch_page("views/runs.py").run()  # one new run opened its family page
    at.file_uploader(key="runs_uploader").set_value([(name, GOOD, "text/csv")]).run()
    assert not at.exception
    (info,) = [i.value for i in at.info if "already loaded" in i.value]
    # a code span: Markdown makes no link, image or autolink of what is inside
    assert info == f"` {name} is already loaded as 'first' `"
    at.file_uploader(key="runs_uploader").set_value(
        [("![x](y) *b*.csv", GOOD.replace(b"m1", b"m7"), "text/csv")]).run()
    at.switch_page("views/runs.py").run()
    assert at.expander[-1].label.startswith("\\!\\[x\\]\\(y\\) \\*b\\* · bias")


def test_the_app_starts_with_a_bad_workspace_sidecar(monkeypatch, tmp_path) -> None:
    ws = Workspace(tmp_path / "ws")
    other = GOOD + b"m3,b,control,,d,0\n"
    RunRegistry(workspace=ws).add_files([("kept.csv", GOOD), ("other.csv", other)])
    side = next((tmp_path / "ws").glob("kept*.json"))
    side.write_text(json.dumps({**json.loads(side.read_text()), "meta": [], "warnings": 5}))
    at = start(monkeypatch, f"--no-samples --workspace {tmp_path / 'ws'}")
    assert list(at.session_state[state.REGISTRY].runs) == ["other"]
    assert [e.value for e in at.error] == [f"Could not load **{plain(side.name)}**"]
    assert "field 'meta'" in at.code[0].value


@pytest.mark.parametrize("size", [10**400, "abc", -1], ids=["400 digits", "text", "negative"])
def test_the_app_starts_with_a_tampered_size_in_a_sidecar(monkeypatch, tmp_path, size) -> None:
    ws = Workspace(tmp_path / "ws")
    other = GOOD + b"m3,b,control,,d,0\n"
    RunRegistry(workspace=ws).add_files([("kept.csv", GOOD), ("other.csv", other)])
    side = next((tmp_path / "ws").glob("kept*.json"))
    data = json.loads(side.read_text())
    data["meta"]["bytes"] = size
    side.write_text(json.dumps(data))
    at = start(monkeypatch, f"--no-samples --workspace {tmp_path / 'ws'}")  # no exception
    assert list(at.session_state[state.REGISTRY].runs) == ["other"]
    assert [e.value for e in at.error] == [f"Could not load **{plain(side.name)}**"]
    assert "field 'meta.bytes'" in at.code[0].value
    assert at.dataframe  # the Runs page lists the run that loaded


def test_table_download_data_is_neutralised(monkeypatch) -> None:
    import contextlib
    import csv
    import types

    import pandas as pd

    from kbench_app import downloads

    made: dict[str, object] = {}
    fake = types.SimpleNamespace(
        container=lambda **kwargs: contextlib.nullcontext(),
        download_button=lambda label, data, **kwargs: made.__setitem__(label, data))
    monkeypatch.setattr(downloads, "st", fake)
    names = ['=HYPERLINK("https://evil.example","x")', "+1", "-x", "@SUM(A1)", "\tt",
             "\uff1dcmd", "\x00=1"]
    frame = pd.DataFrame({"model": names, "value": [-0.5] * len(names)})
    downloads.table_downloads(frame, "table", key="t")
    text = made["CSV"]().decode()  # the bytes the CSV button hands the browser
    assert "\x00" not in text
    rows = [r for r in csv.reader(io.StringIO(text)) if r and not r[0].startswith("#")]
    assert [r[0] for r in rows[1:]] == ["'" + n.replace("\x00", "\\x00") for n in names]
    assert [r[1] for r in rows[1:]] == ["-0.5000"] * len(names)  # numbers stay numbers


@pytest.mark.parametrize("name", ["https://evil.example/x", "see www.evil.example", "me@evil.io",
                                  "ftp://evil.example", "HTTP://EVIL", "a`b``c http://x"])
def test_plain_shows_autolinking_names_as_code_spans(name) -> None:
    from kbench_app.ui import code

    shown = plain(name)
    assert shown == code(name)
    ticks = shown.split(" ", 1)[0]
    assert set(ticks) == {"`"} and shown.endswith(" " + ticks)
    assert ticks not in name  # the fence is longer than any backtick run inside
    assert plain("x_y [a](b)") == "x\\_y \\[a\\]\\(b\\)"  # others: escaped as before


def test_the_runs_page_uses_the_shared_plain() -> None:
    text = (ROOT / "views" / "runs.py").read_text()
    assert "def shown" not in text and "_AUTOLINK" not in text


def test_report_runs_list_their_raw_name_in_st_text(monkeypatch, tmp_path) -> None:
    import shutil

    folder = tmp_path / "my_reports.v1"
    shutil.copytree(ROOT / "sample_data" / "real" / "kahnebench", folder)
    at = start(monkeypatch, f"--no-samples {folder}")
    at.switch_page("views/bias.py").run()
    assert not at.exception, [e.value for e in at.exception]
    texts = [t.value for t in at.text]
    assert any(t.startswith("my_reports.v1: ") for t in texts), texts
    assert not any("\\" in t for t in texts), texts


def test_an_upload_reports_its_progress_stage_by_stage(monkeypatch) -> None:
    # Two files, the second twice the size: the batch's bar goes through each file's stages
    # (read, parse, validate, done) in order and ends at 1.0.
    from kbench_app.registry import RunRegistry

    class Upload:
        def __init__(self, name: str, data: bytes) -> None:
            self.name, self.data, self.size = name, data, len(data)

        def getvalue(self) -> bytes:
            return self.data

    state._cached_load.clear()
    seen: list[tuple[float, str]] = []
    small = Upload("a.csv", GOOD)
    big = Upload("b.csv", GOOD + GOOD.split(b"\n", 1)[1].replace(b"m,", b"n,"))
    report = state.add_uploads(RunRegistry(), [small, big],
                               progress=lambda f, text: seen.append((f, text)))
    assert report.added == ["a", "b"] and not report.errors
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == pytest.approx(1.0)
    share = small.size / (small.size + big.size)
    assert [t for f, t in seen if t.startswith("a.csv")][-1] == "a.csv: done"
    assert max(f for f, t in seen if t.startswith("a.csv")) == pytest.approx(share)


def test_an_upload_already_loaded_is_offered_and_opened_as_a_new_one(monkeypatch) -> None:
    """A new user uploads KahneBench's 11 fingerprint reports, which the app bundles: "already
    loaded as 'kahnebench'" and nothing else; the Cognitive biases page then opened on the
    synthetic trials, and its reports view on the synthetic reports (issue-37 walkthrough;
    item 5: a page opened after an upload shows that upload). The run already loaded is
    offered to open, and the pages open on it as on a new upload."""
    reports = sorted((Path(__file__).resolve().parent.parent / "sample_data" / "real"
                      / "kahnebench").glob("fingerprint_*.json"))
    at = start(monkeypatch, "")
    at.file_uploader(key="runs_uploader").set_value(
        [(p.name, p.read_bytes(), "application/json") for p in reports]).run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("already loaded as 'kahnebench'" in i.value for i in at.info)
    assert [b.key for b in at.button if b.key == "open::kahnebench"]
    at.switch_page("views/bias.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.radio(key="bias_source").value == "reports"
    assert at.multiselect(key="bias_report_runs").value == ["kahnebench"]
