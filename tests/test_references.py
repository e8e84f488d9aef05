"""The repository explains itself: no code, doc or message points to a document users do not
have (the project's internal specification or seed files); formulas and sources live in
docs/metrics/, docs/statistics.md and docs/formats.md."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTSIDE = re.compile(r"\bSPEC(?: section)? \d|\bseeds/|\.\./shared/(?:SPEC|seeds)")


def _shipped() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "*.py", "*.md", "*.toml"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.split()
    return [ROOT / name for name in listed if not name.startswith("tests/")]


def test_no_reference_points_outside_the_repository() -> None:
    found = [f"{path.relative_to(ROOT)}:{k}: {line.strip()[:80]}"
             for path in _shipped() if path.exists()
             for k, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
             if OUTSIDE.search(line)]
    assert found == []


def test_the_docs_the_code_points_to_exist() -> None:
    pointed = {match for path in _shipped() if path.exists()
               for match in re.findall(r"docs/[\w/.-]+\.md", path.read_text(encoding="utf-8"))}
    assert pointed, "the code should cite its docs pages"
    theirs = {"docs/PAS_ECS_math.md"}  # HumanStudy-Bench's own document, cited as a source
    assert sorted(p for p in pointed - theirs if not (ROOT / p).exists()) == []
