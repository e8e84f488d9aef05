"""A reviewer's labels as data (docs/metrics/audit.md): reading a filled sheet with a message
naming file, row and field for every fault, the latest label per reviewer and item, and the
labels as the judge ``human`` of :mod:`kbench_core.agreement`.

Columns: the item key (``sample``, ``model``, ``prompt_type``), ``target_found`` (yes/no; other
judged labels optional: ``said_vulnerable``), ``reviewer``, ``labelled_at`` (UTC, ISO 8601),
``note`` and ``run_sha256``. A correction is a new row: the latest row per reviewer and item
counts (by ``labelled_at``, then by order in the file).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from kbench_core.audit._items import (
    AUDIT_LABELS,
    HUMAN,
    ITEM_KEY,
    PARTIAL,
    first_per_item,
    item_frame,
    item_keys,
    judge_choices,
)
from kbench_core.problems import MAX_LISTED_PROBLEMS, Problem, RunFormatError, show_value
from kbench_core.text import csv_cell, escape_controls, restore_cell

# A sheet of 100k labels with notes is ~10 MB; past this a labels file is not a labels file.
MAX_LABEL_BYTES = 20 * 1024**2
MAX_NOTE_CHARS = 2_000
MAX_REVIEWER_CHARS = 200
LABEL_FRAME_COLUMNS: tuple[str, ...] = (*ITEM_KEY, "target_found", "said_vulnerable",
                                        "partial_found", "reviewer", "labelled_at", "note",
                                        "run_sha256", "p_include", "drawn_with")
_BOOLEAN_LABELS: tuple[str, ...] = (*AUDIT_LABELS, PARTIAL)
_YES = {"true", "1", "yes", "y", "found", "t"}
_NO = {"false", "0", "no", "n", "not found", "not_found", "f"}
ALLOWED = "yes/no, true/false, 1/0 or found/not found"


class LabelError(RunFormatError):
    """A labels file kbench cannot take; the message names file, row and field."""


def now_utc() -> str:
    """The time of a label: UTC, ISO 8601 to the second (``2026-12-06T09:30:00Z``)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _yes_no(text: str) -> bool | None:
    low = " ".join(text.strip().lower().split())
    if low in _YES:
        return True
    if low in _NO:
        return False
    raise ValueError(low)


def _timestamp(text: str) -> str:
    """``text`` as a UTC ISO 8601 time; a time without a zone is taken as UTC."""
    stamp = pd.Timestamp(text.strip())
    if pd.isna(stamp):
        raise ValueError(text)
    stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
    return stamp.strftime("%Y-%m-%dT%H:%M:%SZ")


def empty_labels() -> pd.DataFrame:
    """A labels frame without a label (the columns, typed)."""
    out = pd.DataFrame({c: pd.Series(dtype=object) for c in LABEL_FRAME_COLUMNS})
    out["target_found"] = out["target_found"].astype("boolean")
    out["p_include"] = out["p_include"].astype(float)
    out["said_vulnerable"] = out["said_vulnerable"].astype("boolean")
    out[PARTIAL] = out[PARTIAL].astype("boolean")
    return out


def read_labels(source: str | Path | tuple[str, bytes], *,
                run_sha256: str | None = None,
                judged: pd.DataFrame | pd.Index | None = None,
                reviewer: str | None = None,
                on_error: Literal["raise", "skip"] = "raise"
                ) -> tuple[pd.DataFrame, list[str]]:
    """A filled labels sheet (CSV, as ``kbench audit sample --out`` writes it), checked.

    Parameters
    ----------
    source : path or (file name, bytes)
    run_sha256 : str, optional
        The run's content hash: a row naming another run is refused.
    judged : DataFrame or Index, optional
        The run (or its :func:`~kbench_core.audit._items.item_keys`, computed once): a label
        for an item it does not have is refused (and, given the frame, a ``drawn_with`` that
        is not one of its judges).
    reviewer : str, optional
        Who labelled rows whose ``reviewer`` is empty (else such a row is refused).
    on_error : "raise" or "skip"
        ``"skip"``: a faulty row is left out and named in the warnings, the other rows kept
        (the workspace's store reads its files so: one odd row never hides a session's
        labels); a fault of the whole file is still raised.

    Returns
    -------
    (DataFrame, list of str)
        The labels (:data:`LABEL_FRAME_COLUMNS`, rows without a ``target_found`` left out) and
        warnings (rows skipped, duplicates, corrections).

    Raises
    ------
    LabelError
        Naming file, row (1-based, the header is row 1) and field of each fault: a file over
        :data:`MAX_LABEL_BYTES`, not UTF-8 text, a missing column, a label outside
        :data:`ALLOWED`, a bad time, another run's hash, an item the run does not have.
    """
    name, data = _bytes(source)
    # the judges a ``drawn_with`` may name (the run's, when the run is given as a frame)
    judges = ({*judge_choices(judged), "majority"} if isinstance(judged, pd.DataFrame)
              else None)
    if len(data) > MAX_LABEL_BYTES:
        raise _too_big(name, len(data))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LabelError(name, [Problem(None, None, (
            f"not UTF-8 text (byte {exc.start + 1}); save the sheet as CSV UTF-8"))]) from None
    rows = _csv_rows(name, text)
    # the provenance lines kbench writes above a sheet (``# kbench ...``), kept as rows so
    # that every later row keeps its line number
    skipped = 0
    while skipped < len(rows) and rows[skipped][:1] and rows[skipped][0].startswith("#"):
        skipped += 1
    rows = rows[skipped:]
    if not rows:
        raise LabelError(name, [Problem(None, None, "the file is empty; expected a header row "
                                        f"with {', '.join(ITEM_KEY)}, target_found")])
    header = [h.strip() for h in rows[0]]
    problems: list[Problem] = []
    dupes = sorted({h for h in header if header.count(h) > 1 and h})
    if dupes:
        raise LabelError(name, [Problem(skipped + 1, d, "this column appears more than once")
                                for d in dupes])
    need = [c for c in ("sample", "model", "target_found") if c not in header]
    if need:
        raise LabelError(name, [Problem(skipped + 1, c, "missing column (a labels sheet has "
                                        f"{', '.join(ITEM_KEY)}, target_found, reviewer, "
                                        "labelled_at, note, run_sha256)") for c in need])
    col = {h: i for i, h in enumerate(header)}
    records: list[dict[str, object]] = []
    warnings: list[str] = []
    blank = 0
    for number, row in enumerate(rows[1:], start=skipped + 2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) > len(header):
            problems.append(Problem(number, None, f"{len(row)} cells for {len(header)} "
                                    "columns (a comma in a note must be quoted)"))
            continue
        cell = {h: (row[i] if i < len(row) else "") for h, i in col.items()}
        label = cell["target_found"].strip()
        if not label:
            blank += 1
            continue
        record: dict[str, object] = {"_row": number}
        for key in ITEM_KEY:
            record[key] = restore_cell(cell.get(key, "")).strip() if key in cell else ""
        if not record["sample"] or not record["model"]:
            problems.append(Problem(number, "sample" if not record["sample"] else "model",
                                    "empty: every label names its item"))
            continue
        for field in _BOOLEAN_LABELS:
            value = cell.get(field, "").strip()
            if field != "target_found" and not value:
                record[field] = None
                continue
            try:
                record[field] = _yes_no(value)
            except ValueError:
                problems.append(Problem(number, field, f"{show_value(value)} is not a label; "
                                        f"write {ALLOWED}"))
        who = restore_cell(cell.get("reviewer", "")).strip() or (reviewer or "")
        if not who:
            problems.append(Problem(number, "reviewer", "empty: say who labelled the row (or "
                                    "give the reviewer's name when importing)"))
        if len(who) > MAX_REVIEWER_CHARS:
            problems.append(Problem(number, "reviewer", f"{len(who):,} characters, over the "
                                    f"{MAX_REVIEWER_CHARS} a reviewer's name may hold"))
            who = who[:MAX_REVIEWER_CHARS]
        record["reviewer"] = who
        stamp = cell.get("labelled_at", "").strip()
        try:
            record["labelled_at"] = _timestamp(stamp) if stamp else ""
        except (ValueError, TypeError, OverflowError):
            problems.append(Problem(number, "labelled_at", f"{show_value(stamp)} is not a "
                                    "time; write it as 2026-12-06T09:30:00Z (ISO 8601, UTC)"))
        note = restore_cell(cell.get("note", ""))
        if len(note) > MAX_NOTE_CHARS:
            problems.append(Problem(number, "note", f"{len(note):,} characters, over the "
                                    f"{MAX_NOTE_CHARS:,} a note may hold"))
        record["note"] = note
        sha = cell.get("run_sha256", "").strip().lower()
        if sha and run_sha256 and sha != run_sha256.lower():
            problems.append(Problem(number, "run_sha256", (
                f"this label is for another run (SHA-256 {sha[:12]}…); the run chosen is "
                f"{run_sha256[:12]}…: load the labels with the run they were made on")))
        record["run_sha256"] = sha or (run_sha256 or "")
        chance = cell.get("p_include", "").strip()
        record["p_include"] = np.nan
        if chance:
            try:
                record["p_include"] = float(chance)
                if not 0 < record["p_include"] <= 1:
                    raise ValueError(chance)
            except ValueError:
                problems.append(Problem(number, "p_include", f"{show_value(chance)} is not "
                                        "a probability in (0, 1] (the sample's inclusion "
                                        "probability: leave it as drawn)"))
        drawn = restore_cell(cell.get("drawn_with", "")).strip()
        if drawn and judges is not None and drawn not in judges:
            problems.append(Problem(number, "drawn_with", (
                f"{show_value(drawn)} is not a judge of this run (the judge the sample was "
                f"drawn with: one of {', '.join(judges)})")))
        if record.get(PARTIAL) and record.get("target_found") is False:
            problems.append(Problem(number, PARTIAL, "a partial match is a found target: "
                                    "target_found must say yes"))
        record["drawn_with"] = drawn
        records.append(record)
        if len(problems) > 10 * MAX_LISTED_PROBLEMS and on_error == "raise":
            break
    if problems and on_error == "raise":
        raise LabelError(name, problems)
    if problems:
        bad = {p.row for p in problems}
        records = [r for r in records if r["_row"] not in bad]
        warnings += [f"{escape_controls(name)}: {p} (left out)"
                     for p in problems[:MAX_LISTED_PROBLEMS]]
        if len(problems) > MAX_LISTED_PROBLEMS:
            warnings.append(f"{escape_controls(name)}: {len(problems) - MAX_LISTED_PROBLEMS} "
                            "more faulty rows left out")
    frame = pd.DataFrame.from_records(records, columns=["_row", *LABEL_FRAME_COLUMNS])
    if judged is not None and len(frame):
        known = judged if isinstance(judged, pd.Index) else item_keys(item_frame(judged))
        unknown = ~item_keys(frame).isin(known)
        if unknown.any() and on_error == "skip":
            warnings.append(f"{escape_controls(name)}: {int(unknown.sum())} labels of items "
                            "this run does not have left out")
            frame = frame[~unknown.to_numpy()]
        elif unknown.any():
            raise LabelError(name, [Problem(int(r), "sample", (
                f"no item ({show_value(s)}, {show_value(m)}, {show_value(p)}) in this run"))
                for r, s, m, p in frame.loc[unknown, ["_row", *ITEM_KEY]].itertuples(
                    index=False)], total=int(unknown.sum()))
    if blank:
        warnings.append(f"{name}: {blank} row{'s' * (blank != 1)} without a target_found "
                        "label left out (not labelled yet)")
    frame, more = _drop_duplicates(frame, name)
    warnings += more
    return _typed(frame.drop(columns="_row")), warnings


def _csv_rows(name: str, text: str) -> list[list[str]]:
    """The CSV records of ``text``; a record the :mod:`csv` module cannot read (an unclosed
    quote, text after a closing quote, a cell past its length limit) is a :class:`LabelError`
    naming the record (its row, as a spreadsheet numbers it)."""
    rows: list[list[str]] = []
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        for row in reader:
            rows.append(row)
    except csv.Error as exc:
        reason = str(exc)
        if "field limit" in reason:
            reason = (f"a cell longer than {csv.field_size_limit():,} characters (a note may "
                      f"hold {MAX_NOTE_CHARS:,})")
        elif "expected after" in reason or "end of data" in reason:
            reason = ("a quote that is not closed, or text after a closing quote (a quote "
                      f"inside a cell is written twice: \"\"); the csv reader says: {reason}")
        raise LabelError(name, [Problem(len(rows) + 1, None, f"not CSV: {reason}")]) from None
    return rows


def _bytes(source: str | Path | tuple[str, bytes]) -> tuple[str, bytes]:
    if isinstance(source, tuple):
        return str(source[0]), bytes(source[1])
    path = Path(source)
    size = path.stat().st_size
    if size > MAX_LABEL_BYTES:
        raise _too_big(path.name, size)
    return path.name, path.read_bytes()


def _too_big(name: str, size: int) -> LabelError:
    return LabelError(name, [Problem(None, None, (
        f"the file is {size / 1024**2:.1f} MB, over the {MAX_LABEL_BYTES // 1024**2} MB limit "
        "for a labels sheet (100,000 labels with notes take about 10 MB): is this a labels "
        "file?"))])


def _drop_duplicates(frame: pd.DataFrame, name: str) -> tuple[pd.DataFrame, list[str]]:
    """Identical rows kept once, with a warning; rows of one reviewer and item that differ
    are corrections (the latest counts), named in a warning."""
    warnings: list[str] = []
    if frame.empty:
        return frame, warnings
    same = [c for c in frame.columns if c not in ("_row", "p_include")]
    dup = frame.duplicated(same, keep="first")
    if dup.any():
        rows = ", ".join(map(str, frame.loc[dup, "_row"].head(5)))
        warnings.append(f"{name}: {int(dup.sum())} duplicated row{'s' * int(dup.sum() != 1)} "
                        f"kept once (rows {rows}{', …' if dup.sum() > 5 else ''})")
        frame = frame[~dup.to_numpy()]
    again = frame.duplicated([*ITEM_KEY, "reviewer"], keep="last")
    if again.any():
        warnings.append(f"{name}: {int(again.sum())} label{'s' * int(again.sum() != 1)} "
                        "corrected by a later row of the same reviewer (the latest counts)")
    return frame, warnings


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.reset_index(drop=True)
    for c in _BOOLEAN_LABELS:
        out[c] = pd.array(out[c].tolist(), dtype="boolean") if len(out) else \
            pd.Series(dtype="boolean")
    for c in (*ITEM_KEY, "reviewer", "labelled_at", "note", "run_sha256", "drawn_with"):
        out[c] = out[c].fillna("").astype(str).astype(object)
    out["p_include"] = pd.to_numeric(out["p_include"], errors="coerce").astype(float)
    return out[list(LABEL_FRAME_COLUMNS)]


def labels_frame(rows: Sequence[dict[str, object]]) -> pd.DataFrame:
    """Labels made in the app (dicts with the label columns) as a typed labels frame."""
    if not rows:
        return empty_labels()
    frame = pd.DataFrame.from_records(list(rows))
    for c in LABEL_FRAME_COLUMNS:
        if c not in frame:
            frame[c] = None if c in _BOOLEAN_LABELS else (np.nan if c == "p_include" else "")
    return _typed(frame[list(LABEL_FRAME_COLUMNS)])


def _with_optional_columns(labels: pd.DataFrame) -> pd.DataFrame:
    """``labels`` with the columns the API lets a caller leave out (``run_sha256``,
    ``labelled_at``, ``note``; and ``prompt_type`` for a run without prompt types) added,
    empty."""
    missing = [c for c in ("prompt_type", "labelled_at", "note", "run_sha256")
               if c not in labels]
    return labels.assign(**{c: "" for c in missing}) if missing else labels


def drawn_judge(labels: pd.DataFrame, default: str) -> str:
    """The judge whose decisions made the sample's strata: the labels' ``drawn_with`` when
    they all name one (``kbench audit sample`` and the page write it), else ``default`` (the
    judge audited). Labels of rounds drawn with different judges fall back to ``default``:
    their strata cannot be weighed as one design (docs/metrics/audit.md)."""
    if labels is None or "drawn_with" not in labels or labels.empty:
        return default
    named = {str(v) for v in labels["drawn_with"].dropna() if str(v)}
    return named.pop() if len(named) == 1 else default


def latest(labels: pd.DataFrame) -> pd.DataFrame:
    """The label that counts per reviewer and item: the latest ``labelled_at`` (an empty time
    counts as earliest), then the last row."""
    labels = _with_optional_columns(labels)
    if labels.empty:
        return labels
    order = np.lexsort((np.arange(len(labels)), labels["labelled_at"].astype(str).to_numpy()))
    ranked = labels.iloc[order]
    return ranked.drop_duplicates([*ITEM_KEY, "reviewer"], keep="last") \
        .sort_index(kind="stable")


def human_labels(labels: pd.DataFrame, label: str = "target_found") -> pd.DataFrame:
    """One row per labelled item: ``human`` = the mean of its reviewers' latest labels (1 when
    all say found; ½ when two reviewers disagree) and ``n_reviewers``."""
    current = latest(labels)
    current = current[current[label].notna()]
    values = current[label].astype(float)
    grouped = values.groupby([current[c].astype(str) for c in ITEM_KEY], sort=True)
    out = pd.DataFrame({"human": grouped.mean(), "n_reviewers": grouped.size()})
    return out.reset_index()


def as_human_judge(judged: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """The labels as rows of the judge ``human`` (docs/metrics/agreement.md): each labelled
    item's row of the run with ``judge`` = ``human`` and the reviewers' majority label (a tie
    is missing). The reviewer labels ``target_found`` only: every other label a judge fills
    in (type match, scores, findings) is missing in these rows, never an LLM judge's copied
    (the detector's own fields, its verdict and confidence, stay: every judge copies them)."""
    from kbench_core.agreement import judged_labels

    judged = item_frame(judged)
    items = human_labels(labels)
    if items.empty:
        return judged.iloc[:0]
    llm = judged[judged["judge"].astype(str) != HUMAN]
    labelled = item_keys(items)
    rows = first_per_item(llm).reindex(labelled)
    rows = rows[rows["judge"].notna()].copy()
    vote = items.set_axis(labelled)["human"].reindex(rows.index)
    found = pd.array(np.where(vote > 0.5, True, False), dtype="boolean")
    found[(vote == 0.5).to_numpy()] = pd.NA
    for column in judged_labels(rows):
        if column != "target_found":
            rows[column] = rows[column].iloc[:0].reindex(rows.index)  # missing, same dtype
    rows["target_found"] = found
    if "failed_judgement" in rows:  # a reviewer's label is never a failed judgement
        rows["failed_judgement"] = rows["failed_judgement"].iloc[:0].reindex(rows.index)
    if isinstance(judged["judge"].dtype, pd.CategoricalDtype):
        rows["judge"] = pd.Categorical([HUMAN] * len(rows))
    else:
        rows["judge"] = HUMAN
    return rows.reset_index(drop=True)


def labels_csv(labels: pd.DataFrame) -> str:
    """Labels as CSV text (the label columns first), each text cell through
    :func:`kbench_core.text.csv_cell` so that a spreadsheet runs no note as a formula."""
    first = [c for c in LABEL_FRAME_COLUMNS if c in labels]
    frame = labels[first + [c for c in labels.columns if c not in first]]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([csv_cell(str(c)) for c in frame.columns])
    for row in frame.itertuples(index=False):
        writer.writerow([_cell(v) for v in row])
    return out.getvalue()


def _cell(value: object) -> object:
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return ""
    if isinstance(value, bool | np.bool_):
        return "true" if value else "false"
    if isinstance(value, float | np.floating):
        return repr(float(value))
    return csv_cell(str(value))
