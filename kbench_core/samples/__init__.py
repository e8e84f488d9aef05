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
writes the bundled files byte for byte reproducibly, on every machine: computed floats are
written to :data:`SIGNIFICANT_DIGITS` significant digits, so a last-bit difference in a CPU's
transcendentals does not reach the file; ``python -m kbench_core.samples DIR`` calls it.

Which files are bundled, and what writes them, comes from the family registry: each family
names its files (``Family.sample_files``) and the frame of its sample
(``Family.sample_frame(seed)``, written by :func:`write_csv`; or a writer,
``Family.sample(directory, seed)``), so a new family's sample is written here without this
module naming it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from kbench_core import families
from kbench_core.samples._common import SIGNIFICANT_DIGITS, csv_bytes, write_csv
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
    "csv_bytes",
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
    "write_csv",
    "write_samples",
]


# ================================================================================== writing


def __getattr__(name: str) -> object:
    # SAMPLE_FILES is read from the registry when asked for, so it includes a family that is
    # registered after this module was imported.
    if name == "SAMPLE_FILES":
        return tuple(families.sample_files())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _csv_bytes(frame: pd.DataFrame) -> bytes:  # the old private name
    return csv_bytes(frame)


def write_samples(directory: str | Path, *, seed: int = 0) -> list[Path]:
    """Write every registered family's sample run (small files, default options, ``seed``)
    into ``directory``, creating it if needed; with ``seed=0`` these are the bundled
    ``sample_data/`` files, whose bytes depend on nothing but the generators.

    Returns the paths written, in :func:`kbench_core.families.sample_files` order. A family
    that names sample files but registers no ``sample``, or whose ``sample`` writes other
    files than it names, is a ``ValueError`` naming it.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for family in families.all_families():
        if not family.sample_files:
            continue
        paths = family.write_sample(directory, seed)
        if sorted(p.name for p in paths) != sorted(family.sample_files):
            raise ValueError(f"family {family.kind!r} wrote {[p.name for p in paths]}, not its "
                             f"sample files {list(family.sample_files)}")
        written.update((p.name, p) for p in paths)
    return [written[name] for name in families.sample_files()]


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

