"""BlockBench judge outputs (``docs/formats.md``): a folder tree or a list of multi-judge records.

Two formats become ``judged`` rows (one per sample × detector × prompt type × judge):

**Judge-output folder** (also as ``.zip``, ``.tar`` or ``.tar.gz``, one top folder allowed)::

    <detector>/judge_outputs/j_<sample>_<prompt_type>.json    judge record
    <detector>/sample_metrics/m_<sample>_<prompt_type>.json   carries ground_truth_vulnerable
    <any>.json                                                 optional ground-truth list

The detector is the sub-folder's name; everything else comes from the record (the key is its
``sample_id``; the prompt type is ``prompt_type``, else the file name's tail).

**Multi-judge records**: a JSON list (optionally ``.gz``) of records carrying
``sample_id, detector_model, judge_model, prompt_type`` besides the judge record's fields.

======================================================  ===================================
BlockBench field                                        kbench column
======================================================  ===================================
``overall_verdict.said_vulnerable``                     ``said_vulnerable``
``overall_verdict.confidence_expressed``                ``confidence``
``target_assessment.found``; newer judges               ``target_found`` (``partial_found``
``complete_found`` or ``partial_found``                 kept: partial credit)
``target_assessment.false_positive_detected`` (key      a fixed (safe) contract; the value
present)                                                is ``claims_fixed_target``
``target_assessment.type_match``                        ``type_match`` (lower case)
``root_cause_identification.score``, ``attack_vector_   ``rcir``, ``ava``, ``fsv`` (target
validity.score``, ``fix_suggestion_validity.score``     found only; null = not assessed)
``findings[].classification`` (else ``summary``)        the ``n_*`` finding counts; other
                                                        classes → ``n_other_invalid``
``location_claimed`` of the target's finding            ``claimed_lines``
ground truth ``is_vulnerable, severity,                 ``is_vulnerable, severity,
vulnerability_type, vulnerable_location.line_numbers``  vuln_type, true_lines``
======================================================  ===================================

The findings themselves are kept as JSON text in ``findings`` for drill-downs.

**Difficulty.** BlockBench's difficulty-stratified ("DS") sample ids carry their tier,
``<set>_t<k>_<nnn>`` (``ds_t1_001``): the reader sets the optional ``difficulty`` column to
``t<k>`` for them (empty for other ids; the column is left out when no id carries a tier), so
``vuln.tiers(..., by=("model", "difficulty"))`` gives the paper's per-tier rates.

**Messy records, as real judges write them.** Judge output always holds some failed or
malformed judgements; they are judge noise, never a load error (only canonical files raise). A
record that cannot be read as a judgement (:func:`judgement_problem`: an ``error`` field, an
unreadable ``overall_verdict``, a ``target_assessment`` that is empty, not an object, or whose
found key is absent, null or not true/false, a missing key field, a judge file that is not JSON)
is a **failed judgement**: left out (missing, never a "no"), counted in the warnings with the
first few named and their reason, and listed in ``meta["failed_judgements"]``. A record with
``variant: "differential"`` or a ``false_positive_detected`` key is a fixed contract even when
its assessment is empty: with a readable verdict it is kept, ``target_found`` false and
``claims_fixed_target`` empty unless the judge said true or false. An unreadable optional field
(a confidence outside [0, 1], an unknown type_match, a score that is not a number in [0, 1], a
finding that is not an object) is left empty and counted; nothing is recovered by guessing.

Ground truth comes from ``load_run(..., ground_truth=FILE)`` first, else a ground-truth JSON in
the bundle, else (folder) the ``sample_metrics`` file's ``ground_truth_vulnerable``, else
(multi-judge records, which carry none) it is inferred: vulnerable unless the record is
marked fixed (``variant: "differential"`` or ``false_positive_detected``), with a warning.
A folder sample with no ground truth anywhere is an error naming it. Values are passed on as
written and validated by :mod:`kbench_core.io`, so a bad confidence is reported as "file
detector_a/judge_outputs/j_x_direct.json, field 'confidence'".

The package's modules, all re-exported here:

===========  =====================================================================
module       holds
===========  =====================================================================
``lines``    column sets, limits, :func:`parse_lines`, JSON and gzip reading
``truth``    the ground truth of each sample
``rows``     one judgement to one row; :func:`difficulty`
``formats``  :data:`FORMATS` (judge-output folders, multi-record JSON)
===========  =====================================================================
"""

from __future__ import annotations

from .formats import (  # noqa: F401  (re-exported: the names of the old module)
    FORMATS,
    _from_files,
    _from_json,
    _judge_file,
    _matches_files,
    _matches_json,
    _metrics_file,
    _multi_records,
    _prompt_from_name,
)
from .lines import (  # noqa: F401  (re-exported: the names of the old module)
    _L_PREFIX,
    _LINES_WORD,
    _MULTI_SIGNATURE,
    _RANGE,
    CLASSIFICATION_COLUMNS,
    MAX_GROUND_TRUTH_BYTES,
    MAX_LINES_PER_RANGE,
    SCORES,
    SUMMARY_COLUMNS,
    _gunzip,
    _loads,
    _lower,
    _text,
    parse_lines,
)
from .rows import (  # noqa: F401  (re-exported: the names of the old module)
    _DIFFICULTY,
    _apply_truth,
    _claimed_lines,
    _count,
    _failure_note,
    _finding_counts,
    _fixed,
    _frame,
    _noise_note,
    _note,
    _row,
    _score,
    _unit_number,
    _unknown_note,
    difficulty,
    judgement_problem,
)
from .truth import (  # noqa: F401  (re-exported: the names of the old module)
    _given_ground_truth,
    _ground_truth,
    _ground_truth_records,
)

__all__ = ["FORMATS", "difficulty", "parse_lines"]
