"""The Judge audit page's keys, where its labels live, and its cached computations.

Labels are kept in the workspace beside their run (:class:`kbench_core.audit.store.
LabelStore`: one append-only file per reviewer and session) when the app has one, and
otherwise in this session only. Every number comes from :mod:`kbench_core.audit` through
:func:`kbench_app.cache.cached`, keyed on the run, the options and a digest of the labels, so a
new label recomputes the tables once.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from kbench_app import cache, state
from kbench_core import audit, families
from kbench_core.audit.labels import drawn_judge
from kbench_core.audit.store import LabelStore
from kbench_core.io import Run


class Keys:
    """The page's widget keys (also the names of its link parameters)."""

    RUN = "aud_run"
    JUDGE = "aud_judge"
    SIZE = "aud_n"
    SEED = "aud_seed"
    METHOD = "aud_method"
    PER_RUN = (JUDGE, SIZE)


REVIEWER = "kbench_audit_reviewer"  # session only: a name is never put in a link
SESSION = "kbench_audit_session"
POSITION = "kbench_audit_position"
SESSION_LABELS = "kbench_audit_labels"
EMPTY = ("No judged vulnerability-detection run is loaded. Add one on the Runs page to audit "
         "its LLM judge.")
DEFAULT_SIZE = 60


def session_token() -> str:
    """A token of this browser session: the name of its labels file in a workspace."""
    return state.session_setdefault(SESSION, secrets.token_hex(8))


@dataclass(frozen=True)
class Labels:
    """The labels of a run as the page sees them: the frame, warnings, and where they live."""

    frame: pd.DataFrame
    warnings: tuple[str, ...]
    in_workspace: bool

    @property
    def digest(self) -> str:
        return hashlib.sha256(audit.labels_csv(self.frame).encode()).hexdigest()[:16]


def _store(run: Run) -> LabelStore | None:
    workspace = state.registry().workspace
    if workspace is None or not run.content_hash:
        return None
    return LabelStore(workspace.directory, run.content_hash)


def labels_of(run: Run) -> Labels:
    """Every label of ``run``: the workspace's (every reviewer's) or this session's."""
    store = _store(run)
    if store is not None:
        frame, warnings = store.read(run.frame)
        return Labels(frame, tuple(warnings), True)
    rows = state.session_setdefault(SESSION_LABELS, {}).get(run.content_hash, [])
    return Labels(audit.labels_frame(rows), (), False)


def with_reviewers(run: Run) -> tuple[Run, int]:
    """``run`` as the Judge agreement page compares its judges: with the reviewers' labels
    of the judge audit (the workspace's, or this session's) as the judge ``human``
    (:func:`kbench_core.audit.as_human_judge`), unless the run has ``human`` labels of its
    own; and how many items they label. The run returned is a view: its ``meta`` names the
    labels (``audit_labels``, ``audit_labels_sha256``), so cached results and exports tell it
    apart from the run without them."""
    from kbench_core.agreement import HUMAN

    frame = run.frame
    if HUMAN in set(map(str, frame["judge"].unique())):
        return run, 0
    labels = labels_of(run)
    if labels.frame.empty:
        return run, 0
    human = audit.as_human_judge(frame, labels.frame)
    if human.empty:
        return run, 0
    combined = pd.concat([frame, human], ignore_index=True)
    combined["judge"] = combined["judge"].astype(str).astype("category")
    meta = {**run.meta, "audit_labels": len(human), "audit_labels_sha256": labels.digest}
    return Run(run.name, run.kind, combined, meta, run.warnings), len(human)


def add_labels(run: Run, rows: Sequence[dict[str, object]], *, reviewer: str) -> None:
    """Keep new labels: appended to this session's file in the workspace, or to the
    session's list."""
    store = _store(run)
    if store is not None:
        store.append(rows, reviewer=reviewer, session=session_token())
        return
    kept = state.session_setdefault(SESSION_LABELS, {})
    kept[run.content_hash] = [*kept.get(run.content_hash, []), *rows]


def drawn(frame: pd.DataFrame, run: Run, *, n: int, judge: str, seed: int) -> pd.DataFrame:
    """The audit sample for (n, judge, seed): drawn without regard to labels made since, so
    that the same link shows the same items to every reviewer, after a restart too."""
    return cache.cached(audit.sample, frame, runs=[run], n=n, judge=judge, seed=seed)


def population_size(frame: pd.DataFrame, run: Run, judge: str) -> int:
    return len(cache.cached(audit.population, frame, runs=[run], judge=judge))


def results(frame: pd.DataFrame, run: Run, labels: Labels, *, judge: str,
            method: str) -> dict[str, pd.DataFrame]:
    """The page's tables for these labels (cached on their digest)."""
    def compute(judged: pd.DataFrame, rows: pd.DataFrame, *, judge: str, method: str
                ) -> dict[str, pd.DataFrame]:
        from kbench_core.audit.errors import judge_errors, overruled

        # the judge the labels' sample was drawn with (the page draws with the judge chosen
        # on it, and records it): its strata weigh the labels (docs/metrics/audit.md)
        design = drawn_judge(rows, judge)
        return {"corrected": audit.corrected(judged, rows, judge=judge, method=method,
                                             design_judge=design),
                "accuracy": audit.judge_accuracy(judged, rows, design_judge=design),
                "needed": audit.labels_needed(judged, rows, judge=judge, design_judge=design),
                "errors": judge_errors(judged, rows, judge=judge),
                "overruled": overruled(judged, rows, judge=judge),
                "reviewers": audit.reviewer_kappa(rows)}

    return cache.cached(compute, frame, labels.frame, runs=[run], selection=labels.digest,
                        judge=judge, method=method)


def progress(sample: pd.DataFrame, labels: pd.DataFrame, reviewer: str) -> tuple[int, int]:
    """(items of the sample this reviewer labelled, items labelled by anyone)."""
    if labels.empty:
        return 0, 0
    keys = audit_keys(sample)
    mine = labels[labels["reviewer"].astype(str) == reviewer]
    return int(keys.isin(audit_keys(mine)).sum()), int(keys.isin(audit_keys(labels)).sum())


def audit_keys(frame: pd.DataFrame) -> pd.Index:
    from kbench_core.audit._items import item_keys

    return item_keys(frame)


def current_label(labels: pd.DataFrame, item: Sequence[str], reviewer: str) -> str | None:
    """This reviewer's latest label of ``item`` ("found", "not found"), or None."""
    if labels.empty:
        return None
    mine = audit.latest(labels[labels["reviewer"].astype(str) == reviewer])
    hit = mine[(mine["sample"].astype(str) == item[0]) & (mine["model"].astype(str) == item[1])
               & (mine["prompt_type"].astype(str) == item[2])]
    if hit.empty or pd.isna(hit["target_found"].iloc[-1]):
        return None
    return "found" if bool(hit["target_found"].iloc[-1]) else "not found"


def banner_needed(run: Run) -> str | None:
    """A sentence for a family page when the reviewers' labels say the judge's rate is off:
    some model's corrected interval excludes the judge-only rate. None otherwise (and when
    the run has no labels)."""
    if run.kind not in families.judged_kinds():
        return None
    try:
        labels = labels_of(run)
    except (OSError, ValueError):
        return None
    if labels.frame.empty:
        return None
    choices = audit.judge_choices(run.frame)
    if not choices:
        return None
    table = results(run.frame, run, labels, judge=choices[0], method="ppi++")["corrected"]
    off = table[(table["judge_only"] < table["corrected_low"])
                | (table["judge_only"] > table["corrected_high"])]
    if off.empty:
        return None
    from kbench_app.ui import plain

    # model names come from the run: shown as text in the page's Markdown
    names = plain(", ".join(map(str, off["model"].head(3)))) + ("…" if len(off) > 3 else "")
    return (f"The reviewers' {len(labels.frame):,} labels say the judge's detection rate is "
            f"off beyond chance for {len(off)} model{'s' * (len(off) != 1)} ({names}): see "
            "the corrected rates on the Judge audit page.")


METHOD_WORDS = {"ppi++": "PPI++ (default)", "difference": "Difference (PPI, λ = 1)",
                "rogan_gladen": "Rogan–Gladen"}
TEXT_FIELDS = ("response", "answer")


def evidence(frame: pd.DataFrame, run: Run, item: tuple[str, str, str]) -> dict:
    """What a reviewer reads about ``item`` (:func:`kbench_core.audit.evidence`), cached."""
    return cache.cached(audit.evidence, frame, runs=[run], selection=item, item=item)


def as_rows(values: dict) -> pd.DataFrame:
    """A dict of evidence as a two-column table of text (what, value)."""
    return pd.DataFrame({"what": [k.replace("_", " ") for k in values],
                         "value": ["" if v is None or v != v else str(v)
                                   for v in values.values()]})


def _labelled_mask(sample: pd.DataFrame, labels: pd.DataFrame, reviewer: str):
    if labels.empty:
        return pd.Series(False, index=sample.index).to_numpy()
    mine = labels[labels["reviewer"].astype(str) == reviewer]
    return audit_keys(sample).isin(audit_keys(mine))


def first_unlabelled(sample: pd.DataFrame, labels: pd.DataFrame, reviewer: str) -> int:
    """Where a reviewer resumes: the first item of the sample they have not labelled."""
    done = _labelled_mask(sample, labels, reviewer)
    left = [i for i, d in enumerate(done) if not d]
    return left[0] if left else max(len(sample) - 1, 0)


def next_unlabelled(sample: pd.DataFrame, labels: pd.DataFrame, reviewer: str, *,
                    after: int) -> int:
    """The next item after ``after`` this reviewer has not labelled (else the next one)."""
    done = _labelled_mask(sample, labels, reviewer)
    for i in range(after + 1, len(sample)):
        if not done[i]:
            return i
    for i in range(0, after + 1):
        if not done[i]:
            return i
    return min(after + 1, len(sample) - 1)


def item_line(item: Sequence[str]) -> str:
    """The item's line above its evidence (Markdown): contract, detector and prompt type,
    each a stranger's text shown as text, controls and bidi overrides as visible escapes."""
    from kbench_app.ui import plain
    from kbench_core.text import escape_controls

    shown = [plain(escape_controls(str(part))) for part in item]
    return (f"Contract **{shown[0]}** · detector **{shown[1]}**"
            + (f" · prompt **{shown[2]}**" if str(item[2]) else ""))


def note_key(run: Run, item: Sequence[str]) -> str:
    """The note box's widget key: one per run and item (a note typed for an item never moves
    to whatever item takes its place when the sample changes); a digest, as item names are
    a stranger's text."""
    text = "\x1f".join([run.content_hash, *map(str, item)])
    return "aud_note_" + hashlib.sha256(text.encode()).hexdigest()[:16]


def label_row(item: tuple[str, str, str], *, found: bool, reviewer: str, note: str, run: Run,
              p_include: float | None = None, partial: bool = False,
              drawn_with: str = "") -> dict[str, object]:
    """One label as the store keeps it (``partial``: a partial match, a found target;
    ``drawn_with``: the judge whose strata the page's sample was drawn from)."""
    return {"sample": item[0], "model": item[1], "prompt_type": item[2],
            "target_found": bool(found or partial), "said_vulnerable": None,
            "partial_found": True if partial else None, "reviewer": reviewer,
            "labelled_at": audit.now_utc(), "note": note[:2000],
            "run_sha256": run.content_hash, "p_include": p_include, "drawn_with": drawn_with}


def grades_partial(frame: pd.DataFrame) -> bool:
    """Whether the run grades partial matches (a ``partial_found`` column, or ``type_match``
    "partial"): then the page offers a "Partial" label."""
    if "partial_found" in frame and frame["partial_found"].notna().any():
        return True
    return "type_match" in frame and bool((frame["type_match"].astype(str) == "partial").any())


def imported_rows(labels: pd.DataFrame) -> list[dict[str, object]]:
    """An imported sheet's labels as rows to keep."""
    rows = labels.astype(object).where(labels.notna(), None).to_dict("records")
    for row in rows:
        row["labelled_at"] = row.get("labelled_at") or audit.now_utc()
    return rows


def sheet_csv(sample: pd.DataFrame, run: Run) -> str:
    """The blank sheet of this sample (``kbench audit sample --out``'s file)."""
    return audit.labels_csv(audit.blank_sheet(sample, run_sha256=run.content_hash))


def _with_interval(frame: pd.DataFrame, column: str) -> pd.Series:
    """``value [low, high]`` to 4 significant digits; "—" where the value is undefined."""
    from kbench_app.ui import interval_text
    from kbench_core.tables import format_numbers

    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(float)
    known = ~pd.isna(values)
    text = pd.Series("—", index=frame.index, dtype=object)
    if known.any():
        bounds = interval_text(frame[f"{column}_low"], frame[f"{column}_high"])
        numbers = format_numbers(values[known])
        text[known] = [f"{v} {b}".strip() for v, b in zip(numbers, bounds[known], strict=True)]
    return text


CORRECTED_LABELS = {"model": "Model", "judge_only": "Judge only (95% CI)",
                    "human_only": "Reviewers only (95% CI)", "corrected": "Corrected (95% CI)",
                    "n_items": "Items", "n_labelled": "Labels", "n_contracts": "Contracts",
                    "note": "Note"}
ACCURACY_LABELS = {"judge": "Judge", "sensitivity": "Sensitivity (95% CI)",
                   "specificity": "Specificity (95% CI)", "accuracy": "Accuracy (95% CI)",
                   "kappa": "κ (95% CI)", "n_labelled": "Labels"}


def needed_view(needed: pd.DataFrame) -> dict:
    """``view=`` and ``config=`` of the labels-needed table (:func:`kbench_core.audit.
    labels_needed`): its columns in words, "—" where a number is undefined (the note says
    why)."""
    from kbench_app.ui import table_config
    from kbench_core.tables import format_numbers

    def words(values: pd.Series, text) -> list[str]:
        numbers = pd.to_numeric(values, errors="coerce").to_numpy(float)
        return [text(v) if v == v else "—" for v in numbers]

    display = pd.DataFrame({
        "Model": needed["model"].astype(str).to_numpy() if "model" in needed else "",
        "Half-width now (95% CI)": words(needed["half_width_now"],
                                         lambda v: f"± {format_numbers([v])[0]}"),
        "Labels": words(needed["n_labelled"], lambda v: f"{int(v):,}"),
        "More labels needed": words(needed["labels_needed"], lambda v: f"{int(v):,}"),
        "Note": needed["note"].fillna("").astype(str).to_numpy()})
    return dict(view=display, config=table_config(display))


def interval_view(frame: pd.DataFrame, labels: dict[str, str]) -> dict:
    """``view=`` and ``config=`` of :func:`kbench_app.kit.table`: each rate with its interval
    in one column, the columns named in words (the download keeps every column)."""
    from kbench_app.ui import table_config

    display = pd.DataFrame(index=frame.index)
    for column, label in labels.items():
        if column not in frame:
            continue
        if f"{column}_low" in frame:
            display[label] = _with_interval(frame, column)
        else:
            display[label] = frame[column].astype(object).where(frame[column].notna(), "")
    display = display.reset_index(drop=True)
    return dict(view=display, config=table_config(display))
