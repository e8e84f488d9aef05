"""Every page in the browser on big runs (issue 10): a 1M-row bias run, a 600k-row judged run
(3 judges) and a 100k-test replication run given on the command line. Each page must render
without an exception element and draw its charts."""

from __future__ import annotations

import pytest

from kbench_core import samples
from tests.browser.conftest import AppServer, screenshot, wait_for_app

pytestmark = pytest.mark.browser

PAGES = {"": "Runs", "biases": "Cognitive biases", "replication": "Replication",
         "vulnerability": "Vulnerability detection", "agreement": "Judge agreement",
         "export": "Export"}
CHARTS = {"biases": ("bias_curves_chart", "bias_heatmap_chart", "bias_has_chart",
                     "bias_cas_chart"),
          "replication": ("rep_scatter_chart",),
          "vulnerability": ("vuln_reliability_chart",),
          "agreement": ("agr_heatmap_chart",)}


@pytest.fixture(scope="module")
def big_app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("big")
    paths = [folder / "bias_1m.parquet", folder / "judged_600k.parquet",
             folder / "replication_100k.parquet"]
    samples.big_bias_trials(1_000_000).to_parquet(paths[0])
    samples.big_judged_samples(600_000).to_parquet(paths[1])
    models = [f"synthetic-agent-{i:02d}" for i in range(60)]
    samples.replication_tests(models=models, n_studies=278).to_parquet(paths[2])
    server = AppServer("--no-samples " + " ".join(map(str, paths)))
    yield server
    server.stop()


@pytest.mark.parametrize("url_path,title", list(PAGES.items()))
def test_every_page_renders_a_million_rows(big_app, page, url_path: str, title: str) -> None:
    page.goto(f"{big_app.url}/{url_path}")
    wait_for_app(page, timeout=120_000)
    assert page.locator("h1", has_text=title).count() == 1
    for key in CHARTS.get(url_path, ()):
        chart = page.locator(f'.st-key-{key} [data-testid="stPlotlyChart"] .main-svg')
        chart.first.wait_for(state="attached", timeout=120_000)
    screenshot(page, f"scale_{url_path or 'runs'}")
    assert page.js_errors == []


def test_another_judge_of_the_big_judged_run(big_app, page) -> None:
    """The Vulnerability page works the other judges out ahead in a background thread of the
    real server (kbench_app.prefetch): choosing one shows its leaderboard, and the server
    logs no error from that thread."""
    page.goto(f"{big_app.url}/vulnerability")
    wait_for_app(page, timeout=120_000)
    page.locator(".st-key-vuln_judge").click()
    page.get_by_role("option", name="judge-two").click()
    page.get_by_text("Judge judge-two ·").first.wait_for(timeout=60_000)
    wait_for_app(page, timeout=120_000)
    screenshot(page, "scale_vulnerability_judge_two")
    assert page.js_errors == []
    log = big_app.log.read_text()
    assert "Traceback" not in log and "Error" not in log, log[-3000:]
