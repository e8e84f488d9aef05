"""The judge audit (``docs/metrics/audit.md``): a reviewer labels a sample of an LLM judge's
decisions, and every judged rate is corrected for the judge's measured errors.

* :func:`sample` draws the items to label (stratified over models and the judge's decision);
* :func:`read_labels` reads a filled sheet back, :func:`labels_csv` writes one;
* :func:`judge_accuracy` gives each judge's sensitivity, specificity, accuracy and κ against
  the reviewers; :func:`corrected` each model's judge-only, human-only and corrected rate;
  :func:`labels_needed` how many more labels a target interval needs;
* :func:`judge_errors` where the judge goes wrong and :func:`overruled` the items the reviewer
  overruled; :class:`LabelStore` keeps a workspace's labels, append-only.
"""

from kbench_core.audit._items import MAJORITY, evidence, judge_choices, population
from kbench_core.audit.accuracy import judge_accuracy, reviewer_kappa
from kbench_core.audit.design import design
from kbench_core.audit.estimate import METHODS, corrected, labels_needed
from kbench_core.audit.labels import (
    LABEL_FRAME_COLUMNS,
    LabelError,
    as_human_judge,
    drawn_judge,
    empty_labels,
    human_labels,
    labels_csv,
    labels_frame,
    latest,
    now_utc,
    read_labels,
)
from kbench_core.audit.sampling import LABEL_COLUMNS, allocate, blank_sheet, sample

__all__ = [
    "LABEL_COLUMNS", "LABEL_FRAME_COLUMNS", "MAJORITY", "METHODS", "LabelError", "allocate",
    "as_human_judge", "blank_sheet", "corrected", "design", "drawn_judge", "empty_labels",
    "evidence", "human_labels", "judge_accuracy", "judge_choices", "labels_csv",
    "labels_frame", "labels_needed", "latest", "now_utc", "population", "read_labels",
    "reviewer_kappa", "sample",
]
