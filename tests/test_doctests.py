"""Every docstring example in kbench runs as a test (the examples are documentation that must
stay true)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import kbench_app
import kbench_core

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _modules() -> list[str]:
    names = []
    for package in (kbench_core, kbench_app):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if not info.name.endswith("__main__"):
                names.append(info.name)
    return names


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples_hold(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=FLAGS, report=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples fail in {name}"


def test_there_are_examples_to_run() -> None:
    attempted = sum(doctest.testmod(importlib.import_module(name), optionflags=FLAGS,
                                    report=False).attempted for name in _modules())
    assert attempted >= 30
