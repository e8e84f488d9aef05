"""KahneBench's own ``MetricCalculator`` on big bias runs: time and peak memory at 1M / 10M /
30M / 100M trials, for the engine table of ``benchmarks/README.md`` (issue 25).

    python benchmarks/kahnebench_reference.py --kahnebench DIR [--no-check] [SIZE ...]

``DIR`` is a KahneBench checkout (https://github.com/ryanhartman4/KahneBench, MIT; not on
PyPI): the script needs ``src/kahne_bench/core.py`` and ``src/kahne_bench/metrics/core.py``
(``DIR`` may also be the ``src`` folder). They are imported without running the package's
``__init__``, which imports the LLM engines and their SDKs; the metrics need only numpy. No
line of KahneBench is in this repository: the reference runs from its own checkout.

Sizes default to 100k 1M 10M 30M 100M (``100k``, ``1M``, or a plain number). Rows are those of
``benchmarks/engines.py``: :func:`kbench_core.samples.big_bias_trials` made in 1M-row chunks
(seed = chunk number). Each size runs in a fresh process (one at a time) so its peak resident
memory (``ru_maxrss``, imports and one 1M-row chunk frame included) is its own. Stages:
``records`` turns the rows into KahneBench's ``TestResult`` records (generating the rows is
timed apart and left out), ``metrics`` is ``MetricCalculator().calculate_all_metrics(model,
records)`` for every model: all six metrics per bias (BMS, BCI, BMP, HAS, RCI, CAS) and the
per-model summary, i.e. KahneBench's cognitive fingerprint of the full run. Before each size
its peak memory is estimated from the sizes measured so far (the slope of peak memory between
the smallest and the largest, 100k and 1M at first); a size whose estimate exceeds 12 GiB is
not run but extrapolated linearly from the largest measured size (its time per row, and that
slope for memory) and marked ``extrapolated``.

Mapping of our columns to KahneBench's records (``kahne_bench.core``), as KahneBench's
evaluator makes them and as kbench's reader of native results reads them back
(``docs/metrics/bias.md``, "Native KahneBench results"):

- one ``CognitiveBiasInstance`` per ``bias`` × ``domain``, shared by every model, condition
  and trial of that test case (as the evaluator shares its instance): ``bias_id`` = ``bias``,
  ``domain`` = ``Domain(domain)``, ``expected_rational_response`` = ``"B"`` and
  ``expected_biased_response`` = ``"A"`` (the sample's answers: ``B`` unbiased, ``A`` biased),
  empty scenario, trigger and prompts (the metrics never read them);
- one ``TestResult`` per row: ``model_id`` = ``model``; ``condition`` = ``"control"``,
  ``"treatment_<intensity>"``, or ``"debiasing_<i>"`` with ``i`` the method's position among
  the sorted ``method`` names (the evaluator numbers its debiasing prompts);
  ``prompt_used`` = ``prompt``; ``model_response`` = ``response``; ``extracted_answer`` =
  ``answer`` (``""`` when unknown); ``response_time_ms`` = ``response_ms``;
  ``confidence_stated`` = ``confidence``; ``bias_score`` = ``score`` and ``is_biased`` =
  ``score >= 0.5`` (both ``None`` when the score is unknown); ``metadata`` = ``{"trial":
  trial}`` plus ``"debiasing_method": method`` on debiasing rows. ``id`` and ``category``
  have no field. The text fields hold the sample's repeated strings (shared objects), so the
  memory measured is a lower bound for real runs, whose responses are all distinct.

``--no-check`` skips the check run first on 100k rows: KahneBench's BMS and intensity
sensitivity per model × bias against ``kahne.fingerprint`` with the options that give the
original formulas (``cap=1.0, spacing="observed", std="sample", bci_rows="all",
variance="sample"``; ``docs/metrics/bias.md``), then against the same call on the rows with
unknown scores set to 0.5, which is what KahneBench's default scorer does with them. Prints
the figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import subprocess
import sys
import time
import types
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engines import size, trial_chunks  # noqa: E402 (its sibling: the same rows)

LIMIT_MIB = 12 * 1024
DEFAULT_SIZES = ("100k", "1M", "10M", "30M", "100M")
KAHNEBENCH_URL = "https://github.com/ryanhartman4/KahneBench"


def load_kahnebench(directory: Path) -> tuple[types.ModuleType, types.ModuleType]:
    """``kahne_bench.core`` and ``kahne_bench.metrics.core`` from a checkout at ``directory``.

    The two packages are registered empty first, so their ``__init__`` files (which import the
    generator, the evaluator and the LLM SDKs) do not run; the two modules import only numpy
    and each other.
    """
    base = directory / "src" if (directory / "src" / "kahne_bench").is_dir() else directory
    package = base / "kahne_bench"
    for part in ("core.py", "metrics/core.py"):
        if not (package / part).is_file():
            raise SystemExit(f"{directory} is not a KahneBench checkout: {package / part} is "
                             f"missing (clone {KAHNEBENCH_URL})")
    for name, folder in (("kahne_bench", package), ("kahne_bench.metrics", package / "metrics")):
        if name not in sys.modules:
            module = types.ModuleType(name)
            module.__path__ = [str(folder)]
            sys.modules[name] = module
    return (importlib.import_module("kahne_bench.core"),
            importlib.import_module("kahne_bench.metrics.core"))


def _column(frame, name: str) -> list:
    """A column as Python objects, missing values as ``None``."""
    column = frame[name]
    return column.astype(object).where(column.notna(), None).tolist()


def add_records(frame, core: types.ModuleType, instances: dict,
                by_model: dict[str, list]) -> None:
    """Append one ``TestResult`` per row of ``frame`` to ``by_model[model]`` (mapping in the
    module docstring); ``instances`` keeps one ``CognitiveBiasInstance`` per bias × domain."""
    methods = sorted(str(m) for m in frame["method"].dropna().unique())
    debiasing = {m: f"debiasing_{i}" for i, m in enumerate(methods)}
    columns = [_column(frame, name) for name in (
        "model", "bias", "domain", "condition", "intensity", "method", "trial", "score",
        "confidence", "response_ms", "prompt", "response", "answer")]
    result = core.TestResult
    for (model, bias, domain, condition, intensity, method, trial, score, confidence, ms,
         prompt, response, answer) in zip(*columns, strict=True):
        instance = instances.get((bias, domain))
        if instance is None:
            instance = instances[(bias, domain)] = core.CognitiveBiasInstance(
                bias_id=bias, base_scenario="", bias_trigger="", control_prompt="",
                treatment_prompts={}, expected_rational_response="B",
                expected_biased_response="A", domain=core.Domain(domain))
        metadata = {"trial": trial}
        if condition == "treatment":
            condition = f"treatment_{intensity}"
        elif condition == "debiasing":
            metadata["debiasing_method"] = method
            condition = debiasing[method]
        by_model[model].append(result(
            instance=instance, model_id=model, condition=condition, prompt_used=prompt,
            model_response=response, extracted_answer=answer or "",
            response_time_ms=float(ms), confidence_stated=confidence,
            is_biased=None if score is None else score >= 0.5, bias_score=score,
            metadata=metadata))


def measure(n_rows: int, directory: Path) -> dict:
    """Records and the fingerprint of every model for ``n_rows`` rows, in this process."""
    core, metrics = load_kahnebench(directory)
    times = {"rows": n_rows, "generate_s": 0.0, "records_s": 0.0}
    instances: dict = {}
    by_model: dict[str, list] = defaultdict(list)
    chunks = trial_chunks(n_rows)
    while True:
        start = time.perf_counter()
        frame = next(chunks, None)
        times["generate_s"] += time.perf_counter() - start
        if frame is None:
            break
        start = time.perf_counter()
        add_records(frame, core, instances, by_model)
        times["records_s"] += time.perf_counter() - start
        del frame
    start = time.perf_counter()
    calculator = metrics.MetricCalculator()
    reports = [calculator.calculate_all_metrics(model, records)
               for model, records in by_model.items()]
    times["metrics_s"] = time.perf_counter() - start
    times["total_s"] = times["records_s"] + times["metrics_s"]
    times["pairs"] = sum(len(report.magnitude_scores) for report in reports)
    times["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return times


def _kahnebench_bms(rows, core: types.ModuleType, metrics: types.ModuleType):
    """KahneBench's BMS and intensity sensitivity per model x bias of ``rows``."""
    import pandas as pd

    by_model: dict[str, list] = defaultdict(list)
    add_records(rows, core, {}, by_model)
    calculator = metrics.MetricCalculator()
    return pd.DataFrame([
        {"model": model, "bias": bias, "bms_kb": score.overall_magnitude,
         "sensitivity_kb": score.intensity_sensitivity}
        for model, records in by_model.items()
        for bias, score in calculator.calculate_all_metrics(model, records)
        .magnitude_scores.items()])


def check(directory: Path, n_rows: int = 100_000) -> None:
    """KahneBench's BMS against kbench's original-formula options (module docstring).

    Run on the sample and on the sample with the first trial of every weak-trigger cell of
    the first model made unknown: the sample's unknown answers sit evenly in every condition
    of a pair whose conditions share one rate, so they cannot move its BMS; the second run
    shows what KahneBench's 0.5 for an unknown answer does where they do not.
    """
    import logging

    import numpy as np

    from kbench_core import kahne
    from kbench_core.samples import big_bias_trials

    core, metrics = load_kahnebench(directory)
    logging.getLogger("kahne_bench").setLevel(logging.ERROR)  # its per-call baseline notes
    frame = big_bias_trials(n_rows)
    uneven = frame.copy()
    hit = ((uneven["model"] == uneven["model"].iloc[0]) & (uneven["intensity"] == "weak")
           & (uneven["trial"] == 0))
    uneven.loc[hit, "score"] = np.nan
    uneven.loc[hit, "answer"] = np.nan
    original = {"cap": 1.0, "spacing": "observed", "std": "sample", "bci_rows": "all",
                "variance": "sample"}
    for name, rows in (("sample", frame),
                       (f"sample with {int(hit.sum())} weak-trigger rows of "
                        f"{uneven['model'].iloc[0]} unknown", uneven)):
        theirs = _kahnebench_bms(rows, core, metrics)
        unknown = (rows.assign(unknown=rows["score"].isna())
                   .groupby(["model", "bias"], observed=True)["unknown"].sum()
                   .rename("n_unknown").reset_index().astype({"model": str, "bias": str}))
        for label, ours_rows in (("original options", rows),
                                 ("original options, unknown scores as 0.5",
                                  rows.assign(score=rows["score"].fillna(0.5)))):
            ours = kahne.fingerprint(ours_rows, **original).biases
            both = (theirs.merge(ours[["model", "bias", "bms", "sensitivity", "renormalised"]]
                                 .astype({"model": str, "bias": str}),
                                 on=["model", "bias"], how="outer", indicator=True)
                    .merge(unknown, on=["model", "bias"], how="left"))
            diff = (both["bms"] - both["bms_kb"]).abs()
            slope = (both["sensitivity"] - both["sensitivity_kb"]).abs()
            off = both[(diff > 1e-9) | (slope > 1e-9) | (both["_merge"] != "both")]
            print(f"{name}; kbench {label}: {len(both)} model x bias pairs "
                  f"({int((both['_merge'] == 'both').sum())} in both); max |diff| BMS "
                  f"{np.nanmax(diff):.3g}, sensitivity {np.nanmax(slope):.3g}; "
                  f"{len(off)} pairs differ by > 1e-9", flush=True)
            if len(off):
                print(f"  of those, {int((off['n_unknown'] > 0).sum())} have unknown scores "
                      f"and {int(off['renormalised'].sum())} are renormalised by kbench; "
                      f"e.g.\n" + off.drop(columns="_merge").head(3).to_string(index=False))


def _child(n_rows: int, directory: Path) -> dict:
    out = subprocess.run([sys.executable, __file__, "--kahnebench", str(directory),
                          "--measure", str(n_rows)],
                         capture_output=True, text=True, cwd=ROOT, check=False)
    if out.returncode:
        return {"rows": n_rows, "error": (out.stderr.strip().splitlines() or ["failed"])[-1][:200]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kahnebench", type=Path, required=True, metavar="DIR")
    parser.add_argument("--no-check", action="store_true")
    parser.add_argument("--measure", type=int, help=argparse.SUPPRESS)
    parser.add_argument("sizes", nargs="*", default=list(DEFAULT_SIZES))
    args = parser.parse_args(argv)
    if args.measure is not None:
        print(json.dumps(measure(args.measure, args.kahnebench)))
        return
    load_kahnebench(args.kahnebench)  # the one-line error before any work
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    if not args.no_check:
        check(args.kahnebench)
    measured: list[dict] = []
    for n in sorted(size(s) for s in args.sizes):
        if len(measured) >= 2:
            small, large = measured[0], measured[-1]
            per_row = ((large["peak_rss_mib"] - small["peak_rss_mib"])
                       / (large["rows"] - small["rows"]))
            estimate = large["peak_rss_mib"] + per_row * (n - large["rows"])
            if estimate > LIMIT_MIB:
                scale = n / large["rows"]
                print(f"{n:>12,} rows: extrapolated (estimated peak {estimate:,.0f} MiB > "
                      f"{LIMIT_MIB:,} MiB) " + json.dumps({
                          "records_s": round(large["records_s"] * scale, 1),
                          "metrics_s": round(large["metrics_s"] * scale, 1),
                          "total_s": round(large["total_s"] * scale, 1),
                          "peak_rss_mib": round(estimate),
                          "mib_per_million_rows": round(per_row * 1e6)}), flush=True)
                continue
        result = _child(n, args.kahnebench)
        print(f"{n:>12,} rows: measured {json.dumps(result)} (load average "
              f"{os.getloadavg()[0]:.2f})", flush=True)
        if "error" not in result:
            measured.append(result)


if __name__ == "__main__":
    main(sys.argv[1:])
