"""The one look of every kbench figure: template, palette, model colours, small helpers.

White background, a colourblind-safe palette (Okabe & Ito 2008), axis titles with units, hover
text naming the item. Every family module builds on :func:`_layout` so that the app and the
``kbench`` command line draw identical figures.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
import plotly.io as pio

__all__ = ["PALETTE", "TEMPLATE", "apply_layout", "model_colors", "rgba"]

# Okabe & Ito (2008), colourblind-safe; black last.
PALETTE: tuple[str, ...] = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9",
                            "#F0E442", "#000000")
TEMPLATE = go.layout.Template(
    layout=go.Layout(
        font=dict(family="Source Sans Pro, Helvetica, Arial, sans-serif", size=13,
                  color="#222"),
        paper_bgcolor="white", plot_bgcolor="white", colorway=list(PALETTE),
        # automargin: long tick labels and axis titles push the margins instead of clipping.
        xaxis=dict(showline=True, linecolor="#444", ticks="outside", gridcolor="#eee",
                   zeroline=False, automargin=True),
        yaxis=dict(showline=True, linecolor="#444", ticks="outside", gridcolor="#eee",
                   zeroline=False, automargin=True),
        legend=dict(bgcolor="rgba(255,255,255,0.8)"),
        margin=dict(l=60, r=20, t=60, b=70),
        hoverlabel=dict(bgcolor="white"),
    )
)
pio.templates["kbench"] = TEMPLATE


def model_colors(models: Sequence[str]) -> dict[str, str]:
    """One colour per model, stable for a given sorted model list."""
    return {m: PALETTE[i % len(PALETTE)] for i, m in enumerate(sorted(map(str, models)))}


def rgba(hex_color: str, alpha: float) -> str:
    """``#RRGGBB`` as a CSS ``rgba()`` colour with the given opacity (for bands and fills)."""
    r, g, b = (int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def apply_layout(fig: go.Figure, title: str, **kwargs: object) -> go.Figure:
    """The kbench template and a left-aligned title; ``kwargs`` go to ``update_layout``."""
    # The title starts where the plot area starts (xref="paper"), clear of the y-axis title.
    fig.update_layout(template="kbench",
                      title=dict(text=title, x=0, xanchor="left", xref="paper"), **kwargs)
    return fig
