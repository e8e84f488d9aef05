"""Re-render time of every family page after each kind of widget change, on the big runs
(target: <= 0.3 s; first render <= 2 s), with Streamlit's AppTest in one process. Prints the
figures; asserts nothing.

    python benchmarks/widgets.py [PAGE ...]

Big runs: 1M bias rows, 600k judged rows (3 judges), 100k replication tests (60
configurations), made by ``kbench_core.samples`` into a temporary folder. "first (cold)" is the
page's first render in a fresh process (imports and the load included); "first (warm)" is a
new session of the same server opening the page (the run already loaded, as when a second
user arrives); each change is one widget changed and the full rerun it causes.
"""

from __future__ import annotations

import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kbench_core.samples import (  # noqa: E402
    big_bias_trials,
    big_judged_samples,
    replication_tests,
)

Change = tuple[str, Callable[[AppTest], object]]


def _second(key: str, kind: str) -> Callable[[AppTest], object]:
    return lambda at: getattr(at, kind)(key=key).set_value(
        getattr(at, kind)(key=key).options[1])


CHANGES: dict[str, list[Change]] = {
    "vuln.py": [
        ("number of bins", lambda at: at.slider(key="vuln_bins").set_value(12)),
        ("equal-mass bins", lambda at: at.radio(key="vuln_binning").set_value("quantile")),
        ("a SUI weight", lambda at: at.slider(key="vuln_w_tdr").set_value(0.5)),
        ("partial credit", lambda at: at.slider(key="vuln_partial").set_value(0.5)),
        ("judge", _second("vuln_judge", "selectbox")),
        ("split by prompt type", lambda at: at.toggle(key="vuln_split").set_value(True)),
        ("reliability prompt type", _second("vuln_rel_prompt", "selectbox")),
    ],
    "bias.py": [
        ("curve bias", _second("bias_curve_bias", "selectbox")),
        ("curve y axis", lambda at: at.radio(key="bias_curve_y").set_value("mean")),
        ("heatmap model", _second("bias_heat_model", "selectbox")),
        ("HAS threshold", lambda at: at.slider(key="bias_threshold").set_value(0.2)),
        ("cap", lambda at: at.toggle(key="bias_cap").set_value(False)),
        ("models", lambda at: at.multiselect(key="bias_models").set_value(
            at.multiselect(key="bias_models").options[:3])),
    ],
    "replication.py": [
        ("colour by", _second("rep_color", "radio")),
        ("ECS weighting", lambda at: at.radio(key="rep_weighting").set_value("equal")),
        ("models", lambda at: at.multiselect(key="rep_models").set_value(
            at.multiselect(key="rep_models").options[:5])),
    ],
    "agreement.py": [
        ("label", lambda at: at.selectbox(key="agr_label").set_value("type_match")),
        ("another label (a score)", lambda at: at.selectbox(key="agr_label").set_value("rcir")),
    ],
}


def _timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def measure(page: str, run: Path) -> None:
    os.environ["KBENCH_APP_ARGS"] = f"--no-samples {run}"
    path = str(ROOT / "views" / page)
    at = AppTest.from_file(path, default_timeout=600)
    cold = _timed(at.run)
    warm_session = AppTest.from_file(path, default_timeout=600)
    warm = _timed(warm_session.run)
    print(f"{page}: first (cold) {cold:.2f} s, first (warm) {warm:.2f} s")
    for label, change in CHANGES[page]:
        try:
            seconds = _timed(lambda c=change: c(at).run())
        except Exception as exc:  # a widget this run does not offer
            print(f"  {label:<28} skipped ({type(exc).__name__})")
            continue
        print(f"  {label:<28} {seconds:.3f} s" + (" (exception)" if at.exception else ""))
    reruns = sorted(_timed(at.run) for _ in range(3))
    print(f"  {'plain rerun (median)':<28} {reruns[1]:.3f} s")


def main() -> None:
    pages = sys.argv[1:] or list(CHANGES)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        runs = {"bias.py": Path(tmp) / "bias_1m.parquet",
                "vuln.py": Path(tmp) / "judged_600k.parquet",
                "agreement.py": Path(tmp) / "judged_600k.parquet",
                "replication.py": Path(tmp) / "replication_100k.parquet"}
        big_bias_trials(1_000_000).to_parquet(runs["bias.py"])
        big_judged_samples(600_000).to_parquet(runs["vuln.py"])
        models = [f"synthetic-agent-{i:02d}" for i in range(60)]
        replication_tests(models=models, n_studies=278).to_parquet(runs["replication.py"])
        for page in pages:
            measure(page, runs[page])


if __name__ == "__main__":
    main()
