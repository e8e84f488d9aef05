"""The one look of every kbench figure: template, palette, model colours, small helpers.

White background, a colourblind-safe palette (Okabe & Ito 2008), axis titles with units, hover
text naming the item. Every family module builds on :func:`apply_layout` so that the app and the
``kbench`` command line draw identical figures.

Figures hold at every width: titles wrap and push the top margin (plotly's title
``automargin``), and :func:`fit_to_width` re-wraps titles, moves a side legend below the plot
and re-grids small multiples for a given export width (``kbench figures --size one-column``).
Sizes are estimated from the text (:func:`text_width`); the browser layout check in
``tests/browser/`` measures the result.

The helpers live in sibling modules, all re-exported here (``from kbench_core.figures.base
import ...`` keeps working):

==========  ================================================================================
module      holds
==========  ================================================================================
``style``   palette, symbols, dashes, the template, :func:`model_colors`, :class:`Style`
``layout``  :func:`apply_layout`, :func:`wrap`, legends, panel grids, :func:`fit_to_width`
``labels``  :func:`shorten`, :func:`display_labels`, :func:`category_ticks`
``heat``    :func:`heatmap_figure`, :func:`heat_cell`
``pages``   :func:`row_pages` (long figures cut into pages)
==========  ================================================================================
"""

from __future__ import annotations

from .heat import (  # noqa: F401  (re-exported: the names of the old module)
    MAX_HEAT_ROWS,
    heat_cell,
    heatmap_figure,
)
from .labels import (  # noqa: F401  (re-exported: the names of the old module)
    COMPOSITE,
    MIN_LABEL_CHARS,
    NAME_ROW_PX,
    SEPARATORS,
    _abbreviate,
    _middle_cut,
    _shorten_composite,
    _word_counts,
    category_ticks,
    display_labels,
    name_rows,
    shorten,
    wrap_label,
)
from .layout import (  # noqa: F401  (re-exported: the names of the old module)
    MIN_TITLE_SIZE,
    NARROW,
    TITLE_LINE_PX,
    _axis_name,
    _flat_colorbars,
    _heatmap_text,
    _recut_ticks,
    _regrid,
    _title,
    _title_lines,
    apply_layout,
    clamp_note,
    display_names,
    edge_clamp,
    fit_to_width,
    legend_below,
    legend_below_update,
    legend_labels,
    legend_rows,
    panel_grid,
    panel_titles,
    panels_update,
    set_panels,
    text_width,
    title_line_px,
    titled,
    with_legend_below,
    wrap,
)
from .pages import (  # noqa: F401  (re-exported: the names of the old module)
    _MARKER_ARRAYS,
    _ROW_ARRAYS,
    _subset_trace,
    row_pages,
)
from .style import (  # noqa: F401  (re-exported: the names of the old module)
    APP_WIDTH,
    CHAR_EM,
    DASHES,
    EXPORT_SLACK,
    FONT_SIZE,
    LEGEND_SIDE_MAX,
    PAGE_PX,
    PALETTE,
    PATTERNS,
    SYMBOLS,
    TEMPLATE,
    TITLE_SIZE,
    Style,
    distinct_styles,
    model_colors,
    rgba,
)

__all__ = ["APP_WIDTH", "DASHES", "PALETTE", "PATTERNS", "SYMBOLS", "TEMPLATE", "Style",
           "apply_layout", "distinct_styles", "edge_clamp", "fit_to_width", "legend_below",
           "model_colors", "rgba", "text_width", "wrap"]
