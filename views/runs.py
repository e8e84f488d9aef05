"""Runs: upload, list, inspect and remove runs; every bad file gets its own error."""

import streamlit as st

from kbench_app import kit, state
from kbench_app.ui import code, plain
from kbench_core.io import DEFAULT_MAX_BYTES
from kbench_core.text import count_noun

RUNS_PER_PAGE = 20  # expanders drawn at once

UPLOAD_TYPES = ["csv", "tsv", "tab", "txt", "json", "jsonl", "ndjson", "parquet", "pq", "gz",
                "zip", "tar", "tgz"]


registry = state.registry()
seen = state.seen_uploads()

st.title("Runs")
st.caption(
    "Load benchmark runs: cognitive-bias trials, replication tests or study summaries, and "
    "LLM-judged vulnerability detections, as CSV, TSV, JSON, JSON Lines or Parquet (each may "
    f"be gzipped, up to {DEFAULT_MAX_BYTES // 1024**2} MB), or a benchmark's own output "
    "(KahneBench result JSON, HumanStudy-Bench tables, BlockBench judge outputs as .zip or "
    ".tar.gz). The kind is detected from the content; every row is validated."
)

if state.demo():
    with st.container(border=True):
        st.markdown("#### :material/tour: Guided tour")
        st.markdown(
            "The first two families open on **real released results** (MIT-licensed, "
            "unmodified; see `sample_data/real/README.md`); the vulnerability family on a "
            "synthetic run with planted effects, as BlockBench's real output has no licence.\n\n"
            "1. **Cognitive biases**: KahneBench's fingerprint reports of eleven frontier "
            "models, shown as published. The ranking by susceptibility carries its interval "
            "over the 15 biases: most neighbours cannot be told apart. Base-rate neglect and "
            "the endowment effect dominate. A report has no trials, so there are no intervals "
            "on its numbers; switch *Show* to the trial run for intervals and drill-downs.\n"
            "2. **Replication**: HumanStudy-Bench's published leaderboard, 63 configurations. "
            "The published PAS and ECS sit under their own names beside the means of the "
            "per-study values (for one configuration the published ECS is 0.249, the mean of "
            "its per-study ECS 0.008); rank intervals over the 12 studies span tens of places.\n"
            "3. **Vulnerability detection** (synthetic): the tier leaderboard; move the SUI "
            "weights and watch the ranking, then compare uniform and equal-mass reliability "
            "bins.\n"
            "4. **Judge agreement**: how much the headline numbers depend on the judge.\n"
            "5. **Export**: every figure as PDF/SVG/PNG and every table as CSV/LaTeX, or one "
            "offline HTML report.\n\n"
            "Every view's state is in the address bar: copy it to share exactly what you see.")
        with st.container(horizontal=True):
            for path, label in (("views/bias.py", "Cognitive biases"),
                                ("views/replication.py", "Replication"),
                                ("views/vuln.py", "Vulnerability detection"),
                                ("views/agreement.py", "Judge agreement"),
                                ("views/export.py", "Export")):
                if (state.ROOT / path).exists():
                    st.page_link(path, label=label, icon=":material/arrow_forward:")

if registry.workspace is None:
    st.caption(":material/info: Uploaded runs last for this browser session only: nothing is "
               "written to disk. Start the app with `kbench app --workspace DIR` to keep them "
               "between sessions.")
else:
    st.caption(f":material/save: Uploaded runs are kept in the workspace "
               f"{code(registry.workspace.directory)} and come back on the next start.")
uploads = st.file_uploader(
    "Upload runs", accept_multiple_files=True, type=UPLOAD_TYPES, key="runs_uploader",
    help="Several files at once. A file that fails validation is reported by name, row and "
         "field; the runs already loaded stay.",
)
group = kit.toggle(
    "Files of one format make one run", key="runs_group_uploads", default=True, in_url=False,
    help="Several files of a benchmark that writes one file per model (KahneBench "
         "fingerprint reports), uploaded together, are loaded as one run, as their folder "
         "would be. Switch off before uploading to load each file as a run of its own.")
new_files = [f for f in uploads or [] if f.file_id not in seen]
if new_files:
    # Seen before loading: whatever one file does, no rerun loads (or reports) it again.
    seen.update(f.file_id for f in new_files)
    bar = st.progress(0.0, text=f"Loading {count_noun(len(new_files), 'file')}...")
    report = state.add_uploads(registry, new_files, progress=lambda fraction, text: bar.progress(
        fraction, text=plain(text)), group=group)
    bar.empty()
    for name in report.added:
        files = registry.runs[name].meta.get("files", ()) if name in registry.runs else ()
        together = f" ({len(files)} files as one run)" if len(files) > 1 else ""
        st.toast(f"Loaded {plain(name)}{together}", icon=":material/check_circle:")
    for message in report.duplicates:
        # File and run names are a stranger's text: no Markdown link or image from them.
        st.info(plain(message), icon=":material/content_copy:")
    added = [registry.runs[name] for name in report.added if name in registry.runs]
    # an upload already loaded is what the user meant to look at, as a new one: offered
    # below and opened first on its pages (the bundled real runs, uploaded again)
    shown = report.added + [n for n in report.existing if n not in report.added]
    state.focus(shown)  # every page showing their kind opens on them first
    if len(added) == 1 and not report.errors and not report.duplicates:
        page = state.select_run(added[0])  # one new run: show it on its family's page
        if page is not None:
            st.switch_page(page)
    state.just_added(shown)

just_added = [n for n in state.just_added() if n in registry.runs]
if just_added:
    with st.container(border=True):
        st.markdown(f"**{count_noun(len(just_added), 'run')} loaded.** Open one on its page:")
        with st.container(horizontal=True):
            for name in just_added:
                if st.button(plain(name), key=f"open::{name}", icon=":material/open_in_new:"):
                    state.focus([name])
                    page = state.select_run(registry.runs[name])
                    if page is not None:
                        st.switch_page(page)

if gone := state.gone_to_tell("runs"):  # another session removed them from the workspace
    listed = ", ".join(code(name) for name in gone[:20])
    more = f" and {len(gone) - 20:,} more" if len(gone) > 20 else ""
    st.warning(f"{count_noun(len(gone), 'run')} removed from the workspace by another session "
               f"(or {'its' if len(gone) == 1 else 'their'} files deleted) since this session "
               f"loaded {'it' if len(gone) == 1 else 'them'}: {listed}{more}. No longer "
               "listed or used here.", icon=":material/delete_sweep:")

for filename, message in list(registry.errors.items()):
    with st.container(border=True):
        st.error(f"Could not load **{plain(filename)}**", icon=":material/error:")
        st.code(message, language=None, wrap_lines=True)
        st.button("Dismiss", key=f"dismiss::{filename}", on_click=registry.dismiss_error,
                  args=(filename,))

summary = registry.summary()
st.subheader(f"{len(summary)} run{'s' * (len(summary) != 1)} loaded")
if summary.empty:
    st.info("No runs yet: upload files above, or start with `kbench app FILE...`.")
else:
    problems = ["problem"] if summary["problem"].astype(bool).any() else []
    st.dataframe(
        summary, hide_index=True, width="stretch",
        column_order=["name", "kind", "models", "rows", "warnings", "size_kb", "source",
                      *problems],
        column_config={
            "name": st.column_config.TextColumn("Run"),
            "kind": st.column_config.TextColumn("Kind"),
            "models": st.column_config.TextColumn("Models", width="medium"),
            "rows": st.column_config.NumberColumn("Rows", format="localized"),
            "warnings": st.column_config.NumberColumn("Warnings"),
            "size_kb": st.column_config.NumberColumn("Size (KB)"),
            "source": st.column_config.TextColumn("File"),
            "problem": st.column_config.TextColumn("Cannot be used", width="medium"),
        },
    )
    names = list(registry.runs)
    if len(names) > RUNS_PER_PAGE:
        # One expander per run costs a page draw per run (1,500 runs: two minutes): a filter
        # and pages of RUNS_PER_PAGE.
        with st.container(horizontal=True, vertical_alignment="bottom"):
            needle = kit.text("Find a run", key="runs_find", placeholder="part of a name",
                              help="Shows the runs whose name holds this text.")
            if needle:
                names = [n for n in names if needle.lower() in n.lower()]
            pages = max(1, -(-len(names) // RUNS_PER_PAGE))
            page = kit.select("Page", list(range(1, pages + 1)), key="runs_page", default=1,
                              in_url=False)
        first = (min(int(page), pages) - 1) * RUNS_PER_PAGE
        st.caption(f"Runs {first + 1:,}–{min(first + RUNS_PER_PAGE, len(names)):,} of "
                   f"{count_noun(len(names), 'run')}" if names else "No run matches.")
        names = names[first:first + RUNS_PER_PAGE]
    # A saved run is read and validated when first shown (its rows previewed below), not at
    # start: a damaged or replaced file is named here, and only its own expander says so.
    usable = registry.usable(names)
    for name in names:
        run = registry.runs[name]
        label = (f"{plain(name)} · {run.kind} · {len(run):,} rows · "
                 f"{count_noun(len(run.models), 'model')}"
                 + (" · cannot be used" if name not in usable else ""))
        with st.expander(label, icon=None if name in usable else ":material/error:"):
            st.text(f"Run: {name}\nModels: {', '.join(run.models)}\n"
                    f"Source: {run.meta.get('source', '')} ({run.meta.get('format', '')})\n"
                    f"SHA-256: {run.content_hash}")
            if run.warnings:
                st.warning(f"{count_noun(len(run.warnings), 'warning')}", icon=":material/warning:")
                st.code("\n".join(run.warnings), language=None, wrap_lines=True)
            if name in usable:
                st.dataframe(run.frame.head(100), hide_index=True, width="stretch")
            else:
                st.error("The saved file of this run cannot be used:", icon=":material/error:")
                st.code(registry.problem(name), language=None, wrap_lines=True)
            if parts := state.grouped_files(name, run):  # files uploaded together as one run
                st.button(f"Load its {len(parts)} files as separate runs",
                          key=f"split::{name}", icon=":material/call_split:",
                          on_click=state.split_group, args=(registry, name))
            st.button("Remove run", key=f"remove::{name}", on_click=registry.remove,
                      args=(name,), icon=":material/delete:")
