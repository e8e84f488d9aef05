"""Judge-audit speed on a 100k-item judged run (3 judges, 300k rows): drawing a sample, the
work of the page after a label (the store read back, the progress, the next item's evidence,
the tables), and the corrected table. Prints the figures; asserts nothing.

    python benchmarks/audit.py [N_ITEMS]

Targets (issue 40): drawing a sample ≤ 0.5 s; the next item ≤ 0.3 s after a label; the
corrected table ≤ 1 s.
"""

from __future__ import annotations

import os
import platform
import sys
import tempfile

import numpy as np
import pandas as pd
from _timing import best_of  # benchmarks/_timing.py

from kbench_core import audit
from kbench_core.audit.store import LabelStore
from kbench_core.samples import big_judged_samples


def main(n_items: int = 100_000) -> None:
    frame = big_judged_samples(3 * n_items, seed=0)
    for column in ("sample", "model", "judge", "prompt_type"):
        frame[column] = frame[column].astype("category")  # as the loader gives them
    items = frame.drop_duplicates(["sample", "model", "prompt_type"])
    print(f"{len(frame):,} judged rows, {len(items):,} items, "
          f"{frame['judge'].nunique()} judges, {frame['model'].nunique()} models; "
          f"{platform.machine()}, load {os.getloadavg()[0]:.1f}")
    population = audit.population(frame)
    print(f"items a reviewer can audit (vulnerable contracts): {len(population):,}")

    seconds, drawn = best_of(lambda: audit.sample(frame, 300, seed=1))
    print(f"sample of 300 (consensus of 3 judges included): {seconds:.3f} s")
    seconds, _ = best_of(lambda: audit.population(frame, "judge-one"))
    print(f"  ... the items as one judge decided (no consensus): {seconds:.3f} s")

    rng = np.random.default_rng(0)
    labels = drawn[["sample", "model", "prompt_type"]].astype(str).copy()
    agrees = rng.random(len(drawn)) < 0.85
    said = drawn["judge_decision"].eq("found").to_numpy()
    labels["target_found"] = pd.array(np.where(agrees, said, ~said), dtype="boolean")
    labels["reviewer"] = "ann"
    labels["labelled_at"] = audit.now_utc()
    labels["note"] = ""
    labels["run_sha256"] = "0" * 64

    seconds, table = best_of(lambda: audit.corrected(frame, labels))
    print(f"corrected table ({len(table)} models, 300 labels): {seconds:.3f} s")
    seconds, _ = best_of(lambda: audit.judge_accuracy(frame, labels))
    print(f"judges' accuracy (3 judges and the majority): {seconds:.3f} s")
    seconds, _ = best_of(lambda: audit.labels_needed(frame, labels))
    print(f"labels needed: {seconds:.3f} s")

    with tempfile.TemporaryDirectory() as folder:
        store = LabelStore(folder, "0" * 64)
        store.append(labels.to_dict("records"), reviewer="ann", session="s")
        row = labels.iloc[0].to_dict()

        def after_a_label() -> None:
            # what the page does between a key press and the next item (the tables are
            # computed below it, once per label: cached on the labels' digest)
            store.append([row], reviewer="ann", session="s")
            kept, _ = store.read(frame)
            done = audit.latest(kept)
            _ = audit.evidence(frame, tuple(drawn.iloc[1][["sample", "model",
                                                           "prompt_type"]].astype(str)))
            return done

        seconds, _ = best_of(after_a_label)
        print(f"after a label: append, read every label back, the next item's evidence: "
              f"{seconds:.3f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
