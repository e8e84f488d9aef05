"""A KahneBench results file written before scoring (every bias_score and is_biased empty):
it loads with a warning that says what to do, and the page, ``kbench metrics``, ``kbench
figures``, the report and the Export page show that message instead of empty figures or a
traceback; a partly scored run says how many responses are unknown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from kbench_app import state
from kbench_core import families, kahne
from kbench_core.cli import main
from kbench_core.io import load_run
from kbench_core.report import report_html

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT.parent / "shared" / "formats" / "kahnebench" / "results_example.json"


def results(scored: int) -> dict:
    """The format example with only the first ``scored`` responses keeping a score."""
    body = json.loads(EXAMPLE.read_text())
    for i, record in enumerate(body["results"]):
        if i >= scored:
            record["bias_score"] = None
            record.pop("is_biased", None)
        else:
            record["bias_score"] = 0.5
    return body


@pytest.fixture
def unscored(tmp_path) -> Path:
    path = tmp_path / "unscored.json"
    path.write_text(json.dumps(results(0)))
    return path


def test_loader_says_no_response_is_scored_and_what_to_do(unscored) -> None:
    run = load_run(unscored)
    assert run.kind == "bias" and run.frame["score"].isna().all()
    (warning,) = run.warnings
    assert "no scored response" in warning and "fingerprint_<model>.json" in warning
    assert families.unavailable(run.kind, run.frame) == kahne.UNSCORED_ADVICE


def test_partly_scored_run_counts_the_unknown(tmp_path) -> None:
    path = tmp_path / "partial.json"
    body = results(10)
    path.write_text(json.dumps(body))
    run = load_run(path)
    total = len(body["results"])
    assert any(f"{total - 10:,} of {total:,} responses" in w for w in run.warnings)
    assert families.unavailable(run.kind, run.frame) is None


def test_commands_print_the_advice_instead_of_empty_figures(unscored, tmp_path,
                                                             capsys) -> None:
    with pytest.raises(SystemExit, match="no metrics to print"):
        main(["metrics", str(unscored)])
    out = tmp_path / "figures"
    assert main(["figures", str(unscored), "--out", str(out), "--format", "png"]) == 0
    assert "nothing to draw" in capsys.readouterr().err
    assert not any(out.iterdir())
    html = report_html([load_run(unscored)])
    assert "Nothing to show for this run" in html and "KahneBench&#x27;s scorer" in html


def test_page_shows_the_message_not_a_traceback(unscored, monkeypatch) -> None:
    monkeypatch.setenv("KBENCH_APP_ARGS", f"--no-samples {unscored}")
    state._cached_load.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("views/bias.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Nothing to show" in w.value and "scorer" in w.value for w in at.warning)
    assert not at.get("plotly_chart")
    at.switch_page("views/export.py").run()
    assert not at.exception
    assert any("nothing to export" in w.value for w in at.warning)
