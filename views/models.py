"""Models: one model across benchmarks — its compact profile (one row per benchmark run),
the figure of each family where one says more, the coverage of models × families, the newest
result per model × benchmark, the aliases that join raw ids and the joins suggested."""

import streamlit as st

from kbench_app import cache, kit
from kbench_app import models as page
from kbench_app.downloads import table_downloads
from kbench_app.ui import plain, shown, table_config
from kbench_core import profile as profiles
from kbench_core.aliases import (
    MAX_ALIASES_BYTES,
    AliasError,
    AliasTable,
    load_aliases,
    near_matches,
)

K = page.Keys

st.title("Models")
runs = kit.runs_of(page.profile_kinds())
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
            # every failure of reading it is an AliasError naming the file and the reason
            # (kbench_core.aliases.load_aliases), so a stranger's file ends here
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

near = near_matches(table)  # a few groupbys of the profile: not worth a cache entry
if len(near):
    with st.expander(f"Suggested joins ({len(near)})", icon=":material/join_inner:"):
        st.caption("Canonical ids the rule left apart that may name one model (no run holds "
                   "both). Nothing is joined until you accept it: an accepted join is an alias "
                   "(shown above, downloadable as aliases.toml).")
        st.dataframe(near.rename(columns={"model": "id", "suggested": "join under",
                                          "raw_ids": "raw ids", "suggested_raw_ids":
                                          "its raw ids", "suggested_runs": "its runs"}),
                     hide_index=True, width="stretch", key="models_near_table")
        labels = {page.suggestion_label(row): (row["model"], row["suggested"])
                  for _, row in near.iterrows()}
        picked = st.multiselect("Joins to accept", list(labels), key=K.SUGGESTED)
        # a callback: it runs before the page, so the aliases and the cleared choice are
        # what the whole next run sees
        st.button("Accept the chosen joins", icon=":material/add_link:", disabled=not picked,
                  on_click=page.accept_joins, args=(aliases, labels))
        if st.session_state.get(K.SUGGESTED_ERROR):
            st.error("The join was not accepted:", icon=":material/error:")
            st.code(st.session_state[K.SUGGESTED_ERROR], language=None, wrap_lines=True)

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
st.subheader("Profile")
st.caption("One row per benchmark run (and HumanStudy-Bench configuration): the headline "
           "metric with its 95% interval, the model's rank among the run's models (1 = best) "
           "with its interval and the marks its page shows, and what both rest on. No mean "
           "across benchmarks: their metrics measure different things.")
# a static table: it wraps to any width instead of cutting values or hiding the rank
with st.container(key="models_profile_headline"):
    st.table(page.profile_view(heads), hide_index=True)
    table_downloads(heads, f"profile_{model}_headline", runs=chosen,
                    key="models_profile_headline_dl")
for family in sorted(heads["family"].unique()):
    rows = heads[heads["family"] == family]
    for run_name in dict.fromkeys(rows["run"]):
        here = rows[rows["run"] == run_name]
        run = runs[run_name]
        figure = cache.cached(page.card_figure, run, list(here["raw_ids"]), runs=[run],
                              selection=("card", tuple(here["raw_ids"])),
                              spinner="Drawing...")
        if figure is None:  # the profile row says all there is for one model
            continue
        with st.container(border=True):
            st.subheader(f"{page.family_titles().get(family, family)}")
            st.caption(f"Run {plain(run_name)} ({run.kind})")
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
view, config = page.newest_view(latest)
view = shown(view)
kit.table(latest, "newest", runs=chosen, key="models_newest_table", view=view,
          config=table_config(view, config))
kit.done()
