"""Tests of kbench_core.io: formats, kind detection, validation messages, limits, round trips."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbench_core.io import MAX_LISTED_PROBLEMS, Run, RunFormatError, detect_kind, load_run
from kbench_core.schema import INTENSITIES, SPECS

BIAS_CSV = (
    "model,bias,condition,intensity,method,domain,score,confidence\n"
    "m1,anchoring_effect,control,,,social,0,0.5\n"
    "m1,anchoring_effect,treatment,weak,,social,1,\n"
    "m2,anchoring_effect,treatment,strong,,risk,,0.9\n"
    "m2,anchoring_effect,debiasing,,chain_of_thought,risk,0.25,0.8\n"
)
REPLICATION_CSV = (
    "model,study,finding,test,human_d,agent_d\n"
    "a,s1,f1,t1,0.5,0.4\n"
    "a,s1,f1,t2,0.2,0.1\n"
    "b,s1,f1,t1,0.5,0.6\n"
)
SUMMARY_CSV = "model,study,pas,ecs,cost\ncfg,s1,0.7,,1.5\ncfg,s2,,0.2,0.5\n"
JUDGED_CSV = (
    "sample,model,judge,prompt_type,is_vulnerable,said_vulnerable,target_found,confidence,"
    "type_match,n_hallucinated,claimed_lines\n"
    "c1,det,j1,direct,true,true,true,0.9,exact,0,12;13\n"
    "c2,det,j1,direct,false,true,false,0.6,,2,\n"
    "c1,det,j2,direct,true,false,false,0.3,not_mentioned,1,7\n"
)


def load_text(name: str, text: str, **kwargs) -> Run:
    return load_run((name, text.encode("utf-8")), **kwargs)


def error_of(name: str, data: bytes | str, **kwargs) -> RunFormatError:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with pytest.raises(RunFormatError) as info:
        load_run((name, raw), **kwargs)
    return info.value


# ---------------------------------------------------------------- kinds and formats


@pytest.mark.parametrize(
    ("text", "kind", "rows"),
    [(BIAS_CSV, "bias", 4), (REPLICATION_CSV, "replication", 3),
     (SUMMARY_CSV, "replication_summary", 2), (JUDGED_CSV, "judged", 3)],
)
def test_each_kind_is_detected_and_validated(text: str, kind: str, rows: int) -> None:
    run = load_text("run.csv", text)
    assert run.kind == kind
    assert len(run) == rows
    assert run.name == "run"
    assert run.meta["rows"] == rows and run.meta["format"] == "csv"
    assert set(SPECS[kind].required) <= set(run.frame.columns)


def test_bias_frame_types_are_compact_and_exact() -> None:
    frame = load_text("b.csv", BIAS_CSV).frame
    assert isinstance(frame["model"].dtype, pd.CategoricalDtype)
    assert list(frame["intensity"].cat.categories) == list(INTENSITIES)
    assert frame["intensity"].cat.ordered
    # An empty score is unknown (NaN), never 0.
    assert frame["score"].tolist()[:2] == [0.0, 1.0] and np.isnan(frame["score"].iat[2])
    assert np.isnan(frame["confidence"].iat[1])


def test_judged_booleans_and_lines() -> None:
    frame = load_text("j.csv", JUDGED_CSV).frame
    assert frame["is_vulnerable"].dtype == bool
    assert frame["said_vulnerable"].tolist() == [True, True, False]
    assert frame["claimed_lines"].tolist()[0] == "12;13"
    assert frame["claimed_lines"].isna().tolist() == [False, True, False]
    assert frame["n_hallucinated"].tolist() == [0, 2, 1]


def test_native_simple_studies_columns_are_mapped() -> None:
    text = ("config,study_id,title,pas_raw,ecs,total_tokens,total_cost\n"
            "agent-v1,study_001,Title,0.5,,100,1.25\n")
    run = load_text("simple_studies.csv", text)
    assert run.kind == "replication_summary"
    assert run.frame[["model", "study", "pas", "tokens", "cost"]].iloc[0].tolist() == [
        "agent-v1", "study_001", 0.5, 100.0, 1.25]


def test_explicit_column_mapping() -> None:
    text = "agent,study,finding,test,human_d,agent_d\na,s,f,t,0.1,0.2\n"
    run = load_text("x.csv", text, columns={"agent": "model"})
    assert run.kind == "replication" and run.models == ["a"]


def test_detect_kind() -> None:
    assert detect_kind(["model", "bias", "condition", "domain", "score"]) == "bias"
    assert detect_kind(["sample", "model", "judge", "said_vulnerable", "score"]) == "judged"
    assert detect_kind(["model", "study", "finding", "test", "human_d"]) == "replication"
    assert detect_kind(["foo", "bar"]) is None


def _bias_frame() -> pd.DataFrame:
    return load_text("b.csv", BIAS_CSV).frame


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".json", ".jsonl", ".parquet"])
@pytest.mark.parametrize("gzipped", [False, True])
def test_every_format_loads_the_same_frame(suffix: str, gzipped: bool) -> None:
    expected = _bias_frame()
    data = _write(expected, suffix)
    name = "r" + suffix
    if gzipped:
        data, name = gzip.compress(data), name + ".gz"
    run = load_run((name, data))
    pd.testing.assert_frame_equal(run.frame, expected)
    assert run.meta["format"] == suffix[1:] + (".gz" if gzipped else "")


def test_path_source_and_unknown_suffix(tmp_path) -> None:
    path = tmp_path / "runs.data"
    path.write_text(BIAS_CSV)
    run = load_run(path)
    assert run.kind == "bias" and run.name == "runs"


def test_json_object_with_records_and_crlf_and_bom() -> None:
    records = json.loads(_bias_frame().to_json(orient="records"))
    run = load_text("r.json", json.dumps({"records": records}))
    assert len(run) == 4
    crlf = BIAS_CSV.replace("\n", "\r\n").encode()
    run = load_run(("r.csv", b"\xef\xbb\xbf" + crlf))
    pd.testing.assert_frame_equal(run.frame, _bias_frame())
    assert any("byte-order mark" in w for w in run.warnings)


def test_utf16_is_decoded_with_a_warning() -> None:
    run = load_run(("r.csv", BIAS_CSV.encode("utf-16")))
    assert len(run) == 4 and any("UTF-16" in w for w in run.warnings)


def test_embedded_newlines_and_quotes_survive() -> None:
    text = ('model,bias,condition,domain,score,response\n'
            'm,b,control,social,0,"line one\nline ""two"", with comma"\n')
    run = load_text("q.csv", text)
    assert run.frame["response"].iat[0] == 'line one\nline "two", with comma'


def test_extra_columns_are_kept() -> None:
    text = "model,bias,condition,domain,score,my_note\nm,b,control,social,0,hello\n"
    assert load_text("e.csv", text).frame["my_note"].iat[0] == "hello"


# ---------------------------------------------------------------- bad input


def test_word_where_a_number_goes_names_file_line_field() -> None:
    err = error_of("bad.csv", BIAS_CSV.replace("social,1,", "social,yes,"))
    assert str(err) == "bad.csv: line 3, field 'score': expected a number in [0, 1], got 'yes'"
    assert err.problems[0].row == 3 and err.problems[0].field == "score"


def test_missing_required_column() -> None:
    text = "model,bias,condition,score\nm,b,control,0\n"
    err = error_of("nodomain.csv", text)
    assert "required column 'domain' is missing" in str(err) and "nodomain.csv" in str(err)


@pytest.mark.parametrize("value", ["1.5", "-0.1"])
def test_out_of_range(value: str) -> None:
    err = error_of("r.csv", BIAS_CSV.replace("risk,,0.9", f"risk,{value},0.9"))
    assert "line 4, field 'score'" in str(err) and "out of range" in str(err)


@pytest.mark.parametrize("token", ["inf", "NaN", "-Infinity"])
def test_nan_and_inf_are_refused(token: str) -> None:
    err = error_of("r.csv", BIAS_CSV.replace("social,0,0.5", f"social,{token},0.5"))
    assert "line 2, field 'score'" in str(err) and "NaN and infinity" in str(err)


def test_nan_in_json_is_refused() -> None:
    text = '[{"model": "m", "bias": "b", "condition": "control", "domain": "d", "score": NaN}]'
    err = error_of("r.json", text)
    assert "record 1, field 'score'" in str(err) and "NaN" in str(err)


def test_nan_in_parquet_is_refused() -> None:
    frame = _bias_frame().copy()
    frame.loc[1, "confidence"] = np.inf
    err = error_of("r.parquet", _write(frame, ".parquet"))
    assert "row 2, field 'confidence'" in str(err)


def test_unknown_category() -> None:
    err = error_of("r.csv", BIAS_CSV.replace("weak", "feeble"))
    assert "line 3, field 'intensity': unknown value 'feeble'" in str(err)
    assert "'weak', 'moderate', 'strong', 'adversarial'" in str(err)


def test_treatment_row_without_intensity_and_debiasing_without_method() -> None:
    text = BIAS_CSV.replace("treatment,weak", "treatment,").replace("chain_of_thought", "")
    err = error_of("r.csv", text)
    assert err.total == 2
    assert "line 3, field 'intensity': treatment rows need a value" in str(err)
    assert "line 5, field 'method': debiasing rows need a value" in str(err)


def test_duplicate_keys() -> None:
    text = REPLICATION_CSV + "a,s1,f1,t1,0.9,0.9\n"
    err = error_of("rep.csv", text)
    assert "line 5" in str(err) and "duplicate key" in str(err)
    assert "first seen at line 2" in str(err)


def test_duplicate_bias_ids() -> None:
    text = "id,model,bias,condition,domain,score\nx1,m,b,control,d,0\nx1,m,b,control,d,1\n"
    assert "duplicate key (id) = ('x1')" in str(error_of("r.csv", text))


def test_repeated_trials_without_id_are_fine() -> None:
    text = "model,bias,condition,domain,score\nm,b,control,d,0\nm,b,control,d,0\n"
    assert len(load_text("r.csv", text)) == 2


@pytest.mark.parametrize(
    ("name", "data", "needle"),
    [
        ("empty.csv", b"", "the file is empty"),
        ("blank.csv", b"\n\n  \n", "the file is empty"),
        ("header.csv", b"model,bias,condition,domain,score\n", "header but no data rows"),
        ("garbage.csv", bytes(range(256)) * 4, "binary data"),
        ("garbage.parquet", b"not parquet at all", "not a Parquet file"),
        ("trunc.json", b'[{"model": "m", "bias": ', "truncated JSON"),
        ("notgz.csv.gz", b"model,bias\n", "not gzip data"),
        ("obj.json", b'{"foo": 1}', "expected a JSON list of records"),
        ("scalars.json", b"[1, 2]", "expected a JSON object per record"),
        ("latin1.csv", "model,bias,condition,domain,score\nm\xe9,b,control,d,0\n".encode("latin-1"),
         "not UTF-8"),
        ("cols.csv", b"alpha,beta\n1,2\n", "cannot tell the run kind"),
        ("dupcols.csv", b"model,model,bias,condition,domain,score\nm,m,b,control,d,0\n",
         "duplicate column name 'model'"),
        ("ragged.csv", BIAS_CSV.encode() + b"m,b,control,,,d,0,0,extra,cells\n",
         "line 6: a row has 10 cells"),
    ],
)
def test_malformed_files_raise_clear_errors(name: str, data: bytes, needle: str) -> None:
    err = error_of(name, data)
    assert name in str(err)
    assert needle in str(err)


def test_truncated_gzip() -> None:
    err = error_of("r.csv.gz", gzip.compress(BIAS_CSV.encode())[:-12])
    assert "truncated gzip" in str(err)


def test_bad_line_in_json_lines() -> None:
    good = '{"model": "m", "bias": "b", "condition": "control", "domain": "d", "score": 0}'
    err = error_of("r.jsonl", f"{good}\n{good}\n{{\"model\": oops}}\n")
    assert "line 3" in str(err) and "invalid JSON" in str(err)


def test_bool_where_number_goes_in_json() -> None:
    text = '[{"model": "m", "bias": "b", "condition": "control", "domain": "d", "score": true}]'
    assert "got a true/false value" in str(error_of("r.json", text))


def test_word_where_bool_goes() -> None:
    err = error_of("j.csv", JUDGED_CSV.replace("direct,false,true", "direct,maybe,true"))
    assert "line 3, field 'is_vulnerable': expected true or false, got 'maybe'" in str(err)


def test_deeply_nested_json_is_refused_without_recursion() -> None:
    text = "[" * 100_000 + "]" * 100_000
    assert "nested deeper" in str(error_of("deep.json", text))


def test_nested_value_in_a_label_column() -> None:
    text = '[{"model": {"a": 1}, "bias": "b", "condition": "control", "domain": "d", "score": 0}]'
    assert "record 1, field 'model': expected text, got a nested" in str(error_of("r.json", text))


def test_at_most_twenty_problems_listed_then_a_count() -> None:
    rows = "".join(f"m,b,control,d,word{i}\n" for i in range(50))
    err = error_of("many.csv", "model,bias,condition,domain,score\n" + rows)
    assert err.total == 50 and len(err.problems) == MAX_LISTED_PROBLEMS
    assert str(err).startswith("many.csv: 50 problems")
    assert "... and 30 more" in str(err)
    # Listed in file order, first line first.
    assert err.problems[0].row == 2 and err.problems[-1].row == 21


def test_skip_drops_invalid_rows_and_warns() -> None:
    text = BIAS_CSV.replace("social,1,", "social,yes,")
    run = load_text("r.csv", text, on_error="skip")
    assert len(run) == 3
    assert run.warnings[0] == "skipped 1 invalid row (1 problem)"
    assert "line 3, field 'score'" in run.warnings[1]


def test_skip_still_raises_when_nothing_is_left() -> None:
    text = "model,bias,condition,domain,score\nm,b,control,d,yes\n"
    with pytest.raises(RunFormatError):
        load_text("r.csv", text, on_error="skip")


def test_size_limits() -> None:
    err = error_of("big.csv", BIAS_CSV, max_bytes=100)
    assert "over the 0.0 MB limit" in str(err) or "limit" in str(err)
    bomb = gzip.compress(b"model,bias,condition,domain,score\n" + b"m,b,control,d,0\n" * 200_000)
    err = error_of("bomb.csv.gz", bomb, max_decompressed=1_000_000)
    assert "decompressed-size limit" in str(err)


def test_size_limit_on_a_path(tmp_path) -> None:
    path = tmp_path / "big.csv"
    path.write_text(BIAS_CSV)
    with pytest.raises(RunFormatError, match=r"big\.csv: file is .* over the"):
        load_run(path, max_bytes=10)


def test_missing_file_is_a_run_format_error(tmp_path) -> None:
    with pytest.raises(RunFormatError, match="no such file"):
        load_run(tmp_path / "nope.csv")


def test_invalid_options_are_named() -> None:
    with pytest.raises(ValueError, match="on_error must be"):
        load_run(("r.csv", BIAS_CSV.encode()), on_error="ignore")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="kind must be one of"):
        load_run(("r.csv", BIAS_CSV.encode()), kind="biases")  # type: ignore[arg-type]


def test_content_hash_is_stable() -> None:
    a = load_text("a.csv", BIAS_CSV)
    b = load_text("b.csv", BIAS_CSV)
    assert a.content_hash == b.content_hash and len(a.content_hash) == 64


# ---------------------------------------------------------------- round trips and fuzzing


def _write(frame: pd.DataFrame, suffix: str) -> bytes:
    plain = frame.astype({c: object for c in frame.columns
                          if isinstance(frame[c].dtype, pd.CategoricalDtype)})
    if suffix == ".csv":
        return plain.to_csv(index=False).encode()
    if suffix == ".tsv":
        return plain.to_csv(index=False, sep="\t").encode()
    if suffix == ".json":
        return plain.to_json(orient="records").encode()
    if suffix == ".jsonl":
        return plain.to_json(orient="records", lines=True).encode()
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(plain, preserve_index=False), buffer)
    return buffer.getvalue()


labels = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_-0123456789 é", min_size=1, max_size=12) \
    .map(str.strip).filter(lambda s: s != "" and not s.replace(".", "").isdigit())
scores = st.one_of(st.none(), st.integers(0, 1000).map(lambda v: v / 1000))


@st.composite
def bias_frames(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(1, 25))
    conditions = draw(st.lists(st.sampled_from(["control", "treatment", "debiasing"]),
                               min_size=n, max_size=n))
    intensity = [draw(st.sampled_from(INTENSITIES)) if c == "treatment" else None
                 for c in conditions]
    method = [draw(labels) if c == "debiasing" else None for c in conditions]
    return pd.DataFrame({
        "model": draw(st.lists(labels, min_size=n, max_size=n)),
        "bias": draw(st.lists(labels, min_size=n, max_size=n)),
        "condition": conditions,
        "intensity": intensity,
        "method": method,
        "domain": draw(st.lists(labels, min_size=n, max_size=n)),
        "score": draw(st.lists(scores, min_size=n, max_size=n)),
        # A lone CR is a line break to every CSV reader (pandas does not quote it), a NUL byte
        # marks a binary file, and lone surrogates cannot be written as UTF-8.
        "response": draw(st.lists(st.text(st.characters(blacklist_characters="\r\x00",
                                                        blacklist_categories=("Cs",)),
                                          min_size=1, max_size=30).filter(str.strip),
                                  min_size=n, max_size=n)),
    })


def _nullable(series: pd.Series) -> list[object]:
    return [None if pd.isna(v) else v for v in series.astype(object)]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=bias_frames(), suffix=st.sampled_from([".csv", ".tsv", ".json", ".jsonl",
                                                   ".parquet"]),
       gzipped=st.booleans())
def test_round_trip_every_format(frame: pd.DataFrame, suffix: str, gzipped: bool) -> None:
    # A cell with the delimiter, quotes or newlines must survive too; responses carry them.
    data = _write(frame, suffix)
    if gzipped:
        data = gzip.compress(data)
    run = load_run(("fuzz" + suffix + (".gz" if gzipped else ""), data))
    got = run.frame
    assert len(got) == len(frame)
    for col in ("model", "bias", "condition", "domain"):
        assert got[col].astype(str).tolist() == frame[col].astype(str).tolist()
    assert _nullable(got["intensity"]) == _nullable(frame["intensity"])
    np.testing.assert_array_equal(got["score"].to_numpy(),
                                  frame["score"].astype(float).to_numpy())
    assert got["response"].tolist() == frame["response"].tolist()


@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=600),
       suffix=st.sampled_from(["", ".csv", ".tsv", ".json", ".jsonl", ".parquet", ".csv.gz"]))
def test_random_bytes_never_escape_as_anything_but_run_format_error(data: bytes,
                                                                   suffix: str) -> None:
    with contextlib.suppress(RunFormatError):
        load_run(("fuzz" + suffix, data))


mutations = st.sampled_from(["", "yes", "-1", "2", "nan", "inf", "[]", "{}", "\x00", "é", ",",
                             '"', "\n", "true", "1e400", "  ", "treatment"])


@settings(max_examples=150, deadline=None)
@given(row=st.integers(0, 3), col=st.integers(0, 7), value=mutations,
       suffix=st.sampled_from([".csv", ".json", ".jsonl"]))
def test_mutated_cells_give_a_run_or_a_run_format_error(row: int, col: int, value: str,
                                                        suffix: str) -> None:
    frame = _bias_frame().astype(object)
    frame.iat[row, col] = value
    try:
        run = load_run(("mut" + suffix, _write(frame, suffix)))
    except RunFormatError as err:
        assert "mut" + suffix in str(err)
    else:
        assert run.frame["score"].dropna().between(0, 1).all()


def test_docs_list_every_canonical_column() -> None:
    # each family registers the file holding its section (docs/formats.md for the built-in
    # ones); the section, not just the file, lists every column
    from kbench_core import families

    for family in families.all_families():
        section = families.format_section(family.kind)
        assert section.startswith(f"## `{family.kind}`")
        for col in family.spec.columns:
            assert f"| `{col.name}` |" in section, (family.kind, col.name)


def test_combine_runs_tells_clashing_models_apart() -> None:
    from kbench_core.io import combine_runs

    first = load_run(("a.csv", b"model,bias,condition,intensity,domain,score\n"
                               b"m,x,treatment,weak,d,1\nonly_a,x,control,,d,0\n"))
    second = load_run(("b.csv", b"model,bias,condition,intensity,domain,score\n"
                                b"m,x,treatment,strong,d,0\n"))
    both = combine_runs([first, second])
    assert sorted(both["model"].unique()) == ["m (a)", "m (b)", "only_a"]
    assert list(both["run"]) == ["a", "a", "b"]
    assert both["intensity"].cat.ordered and list(both["intensity"].cat.categories) == [
        "weak", "moderate", "strong", "adversarial"]
    assert combine_runs([first])["run"].eq("a").all()
    judged = load_run("sample_data/judged.csv")
    with pytest.raises(ValueError, match="different kinds"):
        combine_runs([first, judged])


# ---------------------------------------------------------------------------- progress


def _stages(source, **kwargs) -> list[tuple[float, str]]:
    calls: list[tuple[float, str]] = []
    load_run(source, progress=lambda fraction, stage: calls.append((fraction, stage)),
             **kwargs)
    return calls


def test_progress_stages_come_in_order_and_end_at_one() -> None:
    import gzip

    data = b"model,bias,condition,domain,score\n" + b"m,anchoring_effect,control,social,0\n" * 50
    calls = _stages(("run.csv", data))
    assert [stage for _, stage in calls] == ["read", "parse", "validate", "done"]
    fractions = [fraction for fraction, _ in calls]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] == 1.0
    calls = _stages(("run.csv.gz", gzip.compress(data)))
    assert [stage for _, stage in calls] == ["read", "decompress", "parse", "validate", "done"]
    assert [f for f, _ in calls] == sorted(f for f, _ in calls) and calls[-1] == (1.0, "done")
    table = pa.Table.from_pandas(pd.read_csv(Path(__file__).parent.parent / "sample_data"
                                             / "judged.csv"), preserve_index=False)
    sink = io.BytesIO()
    pq.write_table(table, sink)
    calls = _stages(("judged.parquet", sink.getvalue()))
    assert calls[-1] == (1.0, "done") and len(calls) == 4  # never one call per row
    big = data + b"m,anchoring_effect,control,social,0\n" * 40_000  # streamed (> 1 MB)
    for source in (("big.csv.gz", gzip.compress(big)),  # streamed, then parsed whole:
                   ("odd.csv.gz", gzip.compress(big + b'm,5" x,control,social,0\n'))):
        calls = _stages(source, on_error="skip")
        assert [stage for _, stage in calls] == ["read", "decompress", "parse", "validate",
                                                 "done"]


def test_progress_is_not_done_for_a_refused_file_and_callback_errors_propagate() -> None:
    calls: list[str] = []
    with pytest.raises(RunFormatError):
        load_run(("bad.csv", b"model,bias,condition,domain,score\nm,b,control,d,high\n"),
                 progress=lambda fraction, stage: calls.append(stage))
    assert calls and "done" not in calls

    class Cancelled(Exception):
        pass

    def cancel(fraction: float, stage: str) -> None:
        if stage == "parse":
            raise Cancelled

    with pytest.raises(Cancelled):
        load_run(("run.csv", b"model,bias,condition,domain,score\nm,b,control,d,0\n"),
                 progress=cancel)

    def cancel_at_the_end(fraction: float, stage: str) -> None:
        if stage == "done":
            raise Cancelled

    with pytest.raises(Cancelled):
        load_run(("run.csv", b"model,bias,condition,domain,score\nm,b,control,d,0\n"),
                 progress=cancel_at_the_end)


@pytest.mark.parametrize("ids", [["b02", "b01", "b03", "b01"], ["b01", "b02", "b03", "b03"],
                                 ["x", "b01", "b02", "b01"], ["b0000002", "b0000001", "b0000001",
                                                              "b0000003"]])
def test_repeated_ids_are_reported_whatever_their_width_or_order(ids: list[str]) -> None:
    rows = "".join(f"{i},m,anchoring_effect,control,social,0\n" for i in ids)
    with pytest.raises(RunFormatError, match="duplicate key"):
        load_run(("ids.csv", ("id,model,bias,condition,domain,score\n" + rows).encode()))


@pytest.mark.parametrize("ids", [["b02", "b01", "b03"], ["b01", "b02", "b03"],
                                 ["x", "b01", "b0001"], ["a\u00e9", "b01", "b02"]])
def test_distinct_ids_load(ids: list[str]) -> None:
    rows = "".join(f"{i},m,anchoring_effect,control,social,0\n" for i in ids)
    run = load_run(("ids.csv", ("id,model,bias,condition,domain,score\n" + rows).encode()))
    assert list(run.frame["id"]) == ids
