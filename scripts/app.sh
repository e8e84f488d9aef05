#!/usr/bin/env bash
# README command 1: install what is needed and start the dashboard on the bundled sample runs.
# Extra arguments go to `kbench app` (e.g. FILES..., --workspace DIR, --port N).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
cd "$root"
echo "kbench: starting the dashboard on http://localhost:${KBENCH_PORT:-8501} (Ctrl+C stops it)"
exec .venv/bin/kbench app --port "${KBENCH_PORT:-8501}" "$@"
