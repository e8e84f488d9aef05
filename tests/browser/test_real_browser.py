"""The real released files, uploaded as a user would in headless Chromium: each opens its
family page, which renders with no exception and shows the published numbers; an unscored
KahneBench results file shows what to do instead of empty charts."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from tests.browser.conftest import AppServer, screenshot, wait_for_app

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "sample_data" / "real"
EXAMPLE = ROOT.parent / "shared" / "formats" / "kahnebench" / "results_example.json"


def _reports_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted((REAL / "kahnebench").iterdir()):
            archive.write(path, f"results/{path.name}")
    return buffer.getvalue()


def _unscored() -> bytes:
    body = json.loads(EXAMPLE.read_text())
    for record in body["results"]:
        record["bias_score"] = None
        record.pop("is_biased", None)
    return json.dumps(body).encode()


UPLOADS = [
    ("kahnebench_reports.zip", "application/zip", _reports_zip, "Cognitive biases",
     "Models, as the reports summarise them"),
    ("simple_results.json", "application/json",
     lambda: (REAL / "humanstudy-bench" / "simple_results.json").read_bytes(), "Replication",
     "Published results"),
    ("simple_studies.csv", "text/csv",
     lambda: (REAL / "humanstudy-bench" / "simple_studies.csv").read_bytes(), "Replication",
     "Published results"),
    ("simple_findings.csv", "text/csv",
     lambda: (REAL / "humanstudy-bench" / "simple_findings.csv").read_bytes(), "Replication",
     "Published finding scores"),
]


@pytest.fixture(scope="module")
def empty_server():
    server = AppServer("--no-samples")
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.parametrize(("name", "mime", "data", "title", "shows"), UPLOADS,
                         ids=[u[0] for u in UPLOADS])
def test_real_file_upload_opens_its_page(empty_server, browser, name, mime, data, title,
                                         shows) -> None:
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(empty_server.url)
    wait_for_app(page)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
        {"name": name, "mimeType": mime, "buffer": data()})
    page.locator("h1", has_text=title).wait_for(timeout=60_000)
    wait_for_app(page, timeout=120_000)  # asserts no exception is shown
    assert page.get_by_text(shows).first.is_visible()
    screenshot(page, f"real_upload_{Path(name).stem}")
    assert errors == []
    page.context.close()


def test_unscored_results_show_what_to_do(empty_server, browser) -> None:
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.goto(empty_server.url)
    wait_for_app(page)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
        {"name": "unscored.json", "mimeType": "application/json", "buffer": _unscored()})
    page.locator("h1", has_text="Cognitive biases").wait_for(timeout=60_000)
    wait_for_app(page)
    # the page's own warning (the same advice also sits in the folded load warnings)
    assert any(text.is_visible() for text in page.get_by_text("KahneBench's scorer").all())
    assert page.locator('[data-testid="stPlotlyChart"]').count() == 0
    screenshot(page, "real_upload_unscored")
    page.context.close()


def test_one_fingerprint_report_opens_the_reports_view(empty_server, browser) -> None:
    # what a KahneBench user has after one run: a single fingerprint_<model>.json, not a zip
    path = REAL / "kahnebench" / "fingerprint_gpt52.json"
    model = json.loads(path.read_text(encoding="utf-8"))["model_id"]
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(empty_server.url)
    wait_for_app(page)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
        {"name": path.name, "mimeType": "application/json", "buffer": path.read_bytes()})
    page.locator("h1", has_text="Cognitive biases").wait_for(timeout=60_000)
    wait_for_app(page, timeout=120_000)  # asserts no exception is shown
    # the reports view, down to its last section, not the trial view
    assert page.get_by_text("These are KahneBench fingerprint reports").first.is_visible()
    for heading in ("Models, as the reports summarise them", "Fingerprint",
                    "Human alignment, mitigation and calibration"):
        assert page.get_by_role("heading", name=heading, exact=True).count() >= 1, heading
    assert page.get_by_text(model).count() >= 1
    assert page.locator('[data-testid="stPlotlyChart"]').count() >= 1
    screenshot(page, "real_upload_one_fingerprint_report")
    assert errors == []
    page.context.close()
