"""The malformed-file corpus (issue 10): every file gives a RunFormatError that names the file
and, where a row is at fault, the row and the field, within bounded time and memory; nothing
else escapes the loader.

Each case is made in code (so the corpus is reviewable as text): name, bytes, and the pieces
the message must contain.
"""

from __future__ import annotations

import gzip
import io
import json
import tarfile
import tracemalloc
import zipfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kbench_core.io import RunFormatError, load_run

BIAS_HEAD = "model,bias,condition,intensity,domain,score\n"
BIAS_ROW = "m,anchoring_effect,treatment,weak,social,{score}\n"
REP_HEAD = "model,study,finding,test,human_d,agent_d,human_pi,agent_pi\n"
JUDGED_HEAD = ("sample,model,judge,prompt_type,is_vulnerable,said_vulnerable,target_found,"
               "n_hallucinated,claimed_lines\n")
JUDGED_ROW = "c1,d,j,direct,true,{said},true,{halluc},{lines}\n"
KAHNE = {"bias_id": "anchoring_effect", "model_id": "m", "condition": "control",
         "domain": "social", "bias_score": 0.2}


def _bias(*scores: str) -> bytes:
    return (BIAS_HEAD + "".join(BIAS_ROW.format(score=s) for s in scores)).encode()


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _tar_gz(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


CORPUS: list[tuple[str, bytes, tuple[str, ...]]] = [
    # --- canonical bias runs
    ("word_score.csv", _bias("0", "yes"), ("line 3", "field 'score'", "'yes'")),
    ("mixed_types.csv", _bias("0", "0.5", "high", "1"), ("line 4", "field 'score'")),
    ("long_string.csv", _bias("x" * 10_000), ("line 2", "field 'score'", "...")),
    ("out_of_range.csv", _bias("1.5"), ("line 2", "field 'score'", "[0, 1]")),
    ("nan_score.csv", _bias("nan"), ("line 2", "field 'score'")),
    ("inf_score.csv", _bias("-inf"), ("line 2", "field 'score'")),
    ("unknown_condition.csv", (BIAS_HEAD + "m,b,placebo,,d,0\n").encode(),
     ("line 2", "field 'condition'", "'placebo'")),
    ("treatment_without_intensity.csv", (BIAS_HEAD + "m,b,treatment,,d,1\n").encode(),
     ("line 2", "intensity")),
    ("missing_column.csv", b"model,bias,condition,domain\nm,b,control,d\n",
     ("score", "needs")),
    ("duplicate_columns.csv", (BIAS_HEAD.replace("score", "score,score")
                               + "m,b,control,,d,0,0\n").encode(), ("score",)),
    ("duplicate_ids.csv", b"id,model,bias,condition,domain,score\n1,m,b,control,d,0\n"
                          b"1,m,b,control,d,1\n", ("line 3", "duplicate key", "line 2")),
    ("unbalanced_quote.csv", (BIAS_HEAD + 'm,"b,control,,d,0\n').encode(), ("line",)),
    ("ragged_row.csv", (BIAS_HEAD + "m,b,control,,d,0,extra\n").encode(), ("line 2",)),
    ("crlf_bad_row.csv", _bias("0", "2").replace(b"\n", b"\r\n"), ("line 3", "'score'")),
    ("bom_bad_row.csv", b"\xef\xbb\xbf" + _bias("0.1", "bad"), ("line 3", "'score'")),
    ("embedded_newline_bad.csv", (BIAS_HEAD + 'm,"multi\nline bias",control,,d,0\n'
                                  + BIAS_ROW.format(score="oops")).encode(),
     ("line 4", "'score'")),
    ("empty.csv", b"", ("empty",)),
    ("header_only.csv", BIAS_HEAD.encode(), ("no", "rows")),
    ("latin1.csv", (BIAS_HEAD + "m,caf\xe9,control,,d,0\n").encode("latin-1"),
     ("UTF-8", "line 2")),
    ("binary.csv", b"\x00\x01\x02\x03" * 100, ("binary",)),
    ("not_parquet.parquet", b"PAR1" + b"\x00" * 64, ("Parquet",)),
    ("scores_as_bools.json", json.dumps([{"model": "m", "bias": "b", "condition": "control",
                                          "domain": "d", "score": True}]).encode(),
     ("record 1", "'score'")),
    # --- JSON structure
    ("truncated.json", b'[{"model": "m", "bias"', ("truncated JSON",)),
    ("scalar.json", b"42", ("expected a JSON list",)),
    ("json_bomb.json", b"[" * 200_000 + b"]" * 200_000, ("nested deeper",)),
    ("not_records.json", b"[1, 2, 3]", ("record 1", "JSON object")),
    ("bad_line.jsonl", b'{"model": "m"}\n{"model": }\n', ("line 2",)),
    # --- replication and summaries
    ("posterior_over_one.csv", (REP_HEAD + "a,s,f,t,0.1,0.2,1.5,0.5\n").encode(),
     ("line 2", "'human_pi'")),
    ("replication_duplicate_test.csv", (REP_HEAD + "a,s,f,t,0.1,0.2,0.5,0.5\n"
                                        "a,s,f,t,0.3,0.2,0.5,0.5\n").encode(),
     ("line 3", "duplicate key")),
    ("summary_word_pas.csv", b"model,study,pas,ecs\nc,s,high,0.5\n", ("line 2", "'pas'")),
    # --- judged
    ("judged_maybe.csv", (JUDGED_HEAD + JUDGED_ROW.format(said="maybe", halluc=0,
                                                          lines="")).encode(),
     ("line 2", "'said_vulnerable'")),
    ("judged_negative_count.csv", (JUDGED_HEAD + JUDGED_ROW.format(said="true", halluc=-1,
                                                                   lines="")).encode(),
     ("line 2", "'n_hallucinated'")),
    ("judged_bad_lines.csv", (JUDGED_HEAD + JUDGED_ROW.format(said="true", halluc=0,
                                                              lines="12;x")).encode(),
     ("line 2", "'claimed_lines'")),
    # --- native KahneBench
    ("kahne_bad_intensity.json", json.dumps({"results": [
        KAHNE, {**KAHNE, "condition": "treatment_extreme"}]}).encode(),
     ("result 2", "'intensity'", "'extreme'")),
    ("kahne_bad_metadata.json", json.dumps([{**KAHNE, "metadata": [1]}]).encode(),
     ("result 1", "'metadata'")),
    ("kahne_score_text.json.gz", gzip.compress(json.dumps([{**KAHNE, "bias_score": "high"}])
                                               .encode()), ("result 1", "'score'")),
    # --- compression and archives
    ("truncated.csv.gz", gzip.compress(_bias("0"))[:-12], ("truncated gzip",)),
    ("fake.csv.gz", _bias("0"), ("not gzip",)),
    ("unknown_bundle.zip", _zip({"notes/readme.txt": b"hello"}), ("readme.txt",)),
    ("corrupt.zip", _zip({"a.json": b"{}"})[:40], ("archive",)),
    # a member that climbs out of the archive is never read (nor written anywhere): refused,
    # named (issue 19: it was dropped silently as a hidden file)
    ("traversal.tar.gz", _tar_gz({"../../etc/passwd": b"root:x:0:0"}),
     ("../../etc/passwd", "leaves the archive")),
    # --- issue 19: hostile input that crashed, lost data or went unreported
    ("lone_surrogate.json", json.dumps([{**KAHNE, "model_id": "m"}]).replace(
        '"m"', '"m\\ud800"').encode(), ("record 1", "'model_id'", "surrogate")),
    ("huge_int.json", json.dumps([{**KAHNE, "bias_score": 1}]).replace(
        '"bias_score": 1', '"bias_score": ' + "9" * 5000).encode(), ("result 1", "'score'")),
    ("unclosed_quote.csv", _bias("0", "0", "0").replace(b"m,anchoring", b'm,"anchoring', 1),
     ("line 2", "quote", "never closed")),
    ("duplicate_key.json", b'[{"model": "m", "model": "n", "bias": "b", "condition": '
                           b'"control", "domain": "d", "score": 0}]',
     ("record 1", "'model'", "twice")),
    ("bare_nan_label.json", b'[{"model": NaN, "bias": "b", "condition": "control", '
                            b'"domain": "d", "score": 0}]', ("record 1", "'model'", "NaN")),
    ("cr_only.csv", _bias("0", "1").replace(b"\n", b"\r"), ("carriage return",)),
    ("wide.csv", (",".join(f"c{i}" for i in range(2_500)) + "\n").encode(),
     ("2,500 columns", "2,000")),
    ("garbage_after_gzip.csv.gz", gzip.compress(_bias("0")) + b"\x00junk",
     ("neither a gzip member nor padding",)),
]


@pytest.mark.parametrize("name,data,needles", CORPUS, ids=[c[0] for c in CORPUS])
def test_each_malformed_file_is_named_and_explained(name: str, data: bytes,
                                                    needles: tuple[str, ...]) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(RunFormatError) as err:
            load_run((name, data))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(err.value)
    assert message.startswith(name + ":"), message
    for needle in needles:
        assert needle in message, f"{needle!r} not in {message!r}"
    assert len(message) < 3000  # values are shortened, never echoed whole
    assert peak < 64 * 1024**2 + 40 * len(data)


def test_the_corpus_is_at_least_thirty_files() -> None:
    assert len(CORPUS) >= 30


def test_gzip_bomb_stops_at_the_limit_with_bounded_memory() -> None:
    bomb = gzip.compress(b"0" * (64 * 1024**2), compresslevel=9)  # 64 MB of zeros, ~64 KB
    tracemalloc.start()
    try:
        with pytest.raises(RunFormatError, match="decompressed-size limit"):
            load_run(("bomb.csv.gz", bomb), max_decompressed=8 * 1024**2)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40 * 1024**2  # stops near the 8 MB limit, never inflates all 64 MB


def test_zip_bomb_is_refused_from_its_headers() -> None:
    bomb = _zip({f"part{i}.json": b"0" * (4 * 1024**2) for i in range(4)})
    with pytest.raises(RunFormatError, match=r"bomb\.zip: cannot read the zip.*limit"):
        load_run(("bomb.zip", bomb), max_decompressed=8 * 1024**2)


def test_over_the_upload_limit() -> None:
    with pytest.raises(RunFormatError, match=r"big\.csv: file is 2\.0 MB, over the 1\.0 MB limit"):
        load_run(("big.csv", b"x" * (2 * 1024**2)), max_bytes=1024**2)


# ------------------------------------------------------------------ fuzzing native formats

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
    max_leaves=6)
kahne_records = st.fixed_dictionaries(
    {"bias_id": json_values, "model_id": json_values,
     "condition": st.sampled_from(["control", "treatment_weak", "treatment_x", "debiasing_0",
                                   "nonsense", ""]) | json_values},
    optional={"bias_score": json_values, "is_biased": json_values, "domain": json_values,
              "confidence_stated": json_values, "metadata": json_values})


@settings(max_examples=150, deadline=None)
@given(records=st.lists(kahne_records, min_size=1, max_size=6), wrap=st.booleans())
def test_random_kahnebench_documents_give_a_run_or_a_run_format_error(records, wrap) -> None:
    payload = {"results": records} if wrap else records
    try:
        run = load_run(("fuzz.json", json.dumps(payload).encode()))
    except RunFormatError as err:
        assert str(err).startswith("fuzz.json:")
    else:
        assert run.kind == "bias" and len(run) == len(records)


@settings(max_examples=60, deadline=None)
@given(members=st.dictionaries(st.text(min_size=1, max_size=20), st.binary(max_size=200),
                               min_size=1, max_size=4),
       as_zip=st.booleans())
def test_random_archives_give_a_run_or_a_run_format_error(members, as_zip) -> None:
    named = {name.replace("\x00", "_"): data for name, data in members.items()}
    data = _zip(named) if as_zip else _tar_gz(named)
    try:
        load_run(("fuzz.zip" if as_zip else "fuzz.tar.gz", data))
    except RunFormatError as err:
        assert str(err).startswith("fuzz.")
