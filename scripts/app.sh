#!/usr/bin/env bash
# README command 1: install what is needed and start the dashboard on the bundled sample runs.
# Extra arguments go to `kbench app`, e.g. FILES..., --workspace DIR, --port N.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
cd "$root"  # Streamlit reads .streamlit/config.toml from the working directory
port="${KBENCH_PORT:-8501}"
port_args=(--port "$port")
previous=""
for arg in "$@"; do  # a --port given by the user wins
    case "$arg" in --port=*) port="${arg#--port=}"; port_args=() ;; esac
    if [ "$previous" = "--port" ]; then port="$arg"; port_args=(); fi
    previous="$arg"
done
echo "kbench: starting the dashboard on http://localhost:$port (Ctrl+C stops it)"
exec .venv/bin/kbench app "${port_args[@]}" "$@"
