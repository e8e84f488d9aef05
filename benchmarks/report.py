"""The HTML report of every real file in headless Chromium: size, plots, time to the first
screen, to the load event, and to a plot far down after scrolling (issue 37 item 11; target:
first screen <= 3 s). Prints the figures; asserts nothing.

    python benchmarks/report.py [--html REPORT.html] [--repeat 3] [FILES ...]

Without ``--html`` the report is built (and its build time printed) from FILES, by default
every real file that loads (``../shared/data/real``: the KahneBench folder and each of its
reports, the three HumanStudy-Bench files) and the bundled ``sample_data/*.csv``.

Measured from navigation start, in Chromium (``/usr/bin/chromium``, flags --headless
--no-sandbox --disable-gpu --disable-background-networking), viewport 1280 × 800:

* ``text painted``: the first contentful paint (title and contents on screen);
* ``first screen``: every plot whose box meets the first viewport has drawn its SVG (or there
  is none) and the main thread has answered (a timer ran after it), i.e. a reader can read
  and scroll;
* ``load``: the load event's end;
* ``first plot``, ``far plot``: after the first screen, the page scrolled to its first plot,
  then to its last (every folded section opened), the time until that plot has drawn.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
REAL = ROOT.parent / "shared" / "data" / "real"

# Polls from the first script run: when every plot in the first viewport has an SVG, notes
# the time (a timer only fires when the main thread is free: the page is usable then).
WATCH = r"""
window.__kb = {firstScreen: null};
const poll = () => {
  const plots = [...document.querySelectorAll('.plotly-graph-div')]
    .filter(d => { const r = d.getBoundingClientRect();
                   return r.bottom > 0 && r.top < innerHeight; });
  if (document.readyState !== 'loading' && plots.every(d => d.querySelector('.main-svg'))) {
    window.__kb.firstScreen = performance.now(); return;
  }
  setTimeout(poll, 10);
};
setTimeout(poll, 0);
"""


def default_files() -> list[str]:
    files = []
    if (REAL / "kahnebench").is_dir():
        files.append(str(REAL / "kahnebench"))
        files += sorted(map(str, (REAL / "kahnebench").glob("*.json")))
    hsb = REAL / "humanstudy-bench"
    files += [str(hsb / n) for n in ("simple_results.json", "simple_findings.csv",
                                     "simple_studies.csv") if (hsb / n).exists()]
    files += sorted(map(str, (ROOT / "sample_data").glob("*.csv")))
    return files


def build(files: list[str], out: Path) -> float:
    from kbench_core.io import load_run
    from kbench_core.report import report_html

    runs = [load_run(f) for f in files]
    start = time.perf_counter()
    text = report_html(runs)
    took = time.perf_counter() - start
    out.write_text(text, encoding="utf-8")
    return took


def measure(html: Path) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.add_init_script(WATCH)
        page.goto(html.as_uri(), wait_until="load", timeout=300_000)
        page.wait_for_function("window.__kb.firstScreen !== null", timeout=300_000)
        nav = page.evaluate("performance.getEntriesByType('navigation')[0].toJSON()")
        paint = page.evaluate("performance.getEntriesByName('first-contentful-paint')"
                              ".map(e => e.startTime)")
        out = {"text_painted_s": paint[0] / 1000 if paint else float("nan"),
               "first_screen_s": page.evaluate("window.__kb.firstScreen") / 1000,
               "load_s": nav["loadEventEnd"] / 1000,
               "height_px": page.evaluate("document.documentElement.scrollHeight"),
               "plots": page.locator(".plotly-graph-div").count(),
               "drawn_at_load": page.evaluate(
                   "[...document.querySelectorAll('.plotly-graph-div')]"
                   ".filter(d => d.querySelector('.main-svg')).length")}
        # the first plot of the page, scrolled to once the first screen is there
        start = page.evaluate("""() => {
            const d = document.querySelector('.plotly-graph-div');
            d.scrollIntoView(); window.__kbFirst = d; return performance.now(); }""")
        page.wait_for_function("window.__kbFirst.querySelector('.main-svg') !== null",
                               timeout=300_000)
        out["first_plot_s"] = (page.evaluate("performance.now()") - start) / 1000
        # the last plot of the page: open what folds it, scroll to it, wait for its SVG
        start = page.evaluate("""() => {
            const d = [...document.querySelectorAll('.plotly-graph-div')].pop();
            for (let e = d; e; e = e.parentElement) if (e.tagName === 'DETAILS') e.open = true;
            d.scrollIntoView(); window.__kbLast = d; return performance.now(); }""")
        page.wait_for_function("window.__kbLast.querySelector('.main-svg') !== null",
                               timeout=300_000)
        out["far_plot_s"] = (page.evaluate("performance.now()") - start) / 1000
        out["height_after_px"] = page.evaluate("document.documentElement.scrollHeight")
        browser.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="*")
    parser.add_argument("--html", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    html = args.html
    if html is None:
        html = Path("/tmp/kbench-report-bench.html")
        files = args.files or default_files()
        took = build(files, html)
        print(f"built from {len(files)} files in {took:.1f} s")
    print(f"{html}: {html.stat().st_size / 1024**2:.1f} MB, load average "
          f"{os.getloadavg()[0]:.1f}")
    runs = [measure(html) for _ in range(args.repeat)]
    for key in runs[0]:
        values = [r[key] for r in runs]
        shown = ", ".join(f"{v:.2f}" if isinstance(v, float) else f"{v:,}" for v in values)
        print(f"  {key}: median {statistics.median(values):,.2f} ({shown})")


if __name__ == "__main__":
    main()
