"""Many models (issue 29, item 5): ``compare_models`` over every pair and the bias page's first
render with 100, 200 and 600 models (2 biases × control/treatment per model, 0/1 scores,
errors clustered by bias). Prints the figures; asserts nothing.

    python benchmarks/many_models.py [--root CHECKOUT] [--skip-reference] [--skip-page]

``--root`` runs another checkout's code (e.g. ``/work/main`` for the "before" figures; its
page is timed the same way); the per-pair reference (``tests/test_many_models.py``, the loop
``compare_models`` used before) is timed beside the vectorised path in this checkout.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent


def bias_run(n_models: int, seed: int = 0) -> pd.DataFrame:
    """The issue's run: each model answers 2 biases, control and treatment, scores 0/1."""
    rng = np.random.default_rng(seed)
    rows = []
    for m in range(n_models):
        for b in ("anchoring_effect", "gain_loss_framing"):
            rows.append((f"model-{m:03d}", b, "control", "", "social",
                         float(rng.integers(0, 2))))
            rows.append((f"model-{m:03d}", b, "treatment", "weak", "social",
                         float(rng.integers(0, 2))))
    return pd.DataFrame(rows, columns=["model", "bias", "condition", "intensity", "domain",
                                       "score"])


def _timed(action) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default=str(ROOT))
    parser.add_argument("--skip-reference", action="store_true")
    parser.add_argument("--skip-page", action="store_true")
    parser.add_argument("--sizes", default="100,200,600")
    args = parser.parse_args()
    root = Path(args.root).resolve()
    sys.path.insert(0, str(root))
    os.chdir(root)
    from kbench_core import compare
    from kbench_core.io import load_run

    print(f"code: {root}  (load average {os.getloadavg()[0]:.1f})")
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = Path(tmp) / f"many{n}.csv"
            bias_run(n).to_csv(path, index=False)
            frame = load_run(path).frame
            fast = _timed(lambda f=frame: compare.compare_models(f, "score", cluster="bias"))
            line = f"{n:4d} models ({n * (n - 1) // 2:,} pairs): compare_models {fast:6.2f} s"
            if not args.skip_reference and (ROOT / "tests" / "test_many_models.py").exists() \
                    and n <= 200:
                sys.path.insert(0, str(ROOT))
                from tests.test_many_models import compare_models_per_pair
                ref = _timed(lambda f=frame: compare_models_per_pair(f, "score",
                                                                     cluster="bias"))
                line += f"   per-pair reference {ref:6.2f} s"
            print(line, flush=True)
        if args.skip_page:
            return
        from streamlit.testing.v1 import AppTest

        from kbench_app import state
        # Warm-up on a 2-model run: the page's imports and Streamlit's start-up (about 3 s
        # here) are paid once per process, not per render
        warm = Path(tmp) / "warm.csv"
        bias_run(2).to_csv(warm, index=False)
        os.environ["KBENCH_APP_ARGS"] = f"--no-samples {warm}"
        start = time.perf_counter()
        AppTest.from_file(str(root / "views" / "bias.py"), default_timeout=1200).run()
        print(f"warm-up render (imports, Streamlit start-up): {time.perf_counter() - start:.2f} s")
        for n in sizes:
            path = Path(tmp) / f"many{n}.csv"
            os.environ["KBENCH_APP_ARGS"] = f"--no-samples {path}"
            state._cached_load.clear()
            at = AppTest.from_file(str(root / "views" / "bias.py"), default_timeout=1200)
            first = _timed(at.run)
            error = f"  EXCEPTION {at.exception[0].value[:120]}" if at.exception else ""
            chosen = len(at.multiselect(key="bias_models").value) if not at.exception else "?"
            again = _timed(at.run)
            print(f"{n:4d} models: bias page first render {first:6.2f} s (load included), "
                  f"rerun {again:5.2f} s, {chosen} models selected{error}", flush=True)
            if at.exception or n != max(sizes) \
                    or "def model_picker" not in (root / "kbench_app" / "kit.py").read_text():
                continue
            picker = at.multiselect(key="bias_models")
            every = _timed(lambda p=picker: p.set_value(list(p.options)).run())
            mode = _timed(lambda a=at: a.radio(key="bias_cmp_mode").set_value("Every pair")
                          .run())
            pairs = _timed(lambda a=at: a.toggle(key="bias_cmp_all").set_value(True).run())
            error = f"  EXCEPTION {at.exception[0].value[:120]}" if at.exception else ""
            print(f"{n:4d} models, all selected by hand: rerun {every:6.2f} s; 'Every pair' "
                  f"{mode:5.2f} s (not computed yet); on request {pairs:6.2f} s{error}",
                  flush=True)


if __name__ == "__main__":
    main()
