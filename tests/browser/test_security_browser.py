"""Uploaded text never runs or renders as markup (issue 10): a run whose model name, bias,
prompts and responses are HTML/JavaScript/Markdown payloads shows them literally."""

from __future__ import annotations

import csv
import io
import re

import pytest

from tests.browser.conftest import screenshot, wait_for_app
from tests.conftest import ROOT

pytestmark = pytest.mark.browser

MODEL = '<img src=x onerror="window.__xss=1">'
RESPONSE = "<script>window.__xss=2</script> **bold** [link](javascript:window.__xss=3)"


def _payload_run() -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["model", "bias", "condition", "intensity", "domain", "score", "response",
                     "prompt"])
    for condition, intensity, score in (("control", "", 0), ("treatment", "weak", 1),
                                        ("treatment", "strong", 1)):
        writer.writerow([MODEL, "anchoring_effect", condition, intensity, "social", score,
                         RESPONSE, "<b>prompt</b>"])
    return out.getvalue().encode()


RUN_NAME = "xss_<img src=y onerror=window.__xss=4>"


def test_payloads_show_as_text_and_never_run(app_server, page) -> None:
    page.goto(app_server.url)
    wait_for_app(page)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
        {"name": f"{RUN_NAME}.csv", "mimeType": "text/csv", "buffer": _payload_run()})
    # one new run: its family's page opens on it (same session)
    page.locator("h1", has_text="Cognitive biases").wait_for(timeout=30_000)
    wait_for_app(page)
    runs = page.locator(".st-key-bias_runs").inner_text()
    assert RUN_NAME in runs, runs  # the run's name shows literally, markup and all
    page.locator(".st-key-bias_models span[data-tag]").first.wait_for()
    wait_for_app(page)
    chips = page.locator(".st-key-bias_models span[data-tag] > span[title]").all_inner_texts()
    assert MODEL in chips, chips
    page.locator(".st-key-bias_drill_search input").fill("script")
    page.keyboard.press("Enter")
    wait_for_app(page)
    screenshot(page, "security_payloads")
    assert page.evaluate("() => window.__xss") is None
    assert page.locator("img[src='x'], img[src='y']").count() == 0
    assert page.locator("a[href^='javascript']").count() == 0
    assert page.js_errors == []


# ------------------------------------------------------------------ figure labels (issue 19)

LINK_MODEL = '<a href="https://evil.example/verify">Click to verify</a>'
STYLED_MODEL = "<b style='font-size:80px'>TAKEOVER</b>"
BREAK_MODEL = "two<br>lines"
SVG_LINKS = """() => [...document.querySelectorAll('svg.main-svg a, svg a[href], svg a')]
    .filter(a => !a.closest('.modebar')).length"""
EVIL_HREFS = """(scope) => [...document.querySelectorAll(
        scope + ' [href], ' + scope + ' [*|href]')]
    .filter(e => {
        const href = e.getAttribute('href') || e.getAttribute('xlink:href') || '';
        try { return new URL(href, location.href).hostname.includes('evil'); }
        catch (err) { return false; }
    }).length"""


def _hostile_bias_csv(path) -> None:
    from kbench_core import samples

    samples.bias_trials(models=[LINK_MODEL, STYLED_MODEL, BREAK_MODEL], n_trials=4).to_csv(
        path, index=False)


def _assert_no_markup_from_data(page, where: str, scope: str = ".js-plotly-plot") -> None:
    assert page.evaluate(SVG_LINKS) == 0, f"{where}: an <a> element inside a figure"
    assert page.evaluate(EVIL_HREFS, scope) == 0, f"{where}: a link to the data's URL"
    big = page.evaluate("""() => [...document.querySelectorAll('svg [style]')]
        .filter(e => (e.getAttribute('style') || '').includes('80px')).length""")
    assert big == 0, f"{where}: a style from data took over a figure"


def test_no_link_from_data_in_any_figure_app_report_or_svg(browser, tmp_path) -> None:
    from tests.browser.conftest import AppServer

    run = tmp_path / "www.evil.example.csv"  # a run name Markdown would autolink
    _hostile_bias_csv(run)
    server = AppServer(f"--no-samples {run}")
    try:
        page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(server.url)
        wait_for_app(page)
        page.locator('[data-testid="stExpander"] summary').first.wait_for()
        assert "www.evil.example" in page.locator('[data-testid="stExpander"] summary')\
            .first.inner_text()
        _assert_no_markup_from_data(page, "Runs page", scope="[data-testid=stMain]")
        page.goto(f"{server.url}/biases")
        wait_for_app(page)
        charts = page.locator('[data-testid="stPlotlyChart"]')
        charts.first.locator(".main-svg").first.wait_for(state="attached", timeout=30_000)
        for i in range(charts.count()):
            charts.nth(i).scroll_into_view_if_needed()
            charts.nth(i).locator(".main-svg").first.wait_for(state="attached",
                                                              timeout=30_000)
        assert charts.count() >= 4
        texts = " ".join(page.locator("svg.main-svg text").all_text_contents())
        assert "Click to verify</a>" in texts  # shown literally, markup and all
        assert "TAKEOVER</b>" in texts
        _assert_no_markup_from_data(page, "app")
        # hover a point: the hover label shows the name as text too
        screenshot(page, "security_figure_labels")
        assert errors == []
        page.context.close()
    finally:
        server.stop()

    from kbench_core.export import FigureExporter
    from kbench_core.families import items_for
    from kbench_core.io import load_run
    from kbench_core.report import report_html

    loaded = load_run(run)
    report = tmp_path / "report.html"
    report.write_text(report_html([loaded]), encoding="utf-8")
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.goto(report.as_uri())
    page.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=30_000)
    # figures are drawn as they scroll into view: draw them all, as printing does
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 4")
    assert "Click to verify</a>" in " ".join(page.locator("svg text").all_text_contents())
    _assert_no_markup_from_data(page, "report")
    screenshot(page, "security_report_labels")

    figures = [obj for item in items_for("bias") for _, obj in item.objects(loaded.frame)
               if item.what == "figure"]
    with FigureExporter() as exporter:
        svgs = [exporter.to_bytes(figure, "svg").decode() for figure in figures]
    assert not any("<a " in svg or "<a>" in svg for svg in svgs)
    # the name is drawn as text (long tick labels are cut in the middle, so look for its start)
    assert any(re.search(r"(&lt;|&#60;)a href", svg) for svg in svgs)
    svg = next(svg for svg in svgs if re.search(r"(&lt;|&#60;)a href", svg))
    (tmp_path / "figure.svg").write_text(svg)
    page.goto((tmp_path / "figure.svg").as_uri())
    assert page.evaluate("() => document.querySelectorAll('a').length") == 0
    page.context.close()


# ------------------------------------------------------------------ autolinks (issue 19, gap 7)

JUDGE_URL = "https://evil.example/judge-one"
JUDGE_MAIL = "judge@evil.example"
RUN_URL = "www.evil-run.example"
MAIN_LINKS = """() => [...document.querySelectorAll('[data-testid=stMain] a')]
    .filter(a => (a.textContent + ' ' + (a.getAttribute('href') || '')).includes('evil'))
    .map(a => a.outerHTML)"""
IN_MARKDOWN = """(name) => [...document.querySelectorAll(
        '[data-testid=stMain] [data-testid=stMarkdownContainer], '
        + '[data-testid=stMain] [data-testid=stCaptionContainer]')]
    .some(e => e.innerText.includes(name))"""


def test_judge_and_run_names_holding_a_url_are_never_links(browser, tmp_path) -> None:
    from tests.browser.conftest import AppServer

    text = (ROOT / "sample_data" / "judged.csv").read_text()
    text = text.replace("judge-one", JUDGE_URL).replace("judge-two", JUDGE_MAIL)
    run = tmp_path / f"{RUN_URL}.csv"
    run.write_bytes(b"\xef\xbb\xbf" + text.encode())  # a BOM: the run has a load warning
    server = AppServer(f"--no-samples {run}")
    try:
        page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        for path, shown in (("", RUN_URL), ("vulnerability", JUDGE_URL),
                            ("agreement", JUDGE_MAIL)):
            page.goto(f"{server.url}/{path}")
            wait_for_app(page)
            for summary in page.locator('[data-testid="stExpander"] summary').all():
                if "load warning" in summary.inner_text():
                    summary.click()  # the load warnings name the run in Markdown
            wait_for_app(page)
            # the name is shown, as text, in a Markdown element (a caption, label or message)
            for name in (shown, RUN_URL) if path == "vulnerability" else (shown,):
                page.wait_for_function(IN_MARKDOWN, arg=name, timeout=30_000)
            assert page.evaluate(MAIN_LINKS) == [], path
            assert page.evaluate(EVIL_HREFS, "[data-testid=stMain]") == 0, path
            screenshot(page, f"security_autolinks_{path or 'runs'}")
        assert errors == []
        page.context.close()
    finally:
        server.stop()
