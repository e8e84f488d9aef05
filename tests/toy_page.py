"""The toy multiple-choice family's page (tests/toy_family.py): the kit's opening, one widget,
the family's main table and figure. Its keys come from the family's PageInfo (its Keys)."""

from kbench_app import kit
from kbench_core import families
from tests import toy_family

page = families.get(toy_family.KIND).page
K = page.keys
shown = kit.open_runs("Toy multiple choice", [toy_family.KIND], key=K.RUNS,
                      empty="Load a toy multiple-choice run on the Runs page.")
models = sorted(map(str, shown.frame["model"].unique()))
chosen = kit.multiselect("Models", models, key=K.MODELS, default=models)
frame = shown.frame[shown.frame["model"].astype(str).isin(chosen)]
table = toy_family.accuracy(frame)
kit.table(table, "accuracy", runs=shown.runs, key=K.TABLE)
kit.chart(toy_family.accuracy_chart(table), "accuracy_chart", runs=shown.runs,
          key=K.CHART)
kit.done()
