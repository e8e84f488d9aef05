"""The six KahneBench metrics per model × bias, and the cognitive fingerprint
(``docs/metrics/bias.md``).

Every function takes a validated ``bias`` frame (see :mod:`kbench_core.io`) and returns a tidy
DataFrame with one row per model × bias, computed with groupbys over all groups at once.
Defaults carry the fixes of the metrics review (``docs/metrics/bias.md``); each
original behaviour is an option, so published numbers can be reproduced:

========================  ==========================  =====================================
review issue              default here                original (option)
========================  ==========================  =====================================
B1 positional weights     weights keyed by name       (same values)
B3 sensitivity spacing    ``spacing="ordinal"``       ``spacing="observed"``
C1 BCI sample std         ``std="population"``        ``std="sample"``
M1 BCI includes control   ``rows="treatment"``        ``rows="all"``
F1 RCI sample variance    ``variance="population"``   ``variance="sample"``
F2 RCI no data = 1.0      NaN and ``has_data`` False  (not reproduced: it hid missing data)
G1 CAS no data = 0.5      NaN, ``has_confidence_data``
G2 CAS unknown_rate       ``missing_confidence_rate``
E2 HAS fixed threshold    ``relative=False``          ``relative=True`` scales by h
========================  ==========================  =====================================

Undefined values are NaN, never a made-up number; the one kept convention of the seed is that
an empty control gives a control mean of 0 in BMS.

The package's modules, all re-exported here (one per metric, like ``vuln/`` and ``replication/``):

===============  ==================================================================
module           holds
===============  ==================================================================
``bms``          :func:`bms` (bias magnitude score) and its bootstrap
``bci``          :func:`bci` (bias consistency index), :func:`domain_means`
``bmp``          :func:`bmp` (bias mitigation potential), :func:`infer_method_kind`
``has``          :func:`has` (human alignment score)
``rci``          :func:`rci` (response consistency index)
``cas``          :func:`cas` (calibration awareness score)
``fingerprint``  :class:`Fingerprint`, :func:`fingerprint`, :func:`with_threshold`
``_common``      constants, :func:`human_baselines`, trials as integer codes, group stats
===============  ==================================================================
"""

from __future__ import annotations

from ._common import (  # noqa: F401  (re-exported: the names of the old module)
    AGGREGATION_WEIGHTS,
    HIGH_UNKNOWN,
    INTENSITY_WEIGHTS,
    KEY,
    TOLERANCE,
    UNSCORED_ADVICE,
    WEIGHT,
    _above,
    _baseline_file,
    _below,
    _codes,
    _frame,
    _lookup,
    _prepare,
    _shipped_baselines,
    _Stats,
    _stats,
    _Trials,
    human_baselines,
    prepare,
    repeated,
    row_weights,
    rows_of,
    scored_share,
)
from .bci import (  # noqa: F401  (re-exported: the names of the old module)
    _bci,
    _domain_stats,
    bci,
    domain_means,
)
from .bmp import (  # noqa: F401  (re-exported: the names of the old module)
    _bmp,
    _infer_kinds,
    bmp,
    infer_method_kind,
)
from .bms import (  # noqa: F401  (re-exported: the names of the old module)
    _bms,
    _bms_bootstrap,
    _bms_cells,
    _bms_formula,
    _Cells,
    _magnitudes,
    _renormalised,
    _slopes,
    bms,
)
from .cas import (  # noqa: F401  (re-exported: the names of the old module)
    _cas,
    cas,
)
from .fingerprint import (  # noqa: F401  (re-exported: the names of the old module)
    Fingerprint,
    _by_model,
    _categories,
    fingerprint,
    with_threshold,
)
from .has import (  # noqa: F401  (re-exported: the names of the old module)
    _alignment_range,
    _crosses,
    _direction,
    _direction_uncertain,
    _has,
    has,
)
from .rci import (  # noqa: F401  (re-exported: the names of the old module)
    _rci,
    rci,
)

__all__ = [
    "AGGREGATION_WEIGHTS", "INTENSITY_WEIGHTS", "Fingerprint", "bci", "bmp", "bms", "cas",
    "domain_means", "fingerprint", "has", "human_baselines", "infer_method_kind", "prepare",
    "rci", "repeated", "row_weights", "rows_of", "scored_share", "with_threshold",
]
