"""The majority consensus of the LLM judges (``kbench_core.agreement.consensus``, the
vulnerability page's default "majority" judge) on a big judged run, before and after its
fast path (``benchmarks/README.md``, "Sixth session: majority consensus").

The frame is the one the app works on: :func:`kbench_core.samples.big_judged_samples`
(3 detectors × 3 prompt types × 3 judges) written to Parquet and read back by the loader
(:func:`kbench_core.io.load_run`: validated and typed, keys and type_match categorical).
"Before" is the implementation the fast path replaced, kept verbatim as the reference of
``tests/test_consensus_speedpath.py``. Prints the best and the median of five calls of
each, under each option set, checks the two frames are identical, and with ``--profile``
prints the functions the new consensus spends its time in. Asserts nothing else.

    python benchmarks/consensus.py [N_ROWS] [--profile]      (default 600000)
"""

from __future__ import annotations

import cProfile
import os
import platform
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402

from kbench_core import agreement  # noqa: E402
from kbench_core.io import load_run  # noqa: E402
from kbench_core.samples import big_judged_samples  # noqa: E402
from tests.test_consensus_speedpath import reference  # noqa: E402 (the code before)


def timed(fn: Callable[[], Any], repeat: int = 5) -> tuple[float, float]:
    fn()  # warm: numpy's and pandas' first-call costs are not the consensus's
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    n_rows = int(float(args[0].lower().replace("k", "e3"))) if args else 600_000
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "judged.parquet"
        big_judged_samples(n_rows).to_parquet(path)
        frame = load_run(path, kind="judged").frame
    print(f"{len(frame):,} judged rows, {frame['judge'].nunique()} judges, "
          f"{frame.shape[1]} columns; python {platform.python_version()}, pandas "
          f"{pd.__version__}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    judges = agreement.judges(frame)
    cases: list[tuple[str, dict[str, Any]]] = [
        ("default (2 of 3)", {}), ("failed_as='not_found'", {"failed_as": "not_found"}),
        ("min_votes=1", {"min_votes": 1}), (f"judges={judges[:2]}", {"judges": judges[:2]})]
    print(f"  {'consensus':<40} {'before best/median':>19} {'after best/median':>19}")
    for name, kwargs in cases:
        before = timed(lambda kw=kwargs: reference(frame, **kw))
        after = timed(lambda kw=kwargs: agreement.consensus(frame, **kw))
        old, new = reference(frame, **kwargs), agreement.consensus(frame, **kwargs)
        pd.testing.assert_frame_equal(new, old, check_exact=True)
        same = "identical" if new.attrs == old.attrs else "ATTRS DIFFER"
        print(f"  {name:<40} {before[0]:8.3f} / {before[1]:.3f} s {after[0]:8.3f} / "
              f"{after[1]:.3f} s  x{before[1] / after[1]:.1f}, {same}")
    if "--profile" in sys.argv:
        profile = cProfile.Profile()
        profile.runcall(agreement.consensus, frame)
        pstats.Stats(profile).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
