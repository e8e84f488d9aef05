"""Benchmark artefacts kbench recognises but does not read, and what to upload instead.

A researcher often has several files from one run on disk; uploading the wrong one should get a
sentence that names what the file is and which file to give, not a parser message. Each rule
looks at the parsed JSON (or at a table's column names) only; nothing is read from the values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["advise_columns", "advise_json"]

_BLOCKBENCH_FOLDER = ("the whole judge-output folder as a .zip or .tar.gz (one sub-folder per "
                      "detector with judge_outputs/ and sample_metrics/)")


def _first_record(payload: Any) -> dict[str, Any] | None:
    if isinstance(payload, dict):
        return payload
    if isinstance(payload, list):
        return next((item for item in payload if isinstance(item, dict)), None)
    return None


def advise_json(payload: Any) -> str | None:
    """What a JSON document is, when it is a known artefact kbench does not load, and what to
    upload instead; None otherwise."""
    record = _first_record(payload)
    if record is None:
        return None
    keys = set(record)
    if {"bias_id", "control_prompt"} <= keys or {"bias_id", "treatment_prompts"} <= keys:
        return ("This is a KahneBench test-case file (prompts, no model responses). Run "
                "KahneBench on it and upload its results JSON, or the fingerprint reports "
                "(fingerprint_<model>.json) it writes after scoring.")
    if {"id", "ground_truth"} <= keys and isinstance(record.get("ground_truth"), dict):
        return ("This is a BlockBench ground-truth file: it holds no judgements. Upload "
                f"{_BLOCKBENCH_FOLDER} with this file inside, or give it with "
                "load_run(..., ground_truth=FILE).")
    if {"overall_verdict", "target_assessment"} <= keys and "detector_model" not in keys:
        return ("This is a single BlockBench judge record (judge_outputs/j_<sample>_<prompt>"
                f".json). Upload {_BLOCKBENCH_FOLDER}.")
    if "ground_truth_vulnerable" in keys and "overall_verdict" not in keys:
        return ("This is a BlockBench per-sample metrics file (sample_metrics/m_*.json). "
                f"Upload {_BLOCKBENCH_FOLDER}.")
    if keys & {"average_pas_raw", "average_ecs", "ecs_strict_overall", "ecs_corr_study"}:
        return ("This is a HumanStudy-Bench evaluation summary of one run. Upload the "
                "benchmark's results/benchmark/simple_results.json (every configuration, with "
                "study and finding scores) or its per-test effect list.")
    if "run_metadata" in keys and not isinstance(record.get("results"), list) \
            and "magnitude_scores" not in keys:
        return ("This KahneBench file has run metadata but no results list. Upload the "
                "results JSON (with a 'results' list) or the fingerprint reports.")
    return None


def advise_columns(columns: Sequence[str]) -> str | None:
    """The same for a table, from its column names."""
    names = {str(c) for c in columns}
    if {"PAS_Raw", "ECS_Test"} <= names or {"Z_Diff", "PAS_Raw"} <= names:
        return ("This looks like HumanStudy-Bench's detailed_stats.csv. kbench reads the "
                "per-test effect list or results/benchmark/simple_results.json; to load this "
                "table, map its columns to model, study, finding, test and human_d/agent_d "
                "(load_run(..., columns={...}), or the column mapping on the Runs page).")
    if {"bias_id", "control_prompt"} <= names:
        return ("This is a table of KahneBench test cases (prompts, no model responses). Run "
                "KahneBench and upload its results or fingerprint reports.")
    return None
