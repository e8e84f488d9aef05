r"""Drawing the items a reviewer labels (``docs/metrics/audit.md``, "The sample").

The sample is **stratified** over the ``by`` groups (detector models by default) and the
judge's own decision (found / not found / failed), so that both kinds of decision are checked
even when one is rare, and drawn **without replacement within each stratum**: each item of
stratum :math:`h` is included with probability :math:`\pi_h = n_h / N_h`.

Allocation: one item per stratum first (when ``n`` allows), the rest in proportion to
:math:`\sqrt{N_h}` (Kish's power allocation with exponent ½, a compromise between
proportional allocation, which would leave a rare decision almost unchecked, and equal
allocation, whose weights vary most; Kish 1988, *Multipurpose sample designs*, Survey
Methodology 14), never more than a stratum holds.

Items already labelled (by anyone) are never drawn again: a second draw samples what is left,
and the union of successive draws in one stratum is again a simple random sample of it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from kbench_core.audit._items import (
    FAILED,
    FOUND,
    HUMAN,
    ITEM_KEY,
    MAJORITY,
    NOT_FOUND,
    first_per_item,
    item_frame,
    item_keys,
    population,
)

# What the blank sheet carries beside the item key, in this order (docs/metrics/audit.md).
LABEL_COLUMNS: tuple[str, ...] = ("target_found", "reviewer", "labelled_at", "note",
                                  "run_sha256")


def allocate(sizes: np.ndarray, n: int) -> np.ndarray:
    """How many items to draw from strata of ``sizes``: one each first (while ``n`` lasts,
    largest strata first), then the rest in proportion to √size, capped at each size.

    >>> allocate(np.array([100, 4, 25]), 10).tolist()
    [6, 1, 3]
    >>> allocate(np.array([3, 1]), 4).tolist()
    [3, 1]
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    if n > sizes.sum():
        raise ValueError(f"cannot draw {n} of {sizes.sum()} items")
    out = np.zeros(len(sizes), dtype=np.int64)
    order = np.argsort(-sizes, kind="stable")
    first = order[sizes[order] > 0][:n]
    out[first] = 1
    left = n - len(first)
    while left > 0:
        room = sizes - out
        open_ = room > 0
        share = np.where(open_, np.sqrt(sizes), 0.0)
        want = left * share / share.sum()
        take = np.minimum(np.floor(want).astype(np.int64), room)
        if take.sum() == 0:
            # the remainders: largest fractional want first (ties: larger stratum, then order)
            frac = np.where(open_, want - np.floor(want), -1.0)
            pick = np.lexsort((np.arange(len(sizes)), -sizes, -frac))[:left]
            pick = pick[open_[pick]]
            take = np.zeros_like(out)
            take[pick] = 1
        out += take
        left -= int(take.sum())
    return out


def sample(judged: pd.DataFrame, n: int, *, by: Sequence[str] = ("model",),
           judge: str = MAJORITY, seed: int = 0, labels: pd.DataFrame | None = None,
           label: str = "target_found", judges: Sequence[str] | None = None,
           min_votes: int | None = None) -> pd.DataFrame:
    r"""The items to label: a stratified random sample of a judged run's items.

    Parameters
    ----------
    judged : DataFrame
        A validated ``judged`` frame (one row per item and judge).
    n : int
        Items to draw; more than the items left to label is refused, with the numbers.
    by : sequence of str
        Columns the strata are made of besides the judge's decision (default the model).
    judge : str
        ``"majority"`` (the LLM judges' consensus) or one judge's name: whose decision the
        strata use and the sheet shows.
    seed : int
        The same seed (and the same run and labels) gives the same sample.
    labels : DataFrame, optional
        Labels already made (any reviewer): their items are not drawn again.

    Returns
    -------
    DataFrame
        One row per item drawn, in a random order (the draw's): ``sample, model,
        prompt_type``, the ``by`` columns, ``stratum``, ``p_include`` (:math:`n_h / N_h`
        among the items left),
        ``judge_decision`` (found / not found / failed) and the evidence a reviewer reads:
        ground truth (``is_vulnerable, severity, vuln_type, true_lines``), the detector's
        verdict (``detector_verdict``: vulnerable / safe; ``claimed_lines``) and every LLM
        judge's decision
        (``judges``, e.g. ``"a: found; b: failed"``). ``attrs`` holds ``seed``, ``judge``,
        ``n_population`` and ``n_labelled_before``.
    """
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ValueError(f"n must be a whole number of items, at least 1; got {n!r}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a whole number >= 0; got {seed!r}")
    pop = population(judged, judge, label=label, by=by, judges=judges, min_votes=min_votes)
    pop = pop.sort_values(list(ITEM_KEY), kind="stable").reset_index(drop=True)
    keys = item_keys(pop)
    done = np.zeros(len(pop), dtype=bool)
    if labels is not None and len(labels):
        from kbench_core.audit.labels import _with_optional_columns

        done = keys.isin(item_keys(_with_optional_columns(labels)))
    left = pop[~done].reset_index(drop=True)
    if n > len(left):
        raise ValueError(
            f"n = {n} is more than the {len(left)} items left to label "
            f"({int(done.sum())} of the {len(pop)} items of this run are labelled already)")
    strata, code = np.unique(left["stratum"].to_numpy(), return_inverse=True)
    sizes = np.bincount(code, minlength=len(strata))
    take = allocate(sizes, n)
    # One uniform number per item (items in key order, so the row order of the run does not
    # matter): each stratum keeps its n_h smallest.
    u = np.random.default_rng(seed).random(len(pop))[~done]
    order = np.lexsort((u, code))
    rank = np.empty(len(left), dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    rank[order] = np.arange(len(left)) - np.repeat(starts, sizes)
    chosen = rank < take[code]
    out = left[chosen].copy()
    out["p_include"] = (take / np.maximum(sizes, 1))[code[chosen]]
    out = out.rename(columns={"decision_text": "judge_decision"}).drop(columns="decision")
    out = out.join(_evidence_columns(judged, out), how="left")
    # in the order of the draw's random numbers, so that a reviewer who stops half-way has
    # checked every stratum about as far (strata in sequence would leave the last unchecked)
    out = out.iloc[np.argsort(u[chosen], kind="stable")].reset_index(drop=True)
    out.attrs.update(seed=int(seed), judge=judge, n_population=len(pop),
                     n_labelled_before=int(done.sum()))
    return out


def _evidence_columns(judged: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Ground truth, the detector's verdict and each judge's decision, aligned to ``items``."""
    judged = item_frame(judged)
    llm = judged[judged["judge"].astype(str) != HUMAN]
    keys = item_keys(llm)
    wanted = item_keys(items)
    llm = llm[keys.isin(wanted)]
    # judges by name, so that the row order of the run never changes the text
    llm = llm.iloc[np.argsort(llm["judge"].astype(str).to_numpy(), kind="stable")]
    keys = item_keys(llm)
    # the detector's verdict and claimed lines from the first judge (by name) who read the
    # answer: a failed judgement carries neither
    failed = (llm["failed_judgement"].notna().to_numpy(bool) if "failed_judgement" in llm
              else np.zeros(len(llm), dtype=bool))
    readable = llm.iloc[np.argsort(failed, kind="stable")]
    first = first_per_item(readable)
    columns = [c for c in ("is_vulnerable", "severity", "vuln_type", "true_lines", "difficulty",
                           "said_vulnerable", "claimed_lines") if c in first]
    out = first[columns].astype(object).where(first[columns].notna(), None)
    # the detector's verdict is evidence, not a label the reviewer gives (said_vulnerable is
    # the name of the optional label column of a sheet)
    out = out.rename(columns={"said_vulnerable": "detector_verdict"})
    if "detector_verdict" in out:
        out["detector_verdict"] = out["detector_verdict"].map(
            {True: "vulnerable", False: "safe"}).astype(object)
    found = llm["target_found"].astype("Float64") if "target_found" in llm else \
        pd.Series(np.nan, index=llm.index)
    words = np.where(found.isna().to_numpy(bool), FAILED,
                     np.where(found.fillna(0).to_numpy(float) > 0.5, FOUND, NOT_FOUND))
    text = pd.Series(llm["judge"].astype(str).to_numpy(), index=keys) + ": " + words
    out["judges"] = text.groupby(level=0, sort=False).agg("; ".join)
    return out.reindex(wanted).set_axis(items.index)


def blank_sheet(drawn: pd.DataFrame, *, run_sha256: str = "") -> pd.DataFrame:
    """The sample as a sheet to fill in: empty label columns after the item key, the
    evidence after them (the label columns of docs/metrics/audit.md: ``target_found``, ``reviewer``,
    ``labelled_at``, ``note``, ``run_sha256`` — the last already filled in)."""
    out = drawn.copy()
    for column in LABEL_COLUMNS:
        out[column] = run_sha256 if column == "run_sha256" else ""
    # the judge whose strata the sample was drawn from: its labels are weighed by them
    out["drawn_with"] = str(drawn.attrs.get("judge", ""))
    first = [*ITEM_KEY, *LABEL_COLUMNS, "drawn_with"]
    return out[first + [c for c in out.columns if c not in first]]
