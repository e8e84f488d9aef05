"""Models: one model across benchmarks — its card per family, the coverage of models ×
families, the newest result per model × benchmark, and the aliases that join raw ids."""

import streamlit as st

from kbench_app import cache, kit
from kbench_app import models as page
from kbench_app.ui import plain, shown, table_config
from kbench_core import profile as profiles
from kbench_core.aliases import AliasError, AliasTable, load_aliases

K = page.Keys
MAX_ALIASES_BYTES = 1024**2

st.title("Models")
runs = kit.runs_of(page.PROFILE_KINDS)
if not runs:
    st.info("No run is loaded. Add runs of any family on the Runs page: a model's results "
            "across benchmarks are joined here by its canonical id.")
    kit.stop()

aliases: AliasTable = st.session_state.get(K.ALIASES, AliasTable())
with st.expander(f"Aliases ({len(aliases.aliases)} declared)", icon=":material/link:"):
    st.caption("Raw ids are joined by rule: lowercase, provider prefix and date suffix "
               "dropped, `_`, `.` and `-` alike inside version numbers. Add what the rule "
               "cannot see: upload an aliases TOML file (`[aliases]` then "
               "`\"canonical\" = [\"raw\", ...]`) or add one line here.")
    upload = st.file_uploader("Aliases TOML", type=["toml"], key=K.UPLOAD)
    if upload is not None and st.session_state.get(f"{K.UPLOAD}_seen") != upload.file_id:
        st.session_state[f"{K.UPLOAD}_seen"] = upload.file_id
        try:
            if upload.size > MAX_ALIASES_BYTES:
                raise AliasError(f"{upload.name}: an aliases file over 1 MB is not read")
            aliases = load_aliases(upload.getvalue(), name=upload.name)
            st.session_state[K.ALIASES] = aliases
        except AliasError as err:
            st.error("The aliases file was not used:", icon=":material/error:")
            st.code(str(err), language=None, wrap_lines=True)
    with st.form("models_alias_form", border=False):
        left, right = st.columns(2)
        raw = left.text_input("Raw id", key=K.RAW)
        canonical = right.text_input("Canonical id", key=K.CANONICAL)
        if st.form_submit_button("Add alias", icon=":material/add_link:"):
            try:
                aliases = aliases.with_alias(raw, canonical)
                st.session_state[K.ALIASES] = aliases
            except AliasError as err:
                st.error("The alias was not added:", icon=":material/error:")
                st.code(str(err), language=None, wrap_lines=True)
    if aliases.aliases:
        st.dataframe(
            {"raw id": list(aliases.aliases), "canonical id": list(aliases.aliases.values())},
            hide_index=True, width="stretch", key="models_aliases_table")
        left, right = st.columns(2)
        left.download_button("Download aliases.toml", aliases.as_toml(), "aliases.toml",
                             mime="application/toml", icon=":material/download:")
        if right.button("Clear aliases", icon=":material/link_off:"):
            st.session_state.pop(K.ALIASES, None)
            st.rerun()

chosen = list(runs.values())
table = cache.cached(profiles.profile, chosen, runs=chosen, aliases=aliases,
                     spinner="Profiling the models...")
if not len(table):
    st.info("The loaded runs have no model with a headline metric.")
    kit.stop()

raw_by_model = table.groupby("model")["raw_ids"].agg(lambda r: list(dict.fromkeys(r)))
models = sorted(raw_by_model.index)
families = table.groupby("model")["family"].nunique()
# The first model with the most families: the page opens on what joins
default = max(models, key=lambda m: (families[m], -models.index(m)))
model = kit.select("Model", models, key=K.MODEL, default=default,
                   format_func=lambda m: page.model_label(m, raw_by_model[m]),
                   help="Canonical ids; the raw ids joined under each follow the arrow.")
mine = table[table["model"] == model]

st.caption("Every raw id joined under this model, and how:")
joined = (mine[["raw_ids", "run", "family", "configuration", "joined_by"]]
          .drop_duplicates().rename(columns={"raw_ids": "raw id", "joined_by": "joined by"}))
st.dataframe(joined, hide_index=True, width="stretch", key="models_joined")

heads = profiles.headline_rows(mine)
for family in sorted(heads["family"].unique()):
    rows = heads[heads["family"] == family]
    for run_name in dict.fromkeys(rows["run"]):
        here = rows[rows["run"] == run_name]
        run = runs[run_name]
        with st.container(border=True):
            st.subheader(f"{page.FAMILY_TITLES.get(family, family)}")
            st.caption(f"Run {plain(run_name)} ({run.kind})")
            for _, row in here.iterrows():
                label = page.metric_label(row["metric"])
                if row["configuration"]:
                    label += f" · {plain(row['configuration'])}"  # from the raw id: inert
                left, right = st.columns([2, 3])
                left.metric(label, page.headline_text(row), help="95% interval in brackets")
                right.caption(page.rank_text(row) + f" · n = {row['n']:g}"
                              if row["n"] == row["n"] else page.rank_text(row))
            figure = cache.cached(page.card_figure, run, list(here["raw_ids"]), runs=[run],
                                  selection=("card", tuple(here["raw_ids"])),
                                  spinner="Drawing...")
            if figure is not None:
                kit.chart(figure, f"profile_{family}", runs=[run],
                          key=f"models_card_{family}_{chosen.index(run)}")

with st.expander(f"Every metric of {plain(model)}", icon=":material/table:"):
    kit.table(mine, f"profile_{model}", runs=chosen, key="models_profile_table",
              view=shown(mine), config=table_config(mine))

st.subheader("Coverage")
coverage = profiles.coverage(table)
complete = kit.toggle("Complete coverage only", key=K.COMPLETE, default=False,
                      help="Only the models with results in every family loaded.")
cover = coverage.table[coverage.table["complete"]] if complete else coverage.table
st.caption(f"Runs holding each model, per family ({', '.join(coverage.families)}); no mean "
           "across families is offered: their metrics measure different things.")
kit.table(cover, "coverage", runs=chosen, key="models_coverage_table")

st.subheader("Newest result per model and benchmark")
latest = profiles.newest(profiles.headline_rows(table), list(runs))
st.caption("Where several runs hold a model's result for a benchmark, the run loaded last is "
           "shown and the others are listed.")
view = shown(latest[["model", "family", "configuration", "metric", "value", "value_low",
                     "value_high", "rank", "n_models", "run", "others"]])
kit.table(latest, "newest", runs=chosen, key="models_newest_table", view=view,
          config=table_config(view))
kit.done()
