"""Benchmark artefacts kbench recognises but does not read get a sentence naming what the file
is and what to upload instead (never a parser message)."""

from __future__ import annotations

import json

import pytest

from kbench_core.io import RunFormatError, load_run

CASES = [
    ("tests.json", [{"bias_id": "anchoring_effect", "control_prompt": "...",
                     "treatment_prompts": {"weak": "..."}, "domain": "professional"}],
     "KahneBench test-case file"),
    ("gt.json", [{"id": "c1", "ground_truth": {"is_vulnerable": True}}],
     "BlockBench ground-truth file"),
    ("j_c1_direct.json", {"sample_id": "c1", "overall_verdict": {"said_vulnerable": True},
                          "target_assessment": {"found": True}},
     "single BlockBench judge record"),
    ("m_c1_direct.json", {"sample_id": "c1", "ground_truth_vulnerable": True},
     "BlockBench per-sample metrics file"),
    ("evaluation_results.json", {"average_pas_raw": 0.4, "average_ecs": 0.2},
     "HumanStudy-Bench evaluation summary"),
    ("meta.json", {"run_metadata": {"model": "x"}}, "run metadata but no results list"),
]


@pytest.mark.parametrize(("name", "payload", "what"), CASES)
def test_recognised_artefacts_say_what_to_upload_instead(name, payload, what) -> None:
    with pytest.raises(RunFormatError, match=what) as info:
        load_run((name, json.dumps(payload).encode()))
    assert "upload" in str(info.value).lower() or "load_run" in str(info.value)


def test_detailed_stats_table_gets_a_column_mapping_hint() -> None:
    text = b"Study_ID,Test_Name,PAS_Raw,ECS_Test,Z_Diff\ns1,t1,0.5,0.1,0.2\n"
    with pytest.raises(RunFormatError, match=r"detailed_stats\.csv.*columns="):
        load_run(("detailed_stats.csv", text))


def test_real_results_are_not_taken_for_artefacts() -> None:
    # the advice only speaks when no reader recognised the file
    run = load_run(("r.json", json.dumps({"run_metadata": {}, "results": [
        {"bias_id": "anchoring_effect", "model_id": "m", "condition": "control",
         "domain": "social", "bias_score": 0.1}]}).encode()))
    assert run.kind == "bias"
