"""The layers of ``docs/architecture.md``, read from the source (AST) of every module.

- ``kbench_core`` imports neither Streamlit, ``kbench_app`` nor ``views`` (not at the top, not
  inside a function, not through ``importlib.import_module`` / ``__import__``);
- ``kbench_app`` imports Streamlit and ``kbench_core``, never ``views``;
- ``views`` (the pages) import ``kbench_app`` and ``kbench_core``;
- no import cycle among the modules of ``kbench_core`` and ``kbench_app``, counting imports made
  inside functions (a lazy import hides a cycle, it does not remove it). Imports under
  ``if TYPE_CHECKING:`` never run and are left out.

Every module is parsed, none is imported, so the test also covers modules no other test loads.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("kbench_core", "kbench_app")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources() -> dict[str, Path]:
    """Every module of the three layers by dotted name (pages as ``views.<file>``)."""
    found = {}
    for top in (*PACKAGES, "views"):
        for path in sorted((ROOT / top).rglob("*.py")):
            found[_module_name(path)] = path
    return found


MODULES = _sources()


def _skip_type_checking(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node of ``tree`` except those under ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _imports(name: str, path: Path) -> set[str]:
    """The dotted names ``name`` imports anywhere in its source: ``from a import b`` gives
    ``a.b`` when that is a module of ours, else ``a``; relative imports are resolved."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in _skip_type_checking(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                out.add(sub if sub in MODULES else target)
        elif (isinstance(node, ast.Call) and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
              and ast.unparse(node.func) in ("importlib.import_module", "import_module",
                                             "__import__")):
            out.add(node.args[0].value)
    return out


IMPORTS = {name: _imports(name, path) for name, path in MODULES.items()}


def _top(name: str) -> str:
    return name.split(".")[0]


def _breaches(layer: str, banned: tuple[str, ...]) -> list[str]:
    return sorted(f"{name} imports {target}" for name, targets in IMPORTS.items()
                  if _top(name) == layer for target in targets if _top(target) in banned)


def test_every_module_is_parsed() -> None:
    # A glob that found nothing would make every check below pass vacuously.
    assert {"kbench_core.io", "kbench_core.cli", "kbench_app.kit", "views.runs"} <= set(MODULES)
    assert sum(_top(m) == "kbench_core" for m in MODULES) > 50


def test_kbench_core_never_imports_streamlit_the_app_or_the_pages() -> None:
    assert _breaches("kbench_core", ("streamlit", "kbench_app", "views")) == []


def test_kbench_app_never_imports_the_pages() -> None:
    assert _breaches("kbench_app", ("views",)) == []


def test_the_pages_import_only_the_two_layers_below() -> None:
    # Pages are run by Streamlit from app.py, never imported by a module; they may import
    # each other's nothing.
    assert _breaches("views", ("views", "app")) == []


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path (first node repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


def _graph() -> dict[str, set[str]]:
    return {name: {t for t in targets if t in MODULES and t != name}
            for name, targets in IMPORTS.items() if _top(name) in PACKAGES}


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_no_import_cycle() -> None:
    found = _cycle(_graph())
    assert found is None, "import cycle: " + " -> ".join(found or [])


def _family_modules() -> set[str]:
    return {m for m in MODULES if m.startswith("kbench_core.families.")
            and m != "kbench_core.families._base"}


def test_a_family_is_built_without_the_registry_and_the_catalog_does_not_read_it() -> None:
    # The registry loads the family modules; were a family module to import the registry, or
    # the catalog (which every family module imports) to read it, the two would import each
    # other. A family takes its parts from families._base; the registry's questions about
    # the catalog (items_for, main_table, unavailable) are the registry's own functions.
    graph = _graph()
    assert "kbench_core.families" not in graph["kbench_core.catalog"]
    found = sorted(f for f in _family_modules() if "kbench_core.families" in graph[f])
    assert found == []


def test_what_families_are_built_from_never_imports_a_family() -> None:
    # The registry loads its families by name when first asked; everything a family module
    # imports (catalog, compare, figures, the metrics, and the registry itself) stays below
    # the families, so that lazy load can never re-enter a half-imported module.
    graph = _graph()
    below: set[str] = set()
    todo = [t for f in _family_modules() for t in graph[f] if t not in _family_modules()]
    while todo:
        name = todo.pop()
        if name not in below:
            below.add(name)
            todo.extend(graph.get(name, ()))
    found = sorted(f"{name} imports {target}" for name in below for target in graph[name]
                   if target in _family_modules())
    assert below and found == []


# The core's outputs: they read runs and draw them, nothing below them imports them.
OUTPUTS = ("kbench_core.cli", "kbench_core.report", "kbench_core.export",
           "kbench_core.bundle_export", "kbench_core.workspace", "kbench_core.workspace_add")


def _is_output(name: str) -> bool:
    return any(name == o or name.startswith(o + ".") for o in OUTPUTS)


def test_nothing_below_the_outputs_imports_them() -> None:
    found = sorted(f"{name} imports {target}" for name, targets in _graph().items()
                   if _top(name) == "kbench_core" and not _is_output(name)
                   for target in targets if _is_output(target))
    assert found == []
