#!/usr/bin/env bash
# README command 2: install what is needed (Debian's chromium included) and run the whole
# suite: ruff, then pytest with the browser tests. Extra arguments go to pytest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh" --test
cd "$root"
export KBENCH_CHROMIUM="${KBENCH_CHROMIUM:-$(command -v chromium)}"
export KBENCH_ARTIFACTS="${KBENCH_ARTIFACTS:-$root/test-artifacts}"
mkdir -p "$KBENCH_ARTIFACTS"
echo "kbench: ruff check"
.venv/bin/ruff check .
echo "kbench: pytest"
exec .venv/bin/python -m pytest "$@"
