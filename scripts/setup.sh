#!/usr/bin/env bash
# Shared set-up for the two README commands: a venv in .venv with kbench installed, and (for
# tests) Debian's chromium and poppler-utils. Idempotent: a second run only checks stamps.
#   bash scripts/setup.sh          # runtime only
#   bash scripts/setup.sh --test   # plus test extras and the browser
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
want_test=0
[ "${1:-}" = "--test" ] && want_test=1

say() { printf 'kbench setup: %s\n' "$*"; }

python_ok() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; }
python_bin=""
# The first interpreter that really runs (pyenv shims may name versions that do not).
for candidate in ${PYTHON:-} python3 python3.13 python3.12 python3.11; do
    if python_ok "$candidate"; then python_bin="$candidate"; break; fi
done
if [ -z "$python_bin" ]; then
    echo "kbench setup: Python 3.11 or newer is needed; set PYTHON=/path/to/python3.11+." >&2
    exit 1
fi

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"
    elif command -v sudo >/dev/null 2>&1; then sudo "$@"
    else echo "kbench setup: need root (or sudo) to run: $*" >&2; exit 1; fi
}

apt_packages() {  # install these Debian packages
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "kbench setup: please install $* (no apt-get here)." >&2; exit 1
    fi
    say "installing Debian packages: $*"
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends \
        "$@" >/dev/null
}

apt_install() {  # binary:package pairs; installs the packages whose binary is missing
    local missing=()
    for pair in "$@"; do
        local binary="${pair%%:*}" package="${pair##*:}"
        command -v "$binary" >/dev/null 2>&1 || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] || apt_packages "${missing[@]}"
}

if [ ! -x .venv/bin/python ]; then
    if ! "$python_bin" -m venv .venv >/dev/null 2>&1; then
        rm -rf .venv  # Debian's python3 needs python3-venv (ensurepip) for this
        apt_packages python3-venv
        "$python_bin" -m venv .venv
    fi
    say "created .venv with $("$python_bin" --version)"
fi

extras=""
[ $want_test -eq 1 ] && extras="[test]"
stamp=".venv/.kbench-stamp${extras:+-test}"
fingerprint="$(cat pyproject.toml; .venv/bin/python --version)"
fingerprint="$(printf '%s' "$fingerprint" | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$fingerprint" ]; then
    say "installing kbench${extras} into .venv (first time takes a few minutes)"
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".${extras}" \
        2> >(grep -v "^WARNING: Location" >&2)
    printf '%s' "$fingerprint" > "$stamp"
else
    say "Python packages up to date"
fi

if [ $want_test -eq 1 ]; then
    apt_install "chromium:chromium" "pdftoppm:poppler-utils"
    say "browser: $(chromium --version 2>/dev/null || echo missing)"
fi
