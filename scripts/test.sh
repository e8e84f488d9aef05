#!/usr/bin/env bash
# README command 2: install what is needed (Debian's chromium and poppler-utils included) and run
# the whole suite: ruff, then pytest with the browser tests. Extra arguments go to pytest, e.g.
#   bash scripts/test.sh -m "not browser"      bash scripts/test.sh tests/test_io.py -x
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh" --test
cd "$root"
export KBENCH_CHROMIUM="${KBENCH_CHROMIUM:-/usr/bin/chromium}"
export KBENCH_ARTIFACTS="${KBENCH_ARTIFACTS:-$root/test-artifacts}"
mkdir -p "$KBENCH_ARTIFACTS"
echo "kbench test: ruff check ."
.venv/bin/python -m ruff check .
echo "kbench test: pytest (screenshots in ${KBENCH_ARTIFACTS#"$root"/})"
exec .venv/bin/python -m pytest "$@"
