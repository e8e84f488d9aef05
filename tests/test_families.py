"""The family registry: every run kind is described once, and a new family (a toy one here) is
detected, validated, compared, exported and given a page without touching a shared file."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from kbench_core import compare, families
from kbench_core.catalog import Item, one
from kbench_core.cli import main
from kbench_core.families import CompareDefaults, Family, PageInfo
from kbench_core.io import RunFormatError, detect_kind, load_run
from kbench_core.schema import Column, KindSpec

TOY_SPEC = KindSpec(
    kind="toy",  # type: ignore[arg-type]
    columns=(Column("model", "category", True), Column("puzzle", "category", True),
             Column("solved", "float", True, low=0.0, high=1.0),
             Column("seconds", "float", low=0.0)),
    key=("model", "puzzle"),
    signature=frozenset({"model", "puzzle", "solved"}),
    description="toy puzzles, one row per model x puzzle",
)


def _rules(columns, frame, add) -> None:
    if "seconds" in columns and "solved" in columns:
        slow = (np.asarray(columns["seconds"]) > 60) & (np.asarray(columns["solved"]) == 1)
        add(slow, "seconds", "a puzzle solved after 60 s does not count")


def _catalog() -> list[Item]:
    def table(frame: pd.DataFrame, options) -> Iterator[tuple[str, pd.DataFrame]]:
        return one(frame.groupby("model", observed=True)["solved"].mean().reset_index())

    return [Item("solve_rate", "Solve rate per model", "table", table, main=True)]


TOY = Family(
    kind="toy", title="Toy puzzles", spec=TOY_SPEC, item_key=("puzzle",),
    comparison=CompareDefaults((("solved", "solved"),), "puzzle", None, "puzzles"),
    per_item=lambda frame: frame, lower_is_better=frozenset({"seconds"}),
    catalog=_catalog, rules=_rules,
    notes=lambda frame: [f"{len(frame)} toy rows"],
    page=PageInfo("views/toy.py", "Toy", "toy_runs", url="toy", order=99),
)

CSV = ("model,puzzle,solved,seconds\n"
       + "".join(f"{m},p{i},{int(v)},{10 + i}\n" for m, row in (("a", [1, 1, 1, 0, 1, 1, 1, 1]),
                                                                 ("b", [0, 1, 0, 0, 1, 0, 0, 1]))
                 for i, v in enumerate(row)))


@pytest.fixture
def toy():
    families.register(TOY)
    try:
        yield TOY
    finally:
        families.unregister("toy")


def test_each_family_declares_its_own_columns_and_the_registry_lists_the_kinds() -> None:
    import importlib

    from kbench_core import schema

    for family in families.all_families():
        module = importlib.import_module(f"kbench_core.families.{family.kind}")
        # the spec is defined in the family's module, not in schema.py
        assert family.spec.kind == family.kind
        assert any(value is family.spec for value in vars(module).values()), family.kind
        assert not any(value is family.spec for value in vars(schema).values()), family.kind
        assert families.items_for(family.kind), family.kind  # every kind draws something
    # the old names still import, from the registry
    assert tuple(families.kinds()) == schema.KINDS
    assert schema.BIAS is families.spec("bias") and schema.JUDGED is families.spec("judged")
    assert {kind: families.spec(kind) for kind in families.kinds()} == schema.SPECS
    with pytest.raises(AttributeError):
        _ = schema.NOT_A_SPEC
    # one set of directions for the whole tool, from the families
    assert {"fp", "fn", "std_rcir", "bms", "abs_diff", "ece"} <= compare.lower_is_better_metrics()


def test_a_registered_kind_is_in_the_schema_lists(toy) -> None:
    from kbench_core import schema

    assert "toy" in schema.KINDS and schema.SPECS["toy"] is TOY_SPEC


def test_a_toy_family_works_end_to_end_without_touching_shared_files(toy, tmp_path,
                                                                       capsys) -> None:
    assert detect_kind(["model", "puzzle", "solved"]) == "toy"
    run = load_run(("toys.csv", CSV.encode()))
    assert run.kind == "toy" and run.warnings == ("16 toy rows",)
    # its own row rule
    bad = CSV.replace("a,p0,1,10", "a,p0,1,90")
    with pytest.raises(RunFormatError, match="solved after 60 s"):
        load_run(("toys.csv", bad.encode()))
    # the comparison reads the family's item key and direction
    est = compare.paired_difference(run.frame, "solved", "a", "b")
    a = np.array([1, 1, 1, 0, 1, 1, 1, 1])
    b = np.array([0, 1, 0, 0, 1, 0, 0, 1])
    assert est.value == pytest.approx((a - b).mean())
    # 0/1 outcomes: the exact McNemar test on the discordant items (4 favour a, 0 favour b;
    # issue 23 item 2), not a paired t
    assert est.p_value == pytest.approx(stats.binomtest(4, 4, 0.5).pvalue)
    assert compare.is_lower_better("seconds")
    # the catalog and the command line
    assert [i.name for i in families.items_for("toy")] == ["solve_rate"]
    path = tmp_path / "toys.csv"
    path.write_text(CSV)
    assert main(["metrics", str(path), "--format", "csv"]) == 0
    assert "solved" in capsys.readouterr().out
    # the app's menu gets its page
    assert "views/toy.py" in [p.path for p in families.pages()]


def test_registry_refuses_a_second_family_of_one_kind() -> None:
    with pytest.raises(ValueError, match="registered already"):
        families.register(families.get("bias"))
    with pytest.raises(ValueError, match="built-in"):
        families.unregister("bias")
    with pytest.raises(ValueError, match="unknown run kind"):
        families.get("nope")


def test_each_page_widget_key_is_written_once() -> None:
    """The keys a family's page entry names (run picker, values set with it, widgets a new run
    clears) are the page's own keys (its ``Keys``, ``PageInfo.keys``), written once (issue 27
    item 5, issue 41), so the two can never drift apart: for every registered family."""
    import inspect
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    # the two packages, and the module of each family's Keys (a family outside them too)
    paths = {p.resolve() for top in ("kbench_core", "kbench_app")
             for p in (root / top).rglob("*.py")}
    paths |= {Path(inspect.getfile(family.page.keys)).resolve()
              for family in families.all_families()
              if family.page is not None and family.page.keys is not None}
    sources = [p.read_text("utf-8") for p in sorted(paths)]
    keys = {key for family in families.all_families() if family.page is not None
            for key in (family.page.run_key, *family.page.extra, *family.page.dependent)}
    assert {"bias_runs", "bias_source", "vuln_voters", "rep_summary_run"} <= keys
    for key in sorted(keys):
        written = sum(len(re.findall(rf"[\"']{re.escape(key)}[\"']", s)) for s in sources)
        assert written == 1, f"{key!r} is written {written} times"
    for family in families.all_families():
        if family.page is None:
            continue
        assert family.page.keys is not None, f"{family.kind}: its page entry names no Keys"
        used = {value for name, value in vars(family.page.keys).items() if name.isupper()}
        named = {family.page.run_key, *family.page.extra, *family.page.dependent}
        assert named <= used, (family.kind, named - used)
