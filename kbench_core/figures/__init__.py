"""Every kbench figure, as pure functions from tidy tables to plotly figures.

The app and the ``kbench`` command line call the same functions, so a paper figure and the
dashboard never disagree. One module per family (:mod:`~kbench_core.figures.bias`, ...) on one
shared look (:mod:`~kbench_core.figures.base`).
"""

from kbench_core.figures.base import PALETTE, TEMPLATE, model_colors
from kbench_core.figures.bias import (
    bci_heatmap,
    bms_curves,
    cas_bars,
    fingerprint_heatmap,
    has_chart,
    mitigation_chart,
)

__all__ = ["PALETTE", "TEMPLATE", "bci_heatmap", "bms_curves", "cas_bars", "fingerprint_heatmap",
           "has_chart", "mitigation_chart", "model_colors"]
