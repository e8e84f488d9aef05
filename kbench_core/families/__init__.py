"""The family registry: everything a run kind means, in one place.

A :class:`Family` holds what kbench needs to know about one run kind — its schema and how to
detect it, how its rows are checked beyond the schema, what its items and clusters are for
comparisons, which metrics are better lower, what it draws and tabulates, its sample file and
its page. :mod:`kbench_core.io`, :mod:`kbench_core.compare`, :mod:`kbench_core.catalog`, the
command line and the app read the registry; none of them names a kind.

Adding a family is one new module in this package defining ``FAMILY``: the built-in families
are found, not listed (every module of this package whose name does not start with ``_``,
in the order of their ``Family.detection_order``), so adding one edits no shared line;
:func:`register` adds one at run time. See ``docs/architecture.md`` for the checklist.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from kbench_core.families._base import CompareDefaults, Family, Options, PageInfo, Profile, Rule

if TYPE_CHECKING:  # only for annotations: the catalog and the schema import the registry
    from kbench_core.catalog import Item
    from kbench_core.schema import KindSpec

__all__ = ["CompareDefaults", "Family", "Options", "PageInfo", "Profile", "Rule", "all_families",
           "detect", "format_section", "get", "is_registered", "items_for", "judged_kinds", "kinds",
           "lower_is_better", "main_table", "pages", "register", "sample_files", "spec",
           "unavailable", "unregister"]

# Relative page and doc paths are relative to the repository (the folder holding the package).
ROOT = Path(__file__).resolve().parent.parent.parent

_REGISTRY: dict[str, Family] = {}
_BUILTIN: dict[str, str] = {}  # kind -> module name, of the families found in this package
_LOADED = False


def _found() -> list[Family]:
    """The ``FAMILY`` of every module of this package not named ``_...`` (the built-in
    families), in detection order (``Family.detection_order``, then kind): the first family
    whose signature a file matches is its kind, so judged and replication files, which may
    also carry a score column, come before bias."""
    found = []
    for module in pkgutil.iter_modules(__path__):
        if module.name.startswith("_"):
            continue
        family = getattr(importlib.import_module(f"{__name__}.{module.name}"), "FAMILY", None)
        if not isinstance(family, Family):
            raise TypeError(f"{__name__}.{module.name} defines no FAMILY (a family module "
                            "ends in one Family value; a helper module's name starts with _)")
        found.append((module.name, family))
    found.sort(key=lambda pair: (pair[1].detection_order, pair[1].kind))
    for name, family in found:
        _BUILTIN[family.kind] = name
    return [family for _, family in found]


def _load_builtin() -> None:
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    for family in _found():
        register(family)


def __getattr__(name: str) -> object:
    if name == "BUILTIN":  # the built-in families' module names, in detection order
        _load_builtin()
        return tuple(_BUILTIN.values())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def register(family: Family) -> Family:
    """Add ``family`` (after the built-in ones in detection order); a kind may be registered
    once. Returns the family."""
    _load_builtin()
    if family.kind in _REGISTRY:
        raise ValueError(f"a family of kind {family.kind!r} is registered already")
    _REGISTRY[family.kind] = family
    return family


def unregister(kind: str) -> None:
    """Remove a family added with :func:`register` (the built-in ones stay)."""
    _load_builtin()
    if kind in _BUILTIN:
        raise ValueError(f"{kind!r} is a built-in family")
    _REGISTRY.pop(kind, None)


def all_families() -> list[Family]:
    """Every registered family, in detection order."""
    _load_builtin()
    return list(_REGISTRY.values())


def kinds() -> list[str]:
    """The registered run kinds, in detection order."""
    return [f.kind for f in all_families()]


def is_registered(kind: str) -> bool:
    _load_builtin()
    return kind in _REGISTRY


def get(kind: str) -> Family:
    """The family of ``kind``; a ``ValueError`` naming the known kinds otherwise."""
    _load_builtin()
    if kind not in _REGISTRY:
        raise ValueError(f"unknown run kind {kind!r}; kinds: {', '.join(_REGISTRY)}")
    return _REGISTRY[kind]


def spec(kind: str) -> KindSpec:
    """The schema of ``kind``."""
    return get(kind).spec


def judged_kinds() -> list[str]:
    """The kinds whose rows are judges' verdicts (``Family.judges``: the judge options, the
    Judge agreement page and the judge audit apply to them), in detection order."""
    return [f.kind for f in all_families() if f.judges]


def detect(columns: Sequence[str]) -> str | None:
    """The first family (in detection order) whose signature these columns match, or None."""
    for family in all_families():
        if family.matches(columns):
            return family.kind
    return None


def pages() -> list[PageInfo]:
    """The family pages for the app's menu, one per page file, in menu order."""
    seen: dict[str, PageInfo] = {}
    for family in all_families():
        if family.page is not None and family.page.path not in seen:
            seen[family.page.path] = family.page
    return sorted(seen.values(), key=lambda page: page.order)


def sample_files() -> list[str]:
    """The bundled synthetic sample runs of every family, in menu order (then registry order)."""
    ordered = sorted(all_families(),
                     key=lambda family: family.page.order if family.page else 1_000)
    return [name for family in ordered for name in family.sample_files]


def lower_is_better() -> frozenset[str]:
    """Every registered family's lower-is-better metrics (one set for the whole tool)."""
    out: set[str] = set()
    for family in all_families():
        out |= family.lower_is_better
    return frozenset(out)


def format_section(kind: str) -> str:
    """The Markdown section documenting ``kind``'s columns: from its ``## `<kind>``` heading
    to the next heading of that level, read from the family's ``format_doc`` file; a
    ``ValueError`` naming the kind and the file when it has none."""
    family = get(kind)
    if family.format_doc is None:
        raise ValueError(f"family {kind!r} registers no format doc")
    path = Path(family.format_doc)
    path = path if path.is_absolute() else ROOT / path
    text = path.read_text(encoding="utf-8")
    found = re.search(rf"^## `{re.escape(kind)}`.*?(?=^## |\Z)", text, flags=re.M | re.S)
    if found is None:
        raise ValueError(f"{path} has no section headed '## `{kind}`'")
    return found.group(0)


def items_for(kind: str) -> list[Item]:
    """Every figure and table of a run kind (its family's catalog), main table first."""
    if not is_registered(kind) or get(kind).catalog is None:
        return []
    return sorted(get(kind).catalog(), key=lambda item: not item.main)


def unavailable(kind: str, frame: pd.DataFrame) -> str | None:
    """Why a run has nothing to show (no figure or table can be made), in words for the user,
    or None (its family's rule; e.g. a bias run none of whose responses is scored)."""
    if not is_registered(kind) or get(kind).unavailable is None:
        return None
    return get(kind).unavailable(frame)


def main_table(kind: str) -> Item:
    """The family's headline table (the fingerprint, the ECS/PAS table, the tier leaderboard)."""
    for item in items_for(kind):
        if item.main:
            return item
    raise ValueError(f"no main table for runs of kind {kind!r} yet")
