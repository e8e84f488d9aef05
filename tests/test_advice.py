"""Benchmark artefacts kbench recognises but does not read get a sentence naming what the file
is and what to upload instead (never a parser message)."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

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


# ------------------------------------------------------------------------------- folders

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT / "tests" / "data" / "formats" / "blockbench_judge_output"
HSB = ROOT / "sample_data" / "real" / "humanstudy-bench"


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_humanstudy_results_folder_says_which_file_to_load() -> None:
    with pytest.raises(RunFormatError) as info:
        load_run(HSB)
    message = str(info.value)
    assert "HumanStudy-Bench results folder" in message
    assert "load simple_results.json (or simple_studies.csv / simple_findings.csv)" in (
        message.lower())
    assert "holds no benchmark output" not in message
    # the same folder zipped, as it sits in the benchmark's repository
    zipped = _zip({f"results/benchmark/{p.name}": p.read_bytes() for p in HSB.iterdir()})
    with pytest.raises(RunFormatError, match=r"results/benchmark/simple_results\.json"):
        load_run(("benchmark.zip", zipped))


def test_humanstudy_per_study_folder_says_which_file_to_load() -> None:
    files = {f"v1-empty/study_00{i}/{name}": b"{}" for i in (1, 2)
             for name in ("evaluation_results.json", "detailed_stats.csv")}
    with pytest.raises(RunFormatError, match=r"per-study files.*simple_results\.json \(or "
                                             r"simple_studies\.csv / simple_findings\.csv\)"):
        load_run(("runs.zip", _zip(files)))


@pytest.mark.parametrize("folder", ["detector_a", "detector_a/judge_outputs"])
def test_one_blockbench_detector_folder_says_zip_its_parent(folder) -> None:
    with pytest.raises(RunFormatError) as info:
        load_run(TREE / folder)
    message = str(info.value)
    # was: "holds no benchmark output kbench knows (judge_outputs/...); known folder formats:
    # BlockBench judge outputs", which contradicts itself
    assert "holds no benchmark output" not in message
    assert "BlockBench" in message and "judge-output tree" in message
    assert ("Zip its parent folder" if folder == "detector_a"
            else "Zip the folder two levels up") in message


def test_folder_advice_never_shadows_a_readable_folder() -> None:
    run = load_run(TREE)  # the whole tree still loads, advice formats come last
    assert run.kind == "judged" and set(run.models) == {"detector_a", "detector_b"}
    from kbench_core import native

    kinds = [f.advice for f in native.formats()]
    assert kinds == sorted(kinds)  # every advice-only format after every reading one
    with pytest.raises(RunFormatError, match="holds no benchmark output kbench knows"):
        load_run(("other.zip", _zip({"notes/readme.txt": b"hello"})))
