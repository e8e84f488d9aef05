"""The HTML report in Chromium (issue 37 item 11): the first screen shows with nothing drawn
that is not near it, a figure far down is drawn once it is scrolled to, a link of the contents
opens the folded section it leads into, and every figure can be drawn without an error."""

from __future__ import annotations

from kbench_core.io import load_run
from kbench_core.report import report_html
from tests.browser.conftest import ARTIFACTS
from tests.conftest import ROOT

DRAWN = "() => document.querySelectorAll('.kb-plot.js-plotly-plot').length"


def test_report_draws_figures_as_they_scroll_into_view(browser, tmp_path) -> None:
    runs = [load_run(path) for path in sorted((ROOT / "sample_data").glob("*.csv"))]
    real = ROOT / "sample_data" / "real" / "kahnebench"
    if real.is_dir():
        runs.append(load_run(real))
    report = tmp_path / "report.html"
    report.write_text(report_html(runs), encoding="utf-8")
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(report.as_uri(), wait_until="load")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report_first_screen.png"))
    total = page.locator(".kb-plot").count()
    assert total >= 40
    assert page.get_by_role("heading", name="Contents").is_visible()
    page.wait_for_timeout(500)
    assert page.evaluate(DRAWN) <= 3  # at most what is near the first screen
    # the first run's headline figure, scrolled to, is drawn
    first = page.locator(".kb-plot").first
    first.scroll_into_view_if_needed()
    first.locator(".main-svg").first.wait_for(timeout=30_000)
    # the contents' link to an item of the last run opens its folded section and draws it
    page.evaluate("window.scrollTo(0, 0)")
    last_run = len(runs) - 1
    links = page.locator(f"nav a[href^='#run-{last_run}-']")
    target = links.nth(links.count() - 1).get_attribute("href")[1:]
    section = page.locator(f"#run-{last_run}-more")
    assert section.count() == 1 and not section.evaluate("d => d.open")
    links.nth(links.count() - 1).click()
    assert section.evaluate("d => d.open")
    assert page.locator(f"#{target}").is_visible()
    # the far end of the page: every section open, the last figure drawn once scrolled to
    page.get_by_role("button", name="open every section").click()
    last = page.locator(".kb-plot").last
    last.scroll_into_view_if_needed()
    last.locator(".main-svg").first.wait_for(timeout=30_000)
    page.screenshot(path=str(ARTIFACTS / "report_far_figure.png"))
    assert page.evaluate(DRAWN) < total  # still not everything: only what was passed
    # every figure draws without an error (as printing does)
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    page.wait_for_function("(total) => document.querySelectorAll('.kb-plot.js-plotly-plot')"
                           ".length >= total", arg=total, timeout=120_000)
    assert errors == []
    context.close()
