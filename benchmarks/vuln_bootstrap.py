"""Speed of the bootstrap of the vulnerability composites (``tiers(..., ci="bootstrap")``,
1000 replicates): the per-replicate loop it replaced beside the batched one.

The judged runs come from ``kbench_core.samples.big_judged_samples`` (3 judges); the app calls
``tiers`` one judge at a time, so each figure is one judge's third of the run. The old loop
is the faithful copy kept as the reference of ``tests/test_vuln_bootstrap_batched.py``; both
give the same tables (checked here too). Prints the figures; asserts nothing.

    python benchmarks/vuln_bootstrap.py [N_ROWS ...]      (default 20000 60000 100000)
"""

from __future__ import annotations

import importlib
import os
import platform
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from vuln import best_of  # benchmarks/vuln.py, its sibling

from kbench_core import vuln
from kbench_core.samples import big_judged_samples
from tests.test_vuln_bootstrap_batched import old_bootstrap

tiers_module = importlib.import_module("kbench_core.vuln.tiers")


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [20_000, 60_000, 100_000]
    print(f"python {platform.python_version()}, numpy {np.__version__}, pandas {pd.__version__}"
          f", {os.cpu_count()} cpus, load average {os.getloadavg()[0]:.1f}")
    batched = tiers_module._bootstrap
    for n_rows in sizes:
        judged = big_judged_samples(n_rows)
        one = judged[(judged["judge"] == "judge-one").to_numpy()].reset_index(drop=True)
        print(f"\n{len(judged):,} judged rows; one judge: {len(one):,} rows, "
              f"{one['sample'].nunique():,} samples")
        for label, options in (("uniform bins", {}), ("equal-mass bins", {"binning": "quantile"}),
                               ("by model x prompt type", {"by": ("model", "prompt_type")})):
            plain = best_of(lambda o=options, f=one: vuln.tiers(f, **o), 5)
            new = best_of(lambda o=options, f=one: vuln.tiers(f, ci="bootstrap", **o), 3)
            table = vuln.tiers(one, ci="bootstrap", **options)
            tiers_module._bootstrap = old_bootstrap
            try:
                old = best_of(lambda o=options, f=one: vuln.tiers(f, ci="bootstrap", **o), 1)
                same = vuln.tiers(one, ci="bootstrap", **options).equals(table)
            finally:
                tiers_module._bootstrap = batched
            print(f"  {label:<24} bootstrap (tiers call minus tiers without it): "
                  f"old {old - plain:6.3f} s, batched {new - plain:6.3f} s "
                  f"({(old - plain) / max(new - plain, 1e-9):4.1f}x); same table: {same}")


if __name__ == "__main__":
    main()
