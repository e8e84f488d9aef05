"""Hostile and broken uploads (issue 19): every case of the issue, reproduced as it was reported.

Each file either loads without losing data or gives one :class:`RunFormatError` naming the
file, the record and the field; the denial-of-service cases are bounded in time and memory
(generous bounds, far above what the fixed loader needs and far below what it needed before;
speed itself is measured in ``benchmarks/``).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import subprocess
import sys
import tarfile
import threading
import time
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kbench_core.io import RunFormatError, load_run

ROOT = Path(__file__).resolve().parent.parent
HEAD = "model,bias,condition,intensity,domain,score\n"
ROW = "m,anchoring_effect,treatment,weak,social,0.5\n"
KAHNE = {"bias_id": "anchoring_effect", "model_id": "m", "condition": "control",
         "domain": "social", "bias_score": 0.2}


def _csv(rows: int = 3) -> bytes:
    return (HEAD + ROW * rows).encode()


def _records(**override) -> list[dict]:
    base = {"model": "m", "bias": "anchoring_effect", "condition": "control",
            "domain": "social", "score": 0.5}
    return [{**base, **override}, base]


def _parquet(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def _error(name: str, data: bytes, **kwargs) -> str:
    with pytest.raises(RunFormatError) as err:
        load_run((name, data), **kwargs)
    message = str(err.value)
    assert message.startswith(name + ":"), message
    return message


def _peak_rss_mb(code: str, timeout: float = 120) -> tuple[float, float, str]:
    """Run ``code`` in a fresh interpreter; (resident MB after imports, peak resident MB at
    the end, its output). The loader's pyarrow memory is not seen by tracemalloc, so DoS
    bounds are on the process: ``VmHWM``, since ``ru_maxrss`` starts at this (parent)
    process's high-water mark (Linux keeps it across exec) and would hide the child's."""
    script = ("import kbench_core.io, pyarrow, pandas\n"
              # The family registry is part of the loaded program, as in the app
              "import kbench_core.families as f; f.all_families()\n"
              "from pathlib import Path as _P\n"
              "def _rss(k):\n"
              "    for ln in _P('/proc/self/status').read_text().splitlines():\n"
              "        if ln.startswith(k):\n"
              "            return int(ln.split()[1]) / 1024\n"
              "base = _rss('VmRSS:')\n"
              + code +
              "\nprint('RSS', base, _rss('VmHWM:'))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    line = [ln for ln in done.stdout.splitlines() if ln.startswith("RSS")][-1]
    _, base, peak = line.split()
    return float(base), float(peak), done.stdout


# ------------------------------------------------------------------ crashes: one boundary


def test_lone_surrogate_in_a_json_string_names_record_and_field() -> None:
    text = json.dumps(_records()).replace('"model": "m"', '"model": "m\\ud800"', 1)
    message = _error("surrogate.json", text.encode())
    assert "record 1" in message and "'model'" in message and "surrogate" in message


def test_lone_surrogate_in_a_key_or_a_json_lines_file() -> None:
    text = json.dumps(_records()).replace('"domain"', '"dom\\udc00ain"', 1)
    assert "record 1" in _error("key.json", text.encode())
    lines = "\n".join(json.dumps(r) for r in _records(model="x")).replace('"x"', '"\\udfff"')
    assert "line 1" in _error("surrogate.jsonl", lines.encode())


def test_paired_surrogates_are_a_character_not_an_error() -> None:
    text = json.dumps(_records(model="m\U0001f600"))  # json writes the emoji as a pair
    assert "\\ud83d\\ude00" in text
    assert load_run(("emoji.json", text.encode())).models[-1] == "m\U0001f600"


@pytest.mark.parametrize("digits", [400, 5000])
def test_huge_integer_score_names_record_and_field(digits: int) -> None:
    text = json.dumps(_records()).replace('"score": 0.5', '"score": ' + "9" * digits, 1)
    message = _error("big.json", text.encode())
    assert "record 1" in message and "'score'" in message
    assert len(message) < 500


@pytest.mark.parametrize("field,digits", [("trial", 400), ("response_time_ms", 400),
                                          ("trial", 5000)])
def test_huge_integer_in_kahnebench_fields(field: str, digits: int) -> None:
    record = {**KAHNE, "metadata": {"trial": 1}, "response_time_ms": 12}
    text = json.dumps({"results": [KAHNE, record]})
    text = text.replace(f'"{field}": {record["metadata"]["trial"] if field == "trial" else 12}',
                        f'"{field}": ' + "7" * digits)
    message = _error("kahne.json", text.encode())
    assert "result 2" in message
    assert ("'trial'" if field == "trial" else "'response_ms'") in message


def test_huge_integer_in_csv_is_a_named_cell() -> None:
    message = _error("big.csv", (HEAD + "m,b,control,,d," + "9" * 400 + "\n").encode())
    assert "line 2" in message and "'score'" in message
    # One problem, said as it is: too many digits, not "NaN and infinity"
    assert "400 digits" in message and "more than 15 digits" in message
    assert "out of range" in message and "NaN" not in message and "problems" not in message
    message = _error("big.csv", (HEAD + "m,b,control,,d,0.5\nm,b,control,,d,1e999\n"
                                 "m,b,control,,d,inf\n").encode())
    assert "line 3, field 'score': '1e999' is out of range" in message
    assert "line 4, field 'score': NaN and infinity" in message


def test_huge_integer_in_json_says_out_of_range() -> None:
    for digits in (400, 5000):
        data = json.dumps(_records(score=1)).replace('"score": 1', '"score": ' + "9" * digits)
        message = _error("big.json", data.encode())
        assert "record 1" in message and f"{digits:,} digits" in message


def test_parquet_list_model_column_names_the_field() -> None:
    table = pa.table({"model": pa.array([["a", "b"], ["c"]], pa.list_(pa.string())),
                      "bias": ["b", "b"], "condition": ["control", "control"],
                      "domain": ["d", "d"], "score": [0.1, 0.2]})
    message = _error("list.parquet", _parquet(table))
    assert "row 1" in message and "'model'" in message


def test_parquet_binary_columns_are_text_or_a_named_error() -> None:
    def table(values: list[bytes]) -> pa.Table:
        return pa.table({"model": pa.array(values, pa.binary()), "bias": ["b", "b"],
                         "condition": ["control", "control"], "domain": ["d", "d"],
                         "score": [0.1, 0.2], "note": pa.array([b"x", b"y"], pa.binary())})

    run = load_run(("utf8.parquet", _parquet(table([b"m1", "m\u00e9".encode()]))))
    assert run.models == ["m1", "m\u00e9"]
    assert list(run.frame["note"]) == ["x", "y"]  # not "b'x'"
    message = _error("binary.parquet", _parquet(table([b"ok", b"\xff\xfe"])))
    assert "row 2" in message and "'model'" in message and "UTF-8" in message


def test_every_failure_of_random_bytes_is_a_run_format_error() -> None:
    rng = np.random.default_rng(19)
    for suffix in (".csv", ".json", ".jsonl", ".parquet", ".gz", ".zip"):
        for size in (1, 7, 100, 5000):
            data = rng.integers(0, 256, size, dtype=np.uint8).tobytes()
            with contextlib.suppress(RunFormatError):
                load_run(("random" + suffix, data))


# ------------------------------------------------------------------ silent data loss


def test_unclosed_quote_is_an_error_naming_its_line() -> None:
    body = "".join(f"m{i},anchoring_effect,treatment,weak,social,0.5\n" for i in range(999))
    lines = (HEAD + body).splitlines(keepends=True)
    lines[2] = 'm,"anchoring_effect,treatment,weak,social,0.5\n'  # line 3 opens, never closes
    message = _error("unclosed.csv", "".join(lines).encode())
    assert "line 3" in message and "quote" in message


def test_stray_quote_on_the_last_line_names_the_line_where_the_cell_opened() -> None:
    body = "".join(f"m{i},anchoring_effect,treatment,weak,social,0.5\n" for i in range(999))
    lines = (HEAD + body).splitlines(keepends=True)
    lines[2] = 'm,"anchoring_effect,treatment,weak,social,0.5\n'  # opens on line 3
    lines[-1] = 'm,anchoring_effect,treatment,weak,social,0.5"\n'  # a stray quote closes it
    message = _error("stray.csv", "".join(lines).encode())
    assert "stray.csv: line 3:" in message and "line 1000" in message and "quote" in message


def test_quotes_that_close_are_fine() -> None:
    data = (HEAD + 'm,"anchoring, effect",treatment,weak,social,0.5\n'
            'm,"say ""hi""",control,,social,0.5\n').encode()
    assert len(load_run(("quoted.csv", data))) == 2


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\u0085", "\x0c", "\x1c"])
def test_json_lines_split_on_newline_only(separator: str) -> None:
    response = f"first{separator}second"
    rows = [{**r, "response": response} for r in _records()]
    data = "\n".join(json.dumps(r, ensure_ascii=False) for r in rows).encode()
    run = load_run(("llm.jsonl", data))
    assert len(run) == 2 and list(run.frame["response"]) == [response, response]


def test_brackets_inside_strings_are_not_nesting() -> None:
    rows = [{**r, "response": "[" * 500 + "{" * 500} for r in _records()]
    run = load_run(("brackets.json", json.dumps(rows).encode()))
    assert run.frame["response"].iat[0] == "[" * 500 + "{" * 500


def test_deep_nesting_in_a_record_is_still_refused() -> None:
    deep: object = 1
    for _ in range(100):
        deep = [deep]
    rows = _records()
    rows[1]["extra"] = deep
    message = _error("deep.json", json.dumps(rows).encode())
    assert "record 2" in message and "nested" in message


def test_duplicate_json_keys_are_reported() -> None:
    text = json.dumps(_records()).replace('"score": 0.5', '"score": 0.1, "score": 0.9', 1)
    message = _error("dupkey.json", text.encode())
    assert "record 1" in message and "'score'" in message and "twice" in message
    line = '{"model": "a", "model": "b", "bias": "x", "condition": "control", ' \
           '"domain": "d", "score": 0}\n'
    assert "line 1" in _error("dupkey.jsonl", line.encode())


def test_bare_nan_label_is_reported() -> None:
    text = json.dumps(_records()).replace('"model": "m"', '"model": NaN', 1)
    message = _error("nan.json", text.encode())
    assert "record 1" in message and "'model'" in message and "NaN" in message
    # The text "NaN" is a label like any other
    assert "NaN" in load_run(("nan_text.json", json.dumps(_records(model="NaN")).encode())).models


def test_zero_padding_after_gzip_is_accepted() -> None:
    data = gzip.compress(_csv()) + b"\x00" * 1024
    assert len(load_run(("padded.csv.gz", data))) == 3
    with pytest.raises(RunFormatError, match="corrupt"):
        load_run(("garbage.csv.gz", gzip.compress(_csv()) + b"\x00\x00garbage"))


def test_cr_only_line_endings_get_a_clear_message() -> None:
    message = _error("mac.csv", _csv().replace(b"\n", b"\r"))
    assert "carriage return" in message and "LF" in message


# ------------------------------------------------------------------ denial of service


def test_eight_thousand_columns_are_refused_fast() -> None:
    header = HEAD.strip() + "," + ",".join(f"x{i}" for i in range(8000))
    row = ROW.strip() + "," + ",".join("1" for _ in range(8000))
    data = (header + "\n" + row + "\n").encode()
    started = time.process_time()
    message = _error("wide.csv", data)
    assert time.process_time() - started < 5  # was 90-126 CPU-seconds
    assert "8,006 columns" in message and "2,000" in message


def test_two_thousand_columns_still_load() -> None:
    header = HEAD.strip() + "," + ",".join(f"x{i}" for i in range(1990))
    row = ROW.strip() + "," + ",".join("1" for _ in range(1990))
    started = time.process_time()
    run = load_run(("wide_ok.csv", (header + "\n" + row + "\n").encode()))
    assert run.frame.shape[1] == 1996
    assert time.process_time() - started < 10


def test_wide_json_and_parquet_are_refused() -> None:
    rows = [{**r, **{f"x{i}": i for i in range(2500)}} for r in _records()]
    assert "columns" in _error("wide.json", json.dumps(rows).encode())
    sparse = [{**_records()[0], f"x{i}": 1} for i in range(2500)]  # one new key per record
    assert "columns" in _error("sparse.json", json.dumps(sparse).encode())
    wide = pa.table({**{c: ["x"] for c in ("model", "bias", "condition", "domain")},
                     "score": [0.1], **{f"x{i}": [1] for i in range(2500)}})
    assert "columns" in _error("wide.parquet", _parquet(wide))


def test_parquet_row_count_is_checked_from_metadata(tmp_path: Path) -> None:
    n = 40_000_000
    table = pa.table({"model": pa.array(np.zeros(n, np.int8)).dictionary_encode()})
    path = tmp_path / "rows.parquet"
    pq.write_table(table, path, compression="zstd")
    assert path.stat().st_size < 2 * 1024**2
    base, peak, out = _peak_rss_mb(
        "from kbench_core.io import load_run, RunFormatError\n"
        f"try:\n    load_run({str(path)!r})\nexcept RunFormatError as e:\n    print(e)\n")
    assert "40,000,000 rows" in out and "limit" in out
    assert peak - base < 300  # was > 2.9 GB


def test_parquet_uncompressed_size_is_checked_from_metadata() -> None:
    table = pa.table({"model": [f"{i:05d}" + "m" * 1000 for i in range(20_000)],
                      "bias": ["b"] * 20_000})
    data = _parquet(table)
    message = _error("big.parquet", data, max_decompressed=8 * 1024**2)
    assert "decompressed-size limit" in message


def test_parquet_dictionary_bomb_is_refused_while_reading(tmp_path: Path) -> None:
    # 2 M rows of one 1,000-character value: 0.24 MB encoded, 2 GB decoded; the metadata's
    # sizes pass (was: 27 s, then MemoryError past 1.9 GB)
    n = 2_000_000
    index = pa.array(np.zeros(n, np.int32))

    def repeated(value: str) -> pa.DictionaryArray:  # never 2 GB in this process either
        return pa.DictionaryArray.from_arrays(index, pa.array([value]))

    table = pa.table({"model": repeated("m"), "bias": repeated("x" * 1000),
                      "condition": repeated("control"), "domain": repeated("d"),
                      "score": np.full(n, 0.5)})
    path = tmp_path / "bomb.parquet"
    # Without the Arrow schema the columns read back as plain text, as most writers' files do
    pq.write_table(table, path, compression="zstd", store_schema=False)
    assert path.stat().st_size < 1024**2
    assert pq.ParquetFile(path).schema_arrow.field("bias").type == pa.string()
    started = time.perf_counter()
    base, peak, out = _peak_rss_mb(
        "from kbench_core.io import load_run, RunFormatError\n"
        f"try:\n    load_run({str(path)!r}, max_decompressed=128 * 1024**2)\n"
        "except RunFormatError as e:\n    print(e)\n")
    assert "bomb.parquet: field 'bias'" in out and "decompressed-size limit" in out
    assert peak - base < 400  # the limit plus one batch, not 2 GB
    assert time.perf_counter() - started < 60


def test_parquet_decoded_size_counts_dictionary_columns_of_the_file() -> None:
    # A column stored as an Arrow dictionary stays one in the table; validation decodes text
    # columns, so its rows count at their decoded size too.
    n = 100_000
    table = pa.table({"model": pa.array(["m"] * n).dictionary_encode(),
                      "bias": pa.array(["b"] * n).dictionary_encode(),
                      "condition": pa.array(["control"] * n).dictionary_encode(),
                      "domain": pa.array(["d"] * n).dictionary_encode(),
                      "score": np.full(n, 0.5),
                      "prompt": pa.array(["p" * 200] * n).dictionary_encode()})
    message = _error("dict.parquet", _parquet(table), max_decompressed=16 * 1024**2)
    assert "field 'prompt'" in message and "decompressed-size limit" in message
    assert len(load_run(("dict.parquet", _parquet(table)))) == n


def test_tar_of_many_directories_stops_at_the_entry_limit() -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for i in range(25_000):
            info = tarfile.TarInfo(f"d{i}")
            info.type = tarfile.DIRTYPE
            archive.addfile(info)
    started = time.process_time()
    tracemalloc.start()
    try:
        message = _error("dirs.tar.gz", buffer.getvalue())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "20,000" in message and "entries" in message
    assert time.process_time() - started < 10
    assert peak < 200 * 1024**2


def test_zip_entry_count_is_checked_before_the_directory_is_read() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for i in range(20_500):
            archive.writestr(f"d{i}/", b"")
    message = _error("dirs.zip", buffer.getvalue())
    assert "20,000" in message and "entries" in message


def test_two_members_with_one_name_are_reported() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("a/judge_outputs/j_1_direct.json", b"{}")
        with pytest.warns(UserWarning):
            archive.writestr("a/judge_outputs/j_1_direct.json", b"[]")
    message = _error("twice.zip", buffer.getvalue())
    assert "j_1_direct.json" in message and "twice" in message


def test_dev_zero_and_fifos_are_refused(tmp_path: Path) -> None:
    with pytest.raises(RunFormatError, match="not a regular file"):
        load_run("/dev/zero")
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    result: list[BaseException | None] = []

    def attempt() -> None:
        try:
            load_run(fifo)
        except BaseException as exc:
            result.append(exc)

    thread = threading.Thread(target=attempt, daemon=True)
    thread.start()
    thread.join(timeout=10)
    if thread.is_alive():  # unblock the reader so the test process can end
        with open(fifo, "wb"):
            pass
        pytest.fail("loading a FIFO hangs")
    assert isinstance(result[0], RunFormatError) and "not a regular file" in str(result[0])


def test_a_huge_cell_gets_the_cell_limit_message() -> None:
    data = (HEAD + "m,anchoring_effect,control,,social,0.5," + "x" * (100 * 1024**2) + "\n")
    data = data.replace("score\n", "score,note\n", 1).encode()
    message = _error("cell.csv", data)
    assert "1 MB" in message or "1,000,000" in message
    assert "straddl" not in message


def _text_heavy_csv(rows: int) -> bytes:
    """Bias rows whose response is a unique sentence (the audit's 300 MB case, scaled down):
    the text, not the labels, is most of the file and of the frame."""
    lines = [HEAD.replace("score\n", "score,response\n")]
    lines += [f"model-{i % 8},anchoring_effect,control,,social,{i % 10 / 10},"
              f"the answer to trial {i} is {i * 7919 % 1000003} because of the reasons given\n"
              for i in range(rows)]
    return "".join(lines).encode()


@pytest.mark.parametrize("kind", ["bias", "text"])
def test_gzip_csv_memory_is_bounded(tmp_path: Path, kind: str) -> None:
    from kbench_core.samples import big_bias_trials

    path = tmp_path / "bias.csv.gz"
    if kind == "bias":
        text = big_bias_trials(500_000).to_csv(index=False).encode()
    else:
        text = _text_heavy_csv(600_000)
    path.write_bytes(gzip.compress(text, compresslevel=1))
    del text
    base, peak, out = _peak_rss_mb(
        "from kbench_core.io import load_run\n"
        f"run = load_run({str(path)!r})\n"
        "print('FRAME', run.frame.memory_usage(deep=True).sum() / 1024**2)\n", timeout=300)
    frame_mb = float(next(ln for ln in out.splitlines() if ln.startswith("FRAME")).split()[1])
    # SPEC: memory <= 3x the frame (was 5.2x bias, 7.1x text-heavy; now the CSV is parsed
    # from the gzip stream: the benchmark prints the exact ratio)
    assert peak - base < 3 * frame_mb + 100, (peak - base, frame_mb)


# ------------------------------------------------------------------ look-alike names


def test_lookalike_model_names_are_flagged() -> None:
    names = ["gpt-4", "gpt\u200b-4", "g\u0440t-4", "\uff47\uff50\uff54-4", "gpt\u202e-4"]
    rows = [{**_records()[0], "model": n} for n in names]
    run = load_run(("lookalike.json", json.dumps(rows).encode()))
    text = "\n".join(run.warnings)
    assert "invisible" in text and "bidirectional" in text and "another script" in text
    assert "fullwidth" in text and "look alike" in text
    assert not any(ch in text for ch in "\u200b\u0440\u202e")  # named by escapes only


def test_plain_names_get_no_lookalike_warning() -> None:
    run = load_run(("plain.csv", _csv()))
    assert run.warnings == ()


def test_control_characters_never_appear_raw_in_messages() -> None:
    data = (HEAD.replace("score", "score,no\x1b[2Jte") + "m\x1b[31m,b,control,,d,x,1\n").encode()
    with pytest.raises(RunFormatError) as err:
        load_run(("esc\x1b]0;pwn\x07.csv", data))
    message = str(err.value)
    assert message.startswith("esc\\x1b]0;pwn\\x07.csv: line 2"), message
    assert "\x1b" not in message and "\x07" not in message


# ------------------------------------------------------------------ fuzzing the boundary

hostile_text = st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from(
    ["\u2028", "\u0085", "\u202e", "\x00", "\x1b", "\r", '"', "[", "{", "\\", "\ud800"]),
    max_size=20)


@settings(max_examples=120, deadline=None)
@given(model=hostile_text, response=hostile_text, fmt=st.sampled_from(["json", "jsonl", "csv"]))
def test_hostile_strings_load_or_give_a_run_format_error(model, response, fmt) -> None:
    rows = [{**r, "model": model, "response": response} for r in _records()]
    if fmt == "json":
        data = json.dumps(rows).encode()
    elif fmt == "jsonl":
        data = "\n".join(json.dumps(r) for r in rows).encode()
    else:
        frame = pd.DataFrame(rows)
        data = frame.to_csv(index=False).encode("utf-8", "surrogatepass")
    try:
        run = load_run((f"fuzz.{fmt}", data))
    except RunFormatError as err:
        assert str(err).startswith(f"fuzz.{fmt}:")
        assert "\x1b" not in str(err) and "\x00" not in str(err)
    else:
        if fmt != "csv":  # JSON keeps every string exactly (NUL removed from labels)
            assert list(run.frame["response"]) == [response, response]
            assert run.models == [model.replace("\x00", "").strip()]


def _reports_archive(extra: dict[str, bytes], kind: str = "zip") -> bytes:
    """Two real fingerprint reports plus ``extra`` members, as a zip or a tar."""
    members = {p.name: p.read_bytes() for p in
               sorted((ROOT / "sample_data" / "real" / "kahnebench").glob("fingerprint_*"))[:2]}
    members.update(extra)
    buffer = io.BytesIO()
    if kind == "zip":
        with zipfile.ZipFile(buffer, "w") as archive:
            for name, data in members.items():
                archive.writestr(name, data)
    else:
        with tarfile.open(fileobj=buffer, mode="w") as archive:
            for name, data in members.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@pytest.mark.parametrize("kind", ["zip", "tar"])
@pytest.mark.parametrize("member", ["../../fingerprint_a.json", "/abs/fingerprint_b.json",
                                    "x/../../fingerprint_c.json", "..\\fingerprint_d.json",
                                    "C:/fingerprint_e.json"])
def test_a_member_leaving_the_archive_is_named_never_dropped(kind, member) -> None:
    report = (ROOT / "sample_data" / "real" / "kahnebench" / "fingerprint_grok.json")
    data = _reports_archive({member: report.read_bytes().replace(b"grok", b"evil")}, kind)
    message = _error(f"reports.{kind}", data)
    assert repr(member.encode("unicode_escape").decode()) in message, message
    assert "leaves the archive" in message


@pytest.mark.parametrize("kind", ["zip", "tar"])
def test_skipped_hidden_members_are_listed_in_the_warnings(kind) -> None:
    data = _reports_archive({".hidden_fingerprint.json": b"{}", "__MACOSX/._x.json": b"x",
                             "sub/.DS_Store": b"x"}, kind)
    run = load_run((f"reports.{kind}", data))
    (note,) = [w for w in run.warnings if "hidden" in w]
    for name in (".hidden_fingerprint.json", "__MACOSX/._x.json", "sub/.DS_Store"):
        assert repr(name) in note
    assert note.startswith("skipped 3 ")


def test_a_folder_lists_its_skipped_hidden_files(tmp_path: Path) -> None:
    for p in sorted((ROOT / "sample_data" / "real" / "kahnebench").glob("fingerprint_*"))[:2]:
        (tmp_path / p.name).write_bytes(p.read_bytes())
    (tmp_path / ".fingerprint_old.json").write_bytes(b"{}")
    run = load_run(tmp_path)
    assert any("'.fingerprint_old.json'" in w for w in run.warnings), run.warnings


# ------------------------------------------------------------------ label length (native importers)

def _long_label_files() -> list[tuple[str, bytes, str]]:
    """(file name, bytes, field) of native files holding a 1,000,001-character label."""
    long = "L" * 1_000_001
    real = ROOT / "sample_data" / "real" / "humanstudy-bench"
    results = json.loads((real / "simple_results.json").read_text())
    first = next(iter(results["configs"]))
    results["configs"] = {long: results["configs"][first]}
    studies = (real / "simple_studies.csv").read_text().splitlines()
    studies = [studies[0], long + studies[1][studies[1].index(","):]]
    judged = json.loads((ROOT / "tests" / "data" / "formats" /
                         "blockbench_multi_judge_records.json").read_text())
    judged[0]["judge_model"] = long
    report = json.loads(next((ROOT / "sample_data" / "real" / "kahnebench")
                             .glob("fingerprint_*.json")).read_text())
    report["model_id"] = "m" * 1001  # capped at 100 there: a name becomes a column name
    return [("simple_results.json", json.dumps(results).encode(), "model"),
            ("simple_studies.csv", "\n".join(studies).encode(), "model"),
            ("records.json", json.dumps(judged).encode(), "judge"),
            ("trials.json", json.dumps([{**KAHNE, "model_id": long}]).encode(), "model"),
            ("fingerprint_x.json", json.dumps(report).encode(), "model_id")]


@pytest.mark.parametrize(("name", "data", "field"), _long_label_files(),
                         ids=lambda v: v if isinstance(v, str) and len(v) < 40 else "")
def test_a_native_label_over_1000_characters_is_a_named_error(name, data, field) -> None:
    started = time.process_time()
    message = _error(name, data)
    assert f"field '{field}'" in message, message[:300]
    assert "characters" in message and len(message) < 1000
    assert time.process_time() - started < 10


def test_a_label_of_1000_characters_still_loads() -> None:
    run = load_run(("trials.json", json.dumps([{**KAHNE, "model_id": "m" * 1000}]).encode()))
    assert run.models == ["m" * 1000]
