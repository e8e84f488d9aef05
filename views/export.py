"""Export: choose runs, figures and tables, download one ZIP (or the offline HTML report)."""

import streamlit as st

from kbench_app import kit, state
from kbench_app.ui import plain
from kbench_core.bundle_export import ExportChoice, export_zip, not_made, planned_files
from kbench_core.export import PAPER_SIZES
from kbench_core.families import items_for, unavailable
from kbench_core.report import report_html
from kbench_core.text import count_noun

st.title("Export")
st.caption("Paper figures and tables of the loaded runs, made by the same functions as the "
           "`kbench figures` command. Every file carries its provenance (kbench version, run "
           "hashes, options); the ZIP adds a provenance.json listing every file.")
registry = state.registry()
runs = registry.runs
if not runs:
    st.info("No run is loaded. Add one on the Runs page.")
    st.stop()

chosen = kit.multiselect("Runs", list(runs), key="export_runs", default=list(runs))
usable = registry.usable(chosen)  # a saved run is read and validated on first use
for name in chosen:
    if name not in usable:
        st.error(f"**{plain(name)}** cannot be used and is left out: its saved file no longer "
                 "loads (see the Runs page).", icon=":material/error:")
chosen_runs = list(usable.values())
for run in chosen_runs:
    why = unavailable(run.kind, run.frame)
    if why:
        st.warning(f"**{plain(run.name)}** has nothing to export and is left out. {why}",
                   icon=":material/warning:")
offered: dict[str, str] = {}
for run in chosen_runs:
    for item in items_for(run.kind):
        offered.setdefault(item.name, f"{item.title} ({item.what}, {run.kind})")
if chosen_runs and not offered:
    st.info("No figures or tables are defined for these kinds of runs yet.")
items = kit.multiselect("Figures and tables", list(offered), key="export_items",
                        default=list(offered), format_func=offered.get)
c1, c2, c3, c4 = st.columns(4)
figure_formats = kit.multiselect("Figure formats", ["pdf", "svg", "png"], container=c1,
                                 default=["pdf", "png"], key="export_figure_formats")
table_formats = kit.multiselect("Table formats", ["csv", "latex", "markdown"], container=c2,
                                default=["csv", "latex"], key="export_table_formats")
size = kit.select("Figure size", ["screen", "two-column", "one-column"], key="export_size",
                  container=c3, format_func={"screen": "screen (900 × 520 px)",
                                             "two-column": "two-column paper (7 in)",
                                             "one-column": "one-column paper (3.5 in)"}.get)
scale = kit.slider("PNG scale", 1.0, 4.0, key="export_scale", default=2.0, step=0.5,
                   container=c4)

plan = planned_files(chosen_runs, ExportChoice(items=tuple(items)))
st.caption(f"{len(plan)} items from {count_noun(len(chosen_runs), 'run')}; items that make "
           "one figure per bias or model (BMS curves, domain heatmaps) expand when exported.")
if not plan:
    kit.stop()

width, height = PAPER_SIZES[size][0], None  # heights: each figure's own
if st.button("Build the ZIP", type="primary", icon=":material/folder_zip:", key="export_build"):
    bar = st.progress(0.0, text="Starting the figure renderer...")
    data = export_zip(chosen_runs, ExportChoice(
        items=tuple(items), figure_formats=tuple(figure_formats),
        table_formats=tuple(table_formats), width=width, height=height, scale=scale),
        progress=lambda fraction, name: bar.progress(fraction, text=f"Wrote {name}"))
    bar.empty()
    state.export_zip(data)
if (data := state.export_zip()) is not None:
    for left in not_made(data):
        st.warning(f"**{plain(left['item'])}** of **{plain(left['run'])}** is not in the ZIP: "
                   f"{plain(left['why'])}", icon=":material/warning:")
    st.download_button(f"Download kbench-export.zip ({len(data) / 1024:,.0f} KB)", data,
                       file_name="kbench-export.zip", mime="application/zip",
                       icon=":material/download:", key="export_download", on_click="ignore")

st.subheader("Interactive report")
st.caption("One self-contained HTML file with every figure (interactive) and table of the "
           "chosen runs; it opens offline, for reviewers who install nothing.")
st.download_button("Download report.html", lambda: report_html(chosen_runs).encode(),
                   file_name="kbench-report.html", mime="text/html", on_click="ignore",
                   icon=":material/description:", key="export_report")
kit.done()
