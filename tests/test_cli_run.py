"""tests/cli_run.kbench, which the command-line tests use instead of a child process, against a
real child ``python -m kbench_core.cli``: the same exit status and the same bytes on standard
output and error, for a refusal, an escaped terminal write, a strict standard output meeting a
Latin-1 path, and an argument error."""

from __future__ import annotations

import os
import re

import pytest

from tests import cli_run
from tests.conftest import ROOT

STRICT = {"PYTHONIOENCODING": "utf-8:strict"}


def _cases(tmp_path) -> dict[str, tuple[tuple[str, ...], dict[str, str]]]:
    escaped = tmp_path / "bad\x1b[31m.csv"
    escaped.write_text("model,bias,condition,domain,score\nm\x1b]0;x\x07,b,control,d,x\n")
    good = tmp_path / "good.csv"
    good.write_text("model,bias,condition,intensity,domain,score\n"
                    "m\u202e1,anchoring_effect,treatment,weak,social,1\n")
    return {
        "validate": (("validate", str(good), str(escaped)), {}),
        "latin1-strict": (("metrics", os.fsdecode(os.fsencode(str(tmp_path)) + b"/r\xe9.csv")),
                          STRICT),
        "metrics": (("metrics", str(ROOT / "sample_data" / "bias.csv"), "--format", "csv"),
                    STRICT),
        "usage": (("audit", str(ROOT / "sample_data" / "judged.csv")), {}),
    }


@pytest.mark.parametrize("case", ["validate", "latin1-strict", "metrics", "usage"])
def test_the_helper_shows_what_a_child_shows(case, tmp_path) -> None:
    args, env = _cases(tmp_path)[case]
    here = cli_run.kbench(*args, env=env, text=False)
    child = cli_run.python_m_kbench(*args, env=env, text=False)

    def stamped(out: bytes) -> bytes:  # the export time differs by the second
        return re.sub(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", b"<time>", out)

    assert here.returncode == child.returncode, (here.stderr, child.stderr)
    assert stamped(here.stdout) == stamped(child.stdout)
    assert here.stderr == child.stderr
    assert here.stdout or here.stderr  # each case prints something
