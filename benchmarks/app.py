"""Page render times and figure payloads (target: re-render after a widget change <= 0.5 s; a
figure sent to the browser <= 2 MB), with Streamlit's AppTest, on the bundled sample runs and
on a 1M-row bias run, a 600k-row judged run and 100k replication tests. Prints the figures;
asserts nothing.

    python benchmarks/app.py [N_ROWS]

"first render" includes loading the runs and every cached computation; "re-render" is the
median of a few widget changes that a user makes while reading (another bias for the curves,
another model for the heatmap, a new HAS threshold), each a full script run.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kbench_app import state  # noqa: E402
from kbench_core.samples import (  # noqa: E402
    big_bias_trials,
    big_judged_samples,
    replication_tests,
)

PAGES = sorted(p.name for p in (ROOT / "views").glob("*.py"))


def _payload_sizes(at: AppTest) -> list[int]:
    """Bytes of each plotly figure's JSON as sent to the browser."""
    sizes = []
    for chart in at.get("plotly_chart"):
        spec = getattr(chart.proto, "spec", "") or getattr(chart.proto, "figure", None)
        sizes.append(len(spec.encode()) if isinstance(spec, str) else len(str(spec)))
    return sizes


def _timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def measure(page: str, args: str, changes: list[Callable[[AppTest], object]]) -> None:
    os.environ["KBENCH_APP_ARGS"] = args
    state._cached_load.clear()
    at = AppTest.from_file(str(ROOT / "views" / page), default_timeout=600)
    first = _timed(at.run)
    if at.exception:
        print(f"  {page}: exception {at.exception[0].value[:200]}")
        return
    again = [_timed(lambda c=change: c(at).run()) for change in changes
             for _ in range(1)]
    again += [_timed(at.run) for _ in range(2)]
    sizes = _payload_sizes(at)
    print(f"  {page:<16} first {first:6.2f} s   re-render median {statistics.median(again):.3f}"
          f" s (max {max(again):.3f})   figures {len(sizes)}, largest payload "
          f"{max(sizes, default=0) / 1024:,.0f} KB")


def bias_changes(at: AppTest) -> list[Callable[[AppTest], object]]:
    biases = at.selectbox(key="bias_curve_bias").options
    models = at.selectbox(key="bias_heat_model").options
    return [lambda a: a.selectbox(key="bias_curve_bias").set_value(biases[-1]),
            lambda a: a.selectbox(key="bias_heat_model").set_value(models[-1]),
            lambda a: a.slider(key="bias_threshold").set_value(0.2)]


def main() -> None:
    n_rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}")
    print("sample runs:")
    for page in PAGES:
        changes: list = []
        if page == "bias.py":
            os.environ["KBENCH_APP_ARGS"] = ""
            probe = AppTest.from_file(str(ROOT / "views" / page), default_timeout=600)
            probe.run()
            changes = bias_changes(probe)
        measure(page, "", changes)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big_bias.parquet"
        big_bias_trials(n_rows).to_parquet(path)
        print(f"{n_rows:,}-row bias run ({path.stat().st_size / 1024**2:.0f} MB Parquet):")
        os.environ["KBENCH_APP_ARGS"] = f"--no-samples {path}"
        state._cached_load.clear()
        probe = AppTest.from_file(str(ROOT / "views" / "bias.py"), default_timeout=600)
        probe.run()
        measure("bias.py", f"--no-samples {path}", bias_changes(probe))
        judged = Path(tmp) / "judged_600k.parquet"
        big_judged_samples(600_000).to_parquet(judged)
        models = [f"synthetic-agent-{i:02d}" for i in range(60)]
        tests = Path(tmp) / "replication_100k.parquet"
        replication_tests(models=models, n_studies=278).to_parquet(tests)
        print("600k judged rows (3 judges) and 100k replication tests (60 configurations); "
              "re-render = plain reruns:")
        for page, run in (("vuln.py", judged), ("agreement.py", judged),
                          ("replication.py", tests)):
            measure(page, f"--no-samples {run}", [])


if __name__ == "__main__":
    main()
