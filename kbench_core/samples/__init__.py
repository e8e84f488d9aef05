"""Synthetic runs with planted effects whose metric values are known in closed form.

One generator per run kind, each seeded (``numpy.random.default_rng(seed)``) and vectorised over
all rows at once, so the same code writes the small bundled ``sample_data/`` files and the
million-row runs of ``benchmarks/``. Every model, agent, detector and judge name is plainly
synthetic (``synthetic-...``, ``judge-...``): no real model's name ever stands beside made-up
numbers.

Each generator has a ``planted_*`` partner that returns the truth it planted as a tidy frame,
computed from the plan (counts and rates), never from the generated rows, so that a test can
check the rows against it and the metric modules can be checked against both:

==========================  ===================================  ===============================
generator                   planted truth                        what is exact
==========================  ===================================  ===============================
:func:`bias_trials`         :func:`planted_bias_rates`,          every cell mean (0/1 scores);
                            :func:`planted_bias_metrics`         BMS, BCI, BMP, HAS, RCI, CAS
:func:`replication_tests`   :func:`planted_replication_ecs`,     CCC 1 / closed form / 0;
                            :func:`planted_replication_pas`      PAS of every test
:func:`replication_summary` :func:`planted_replication_summary`  means per configuration
:func:`judged_samples`      :func:`planted_judged`,              confusion counts, TDR, lucky
                            :func:`planted_agreement`            guesses, findings, κ between
                                                                 judges
==========================  ===================================  ===============================

The ``big_*`` functions make runs of a requested size for benchmarks. :func:`write_samples`
writes the bundled CSV files byte for byte reproducibly, on every machine: computed floats are
written to :data:`SIGNIFICANT_DIGITS` significant digits, so a last-bit difference in a CPU's
transcendentals does not reach the file; ``python -m kbench_core.samples DIR`` calls it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from kbench_core.samples._common import SIGNIFICANT_DIGITS
from kbench_core.samples.bias import (  # noqa: F401  (the public names, re-exported)
    _TAXONOMY,
    BIAS_CATEGORIES,
    BIAS_MODELS,
    DEBIASING_METHODS,
    DOMAINS,
    SAMPLE_BIASES,
    _baselines,
    bias_reports,
    bias_trials,
    bias_trials_of_size,
    big_bias_trials,
    planted_bias_metrics,
    planted_bias_rates,
    planted_big_bias_rates,
)
from kbench_core.samples.judged import (
    DETECTORS,
    JUDGES,
    PROMPT_TYPES,
    VULN_TYPES,
    big_judged_samples,
    judged_samples,
    planted_agreement,
    planted_judged,
)
from kbench_core.samples.replication import (
    REPLICATION_DOMAINS,
    REPLICATION_MODELS,
    SUMMARY_CONFIGS,
    big_replication_tests,
    planted_replication_ecs,
    planted_replication_pas,
    planted_replication_summary,
    replication_summary,
    replication_tests,
)

__all__ = [
    "BIAS_CATEGORIES",
    "BIAS_MODELS",
    "DEBIASING_METHODS",
    "DETECTORS",
    "DOMAINS",
    "JUDGES",
    "PROMPT_TYPES",
    "REPLICATION_DOMAINS",
    "REPLICATION_MODELS",
    "SAMPLE_BIASES",
    "SAMPLE_FILES",
    "SIGNIFICANT_DIGITS",
    "SUMMARY_CONFIGS",
    "VULN_TYPES",
    "bias_reports",
    "bias_trials",
    "bias_trials_of_size",
    "big_bias_trials",
    "big_judged_samples",
    "big_replication_tests",
    "judged_samples",
    "planted_agreement",
    "planted_bias_metrics",
    "planted_bias_rates",
    "planted_big_bias_rates",
    "planted_judged",
    "planted_replication_ecs",
    "planted_replication_pas",
    "planted_replication_summary",
    "replication_summary",
    "replication_tests",
    "write_samples",
]


# ================================================================================== writing

SAMPLE_FILES: tuple[str, ...] = (
    "bias.csv", "bias_summary.csv", "replication.csv", "replication_summary.csv", "judged.csv")


def _csv_bytes(frame: pd.DataFrame) -> bytes:
    """CSV as kbench reads it: ``true``/``false``, empty cells for missing values, floats in
    their shortest round-trip form (so a reload gives the same numbers), ``\\n`` line ends."""
    out = frame.copy()
    for name in out.columns:
        if out[name].dtype == bool:
            out[name] = np.where(out[name].to_numpy(), "true", "false")
        elif isinstance(out[name].dtype, pd.BooleanDtype):  # true / false / empty
            out[name] = out[name].map({True: "true", False: "false"}).astype(object)
    return out.to_csv(index=False, lineterminator="\n").encode("utf-8")


def _sample_frames() -> dict[str, pd.DataFrame]:
    return {
        "bias.csv": bias_trials(),
        "bias_summary.csv": bias_reports(),
        "replication.csv": replication_tests(),
        "replication_summary.csv": replication_summary(),
        "judged.csv": judged_samples(),
    }


def write_samples(directory: str | Path) -> list[Path]:
    """Write the bundled sample runs (one small CSV per kind, default options, seed 0) into
    ``directory``, creating it if needed; the bytes depend on nothing but this module.

    Returns the paths written, in :data:`SAMPLE_FILES` order.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, frame in _sample_frames().items():
        path = directory / name
        path.write_bytes(_csv_bytes(frame))
        paths.append(path)
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m kbench_core.samples [DIR]``: (re)write the sample files (default
    ``sample_data``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) > 1 or any(a in ("-h", "--help") for a in args):
        print("usage: python -m kbench_core.samples [DIR]   (default: sample_data)")
        return 0 if args and args[0] in ("-h", "--help") else 2
    for path in write_samples(args[0] if args else "sample_data"):
        print(f"wrote {path} ({path.stat().st_size / 1024:.1f} KB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

