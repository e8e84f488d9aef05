"""Benchmark artefacts kbench recognises but does not read, and what to upload instead.

A researcher often has several files from one run on disk; uploading the wrong one should get a
sentence that names what the file is and which file to give, not a parser message. Each rule
looks at the parsed JSON (or at a table's column names) only; nothing is read from the values.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

from kbench_core.native._base import FilesConverter, NativeError, NativeFormat

__all__ = ["FOLDER_ADVICE", "advise_columns", "advise_files", "advise_json"]

_BLOCKBENCH_FOLDER = ("the whole judge-output folder as a .zip or .tar.gz (one sub-folder per "
                      "detector with judge_outputs/ and sample_metrics/)")


def _first_record(payload: Any) -> dict[str, Any] | None:
    if isinstance(payload, dict):
        return payload
    if isinstance(payload, list):
        return next((item for item in payload if isinstance(item, dict)), None)
    return None


# A table of human baselines (kbench_core/data/human_baselines.json, KahneBench's
# HUMAN_BASELINES) is not a run: where its rates go instead (issue 37.12).
_BASELINES = ("This is a table of human baselines (a human susceptibility rate per bias, like "
              "kbench's own kbench_core/data/human_baselines.json), not a run: it holds no "
              "model's answers. kbench ships KahneBench's 69 rates and every page and command "
              "uses them for HAS (the Cognitive biases page lists them under 'Human baselines "
              "and their sources'); other rates go to the metric in Python: "
              "kbench_core.kahne.has(trials, baselines={bias: rate, ...}). Upload a bias run "
              "(trials, KahneBench results or fingerprint reports) here.")


def _rates(value: Any) -> bool:
    """A non-empty mapping of names to numbers in [0, 1] (a baselines table)."""
    return isinstance(value, dict) and bool(value) and all(
        isinstance(rate, int | float) and not isinstance(rate, bool) and 0 <= rate <= 1
        for rate in value.values())


def advise_json(payload: Any) -> str | None:
    """What a JSON document is, when it is a known artefact kbench does not load, and what to
    upload instead; None otherwise."""
    record = _first_record(payload)
    if record is None:
        return None
    keys = set(record)
    if isinstance(payload, dict) and (_rates(payload.get("baselines"))
                                      or _rates(payload.get("HUMAN_BASELINES"))):
        return _BASELINES
    if {"bias", "human_rate"} <= keys and not keys & {"model", "score"}:
        return _BASELINES
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
    if {"bias", "human_rate"} <= names and not names & {"model", "score"}:
        return _BASELINES
    if {"bias_id", "control_prompt"} <= names:
        return ("This is a table of KahneBench test cases (prompts, no model responses). Run "
                "KahneBench and upload its results or fingerprint reports.")
    return None


# HumanStudy-Bench's results/benchmark/ files, and the per-study files of one evaluation run.
_HSB_BENCHMARK = ("simple_results.json", "simple_studies.csv", "simple_findings.csv",
                  "simple_summary.md")
_HSB_PER_STUDY = ("evaluation_results.json", "detailed_stats.csv")
_HSB_LOAD = "load simple_results.json (or simple_studies.csv / simple_findings.csv)"


def _judge_file(parts: tuple[str, ...]) -> bool:
    return parts[-1].startswith("j_") and parts[-1].endswith(".json")


def _blockbench_folder(paths: Sequence[str]) -> str | None:
    """A detector's own folder (judge_outputs/j_*.json at its top) or its judge_outputs/
    folder (j_*.json at the top): the detector's name is the folder above, which is not in the
    upload, so the tree cannot be read."""
    split = [PurePosixPath(p).parts for p in paths]
    detector = any(len(parts) == 2 and parts[0] == "judge_outputs" and _judge_file(parts)
                   for parts in split)
    judge_outputs = any(len(parts) == 1 and _judge_file(parts) for parts in split)
    if not (detector or judge_outputs):
        return None
    what = ("one BlockBench detector's folder (judge_outputs/ and sample_metrics/)"
            if detector else "one detector's BlockBench judge_outputs/ folder")
    above = "its parent folder" if detector else "the folder two levels up"
    return (f"This is {what}: kbench names each detector after its folder, which is not part "
            f"of this upload. Zip {above} (the judge-output tree, one sub-folder per detector, "
            "with the ground-truth file if you have one) and upload the .zip.")


def _humanstudy_folder(paths: Sequence[str]) -> str | None:
    """HumanStudy-Bench's results/benchmark/ folder, or a folder of its per-study files."""
    names = {PurePosixPath(p).name for p in paths}
    benchmark = sorted(p for p in paths if PurePosixPath(p).name in _HSB_BENCHMARK[:3])
    if benchmark:
        return ("This is a HumanStudy-Bench results folder: kbench reads one of its files, not "
                f"the folder. Load simple_results.json (or simple_studies.csv / "
                f"simple_findings.csv); here: {', '.join(benchmark[:3])}.")
    if names & {*_HSB_BENCHMARK, *_HSB_PER_STUDY}:
        return ("This is a folder of HumanStudy-Bench per-study files (evaluation_results.json, "
                "detailed_stats.csv), which kbench does not read. From the benchmark's "
                f"results/benchmark/ folder, {_HSB_LOAD}.")
    return None


def advise_files(paths: Sequence[str]) -> str | None:
    """What a folder (or archive) is, from its member paths, when it is a known artefact that
    no folder format reads, and what to upload instead; None otherwise.

    Only asked after every folder format has declined (:data:`FOLDER_ADVICE` comes last in
    :func:`kbench_core.native.formats`), so it never shadows a readable folder.
    """
    return _blockbench_folder(paths) or _humanstudy_folder(paths)


def _refusal(advise: Callable[[Sequence[str]], str | None]) -> FilesConverter:
    def refuse(filename: str, files: Mapping[str, bytes], options: Mapping[str, Any]) -> Any:
        raise NativeError(advise(sorted(files)) or "not a folder kbench reads")

    return refuse


# Folder "formats" that only advise: each recognises an artefact and refuses it, saying what
# to upload instead. Named after what they recognise (the loader's message for an unknown
# folder lists the known folder formats by name).
FOLDER_ADVICE: tuple[NativeFormat, ...] = (
    NativeFormat(name="BlockBench judge outputs", kind="judged",
                 matches_files=lambda paths: _blockbench_folder(paths) is not None,
                 from_files=_refusal(_blockbench_folder), advice=True),
    NativeFormat(name="HumanStudy-Bench results", kind="replication_summary",
                 matches_files=lambda paths: _humanstudy_folder(paths) is not None,
                 from_files=_refusal(_humanstudy_folder), advice=True),
)
