"""Canonical model ids, HumanStudy-Bench configurations and the aliases TOML
(kbench_core.aliases; docs/formats.md "Aliases and profiles")."""

from __future__ import annotations

import doctest
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kbench_core import aliases as aliases_module
from kbench_core.aliases import (
    AliasError,
    AliasTable,
    canonical_id,
    load_aliases,
    parse_aliases,
    split_configuration,
)

REAL = Path(__file__).resolve().parents[1] / "sample_data" / "real"


@pytest.mark.parametrize(("raw", "canonical"), [
    # the spellings of one model in KahneBench, HumanStudy-Bench and by hand
    ("claude-haiku-4-5", "claude-haiku-4.5"),
    ("claude_haiku_4.5", "claude-haiku-4.5"),
    ("claude-haiku-4.5", "claude-haiku-4.5"),
    ("anthropic_claude_haiku_4.5", "claude-haiku-4.5"),
    ("Anthropic/Claude-Haiku-4-5-20251001", "claude-haiku-4.5"),
    # provider prefixes: "/" of any provider, "_" of known ones
    ("openai/gpt-5.2", "gpt-5.2"),
    ("meta-llama/Llama-3.1-70B-Instruct", "llama-3.1-70b-instruct"),
    ("x-ai/grok-4.1-fast", "grok-4.1-fast"),
    ("x_ai_grok_4.1_fast_none", "grok-4.1-fast-none"),
    ("mistralai_mistral_nemo", "mistral-nemo"),
    ("deepseek_deepseek_v3.2", "deepseek-v3.2"),      # the provider once, the model's name stays
    ("qwen_qwen3_next_80b_a3b_instruct", "qwen3-next-80b-a3b-instruct"),
    # date suffixes in their spellings
    ("gpt-5.2-2025-12-11", "gpt-5.2"),
    ("claude-sonnet-4-5-20250929", "claude-sonnet-4.5"),
    ("claude_3_5_sonnet_20241022", "claude-3.5-sonnet"),
    ("claude-3-5-sonnet@20240620", "claude-3.5-sonnet"),
    ("gpt-4-0613", "gpt-4"),
    ("grok-4-1-fast-reasoning", "grok-4.1-fast-reasoning"),
    # digits that are not a version stay apart: 70b is a size, not a minor version
    ("llama-3-70b", "llama-3-70b"),
    ("llama3-1-8b", "llama3.1-8b"),
    ("gpt-oss-120b", "gpt-oss-120b"),
    # nothing left after a prefix or a date: kept
    ("openai/", "openai"),
    ("2025-12-11", "2025.12.11"),
])
def test_canonical_id(raw, canonical) -> None:
    assert canonical_id(raw) == canonical


@pytest.mark.parametrize(("raw", "model", "configuration"), [
    ("anthropic_claude_haiku_4.5_v1-empty", "anthropic_claude_haiku_4.5", "v1-empty"),
    ("openai_gpt_5_nano_v3-human-plus-demo", "openai_gpt_5_nano", "v3-human-plus-demo"),
    ("mixed_models_v2", "mixed_models", "v2"),
    ("mistralai_mistral_nemo_example-v4", "mistralai_mistral_nemo", "example-v4"),
    ("gpt-5.2", "gpt-5.2", ""),
    ("deepseek-v2-lite", "deepseek-v2-lite", ""),     # "-v2" is part of a model name
    ("_v1-empty", "_v1-empty", ""),                    # nothing before it: not split
])
def test_split_configuration(raw, model, configuration) -> None:
    assert split_configuration(raw) == (model, configuration)


def test_real_ids_join_across_kahnebench_and_humanstudy_bench() -> None:
    reports = sorted((REAL / "kahnebench").glob("fingerprint_*.json"))
    kahne = {json.loads(p.read_text())["model_id"] for p in reports}
    results = json.loads((REAL / "humanstudy-bench" / "simple_results.json").read_text())
    configs = set(results["configs"])
    table = AliasTable()
    human = table.join(configs, configurations=True)
    both = {canonical_id(k) for k in kahne} & set(human["model"])
    assert both == {"claude-haiku-4.5"}
    haiku = human[human["model"] == "claude-haiku-4.5"]
    assert sorted(haiku["configuration"]) == ["v1-empty", "v2-human", "v3-human-plus-demo",
                                              "v4-background"]
    assert (haiku["how"] == "rule").all()


ascii_words = st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=6)
separators = st.sampled_from(["-", "_", "."])
raw_ids = st.builds(lambda words, seps, tail: "".join(
    w + s for w, s in zip(words, seps, strict=False)) + tail,
    st.lists(ascii_words, min_size=1, max_size=5), st.lists(separators, max_size=5),
    ascii_words)


@settings(max_examples=300, deadline=None)
@given(raw=st.one_of(raw_ids, st.text(max_size=30)))
def test_canonical_id_is_idempotent(raw) -> None:
    once = canonical_id(raw)
    assert canonical_id(once) == once


@settings(max_examples=200, deadline=None)
@given(raw=raw_ids)
def test_canonical_id_ignores_case(raw) -> None:
    assert canonical_id(raw.upper()) == canonical_id(raw) == canonical_id(raw.title())


@settings(max_examples=200, deadline=None)
@given(name=st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8),
       major=st.integers(0, 99), minor=st.integers(0, 99),
       first=separators, second=separators, third=separators)
def test_version_separators_are_alike(name, major, minor, first, second, third) -> None:
    # name<sep>major<sep>minor: every spelling of the version gives one id, "name-major.minor"
    one = canonical_id(f"{name}{first}{major}{second}{minor}")
    other = canonical_id(f"{name}{third}{major}{third}{minor}")
    assert one == other == f"{name}-{major}.{minor}"


@settings(max_examples=100, deadline=None)
@given(raw=raw_ids, provider=st.sampled_from(["anthropic_", "openai/", "google/",
                                               "mistralai_", "x-ai/", "meta-llama/"]))
def test_provider_prefix_is_dropped(raw, provider) -> None:
    bare = canonical_id(raw)
    assume_clean = not re.match(r"^(" + "|".join(aliases_module.PROVIDERS) + ")_", raw)
    if assume_clean:
        assert canonical_id(provider + raw) == bare


def test_aliases_file(tmp_path) -> None:
    path = tmp_path / "aliases.toml"
    path.write_text('[aliases]\n"grok-4.1-fast" = ["x_ai_grok_4.1_fast_none", '
                    '"Grok-4-1-Fast-Reasoning"]\n')
    table = load_aliases(path)
    assert table.canonical("grok-4-1-fast-reasoning") == "grok-4.1-fast"
    assert table.canonical("x_ai_grok_4.1_fast_none") == "grok-4.1-fast"
    assert table.how("GROK-4-1-FAST-REASONING") == "alias"
    assert table.canonical("gpt-5.2-2025-12-11") == "gpt-5.2"            # the rule otherwise
    joined = table.join(["x_ai_grok_4.1_fast_none_v1-empty"], configurations=True)
    assert joined.to_dict("records") == [{"raw_id": "x_ai_grok_4.1_fast_none_v1-empty",
                                          "model": "grok-4.1-fast",
                                          "configuration": "v1-empty", "how": "alias"}]
    # written back and read again: the same table
    again = load_aliases(table.as_toml().encode(), name="again.toml")
    assert dict(again.aliases) == dict(table.aliases)


def test_a_full_configuration_id_can_be_moved_alone() -> None:
    table = parse_aliases({"claude-haiku-4.5-thinking": ["anthropic_claude_haiku_4.5_v2-human"]})
    joined = table.join(["anthropic_claude_haiku_4.5_v1-empty",
                         "anthropic_claude_haiku_4.5_v2-human"], configurations=True)
    assert joined["model"].tolist() == ["claude-haiku-4.5", "claude-haiku-4.5-thinking"]
    assert joined["how"].tolist() == ["rule", "alias"]


@pytest.mark.parametrize(("text", "message"), [
    ("[aliases\n", "bad.toml: not a TOML aliases file"),
    ('[other]\n"a" = ["b"]\n', "bad.toml: no [aliases] table"),
    ('[aliases]\n"a" = "b"\n', "bad.toml: aliases.'a' must be a list of non-empty raw ids"),
    ('[aliases]\n"a" = ["b", 3]\n', "bad.toml: aliases.'a' must be a list"),
    ('[aliases]\n"a" = [""]\n', "bad.toml: aliases.'a' must be a list"),
    ('[aliases]\n"a" = ["b", "B"]\n', "bad.toml: aliases.'a' lists 'B' twice"),
    ('[aliases]\n"a" = ["x"]\n"c" = ["X"]\n',
     "bad.toml: raw id 'X' is claimed by two canonical ids, 'a' and 'c' (aliases.'c')"),
    ('[aliases]\n"a" = ["b"]\n"a" = ["c"]\n', "bad.toml: not a TOML aliases file"),
    ('aliases = 3\n', "bad.toml: [aliases] must be a table"),
    ('[aliases]\n"  " = ["b"]\n', "bad.toml: an alias key must be a non-empty canonical id"),
])
def test_bad_aliases_files_are_named(tmp_path, text, message) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(AliasError) as caught:
        load_aliases(path, name="bad.toml")
    assert str(caught.value).startswith(message)


def test_missing_file_and_app_additions(tmp_path) -> None:
    with pytest.raises(AliasError, match=r"nowhere\.toml: cannot read"):
        load_aliases(tmp_path / "nowhere.toml", name="nowhere.toml")
    table = AliasTable().with_alias("my-haiku", "claude-haiku-4.5")
    assert table.canonical("MY-HAIKU") == "claude-haiku-4.5" and table.source == "the app"
    with pytest.raises(AliasError, match="claimed by two canonical ids"):
        table.with_alias("my-haiku", "gpt-5.2")
    # hostile text is only data: written back quoted, read back the same
    odd = table.with_alias('a"b\\c\u202e', "x")
    assert load_aliases(odd.as_toml().encode()).canonical('a"b\\c\u202e') == "x"


def test_doctests() -> None:
    result = doctest.testmod(aliases_module, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 5 and result.failed == 0
