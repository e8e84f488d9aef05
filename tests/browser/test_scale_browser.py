"""Every page in the browser on big runs (issue 10): a 1M-row bias run given on the command
line. Each page must render without an exception element and draw its charts."""

from __future__ import annotations

import pytest

from kbench_core import samples
from tests.browser.conftest import AppServer, screenshot, wait_for_app

pytestmark = pytest.mark.browser

PAGES = {"": "Runs", "biases": "Cognitive biases", "export": "Export"}


@pytest.fixture(scope="module")
def big_app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("big")
    path = folder / "bias_1m.parquet"
    samples.big_bias_trials(1_000_000).to_parquet(path)
    server = AppServer(f"--no-samples {path}")
    yield server
    server.stop()


@pytest.mark.parametrize("url_path,title", list(PAGES.items()))
def test_every_page_renders_a_million_rows(big_app, page, url_path: str, title: str) -> None:
    page.goto(f"{big_app.url}/{url_path}")
    wait_for_app(page, timeout=120_000)
    assert page.locator("h1", has_text=title).count() == 1
    if url_path == "biases":
        for key in ("bias_curves_chart", "bias_heatmap_chart", "bias_has_chart",
                    "bias_cas_chart"):
            chart = page.locator(f'.st-key-{key} [data-testid="stPlotlyChart"] .main-svg')
            chart.first.wait_for(state="attached", timeout=60_000)
    screenshot(page, f"scale_{url_path or 'runs'}")
    assert page.js_errors == []
