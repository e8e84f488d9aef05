#!/usr/bin/env bash
# Shared set-up for the two README commands: a venv in .venv with kbench installed, and (for
# tests) Debian's chromium and poppler-utils. Idempotent: a second run only checks stamps.
#   bash scripts/setup.sh          # runtime only (pip install -e .)
#   bash scripts/setup.sh --test   # plus the test extras, chromium and poppler-utils
# PYTHON=/path/to/python3.11+ picks the interpreter that creates .venv.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
want_test=0
case "${1:-}" in
    "") ;;
    --test) want_test=1 ;;
    *) echo "usage: bash scripts/setup.sh [--test]" >&2; exit 2 ;;
esac

say() { printf 'kbench setup: %s\n' "$*"; }
die() { printf 'kbench setup: %s\n' "$*" >&2; exit 1; }

# --- Python 3.11+ ----------------------------------------------------------------------------
python_ok() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; }
python_bin=""
# The first interpreter that really runs and is new enough (pyenv shims may name versions that
# are not installed, and python3 may be older than a python3.11 beside it).
for candidate in ${PYTHON:-} python3 python3.13 python3.12 python3.11; do
    if python_ok "$candidate"; then python_bin="$candidate"; break; fi
done
if [ -z "$python_bin" ]; then
    found="$( (python3 --version) 2>/dev/null || echo "no python3 on the PATH")"
    die "Python 3.11 or newer is needed (found: $found); install it or set PYTHON=/path/to/python3.11+."
fi

# --- root / apt --------------------------------------------------------------------------------
as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"
    elif command -v sudo >/dev/null 2>&1; then sudo "$@"
    else die "need root (or sudo) to run: $*"; fi
}

apt_packages() {  # install these Debian packages
    command -v apt-get >/dev/null 2>&1 || die "please install $* (no apt-get here)."
    say "installing Debian packages: $* (apt-get update first)"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    # `env` because sudo drops DEBIAN_FRONTEND from the environment.
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "$@" >/dev/null
}

# --- .venv ----------------------------------------------------------------------------------
if [ -x .venv/bin/python ] && ! python_ok .venv/bin/python; then
    say "recreating .venv (its Python is missing or older than 3.11)"
    rm -rf .venv
fi
if [ ! -x .venv/bin/python ]; then
    if ! "$python_bin" -m venv .venv >/dev/null 2>&1; then
        rm -rf .venv  # Debian's python3 needs python3-venv (ensurepip) for this
        apt_packages python3-venv
        "$python_bin" -m venv .venv
    fi
    say "created .venv with $("$python_bin" --version 2>&1)"
fi

# --- Python packages: skipped while the stamp matches pyproject.toml and the Python version ------
fingerprint="$( { sha256sum pyproject.toml; .venv/bin/python --version 2>&1; } | sha256sum)"
fingerprint="${fingerprint%% *}"
test_stamp=.venv/.kbench-stamp-test   # written after pip install -e ".[test]"
app_stamp=.venv/.kbench-stamp         # written after pip install -e .
stamp_is() { [ -f "$1" ] && [ "$(cat "$1")" = "$fingerprint" ]; }

if stamp_is "$test_stamp" || { [ $want_test -eq 0 ] && stamp_is "$app_stamp"; }; then
    say "Python packages up to date"
else
    target="."
    stamp="$app_stamp"
    if [ $want_test -eq 1 ]; then target=".[test]"; stamp="$test_stamp"; fi
    say "installing kbench ($target) into .venv; the first time takes a few minutes"
    # pip's notices about this machine's extra index locations are harmless; keep real errors.
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e "$target" \
        2> >(grep -v -e '^WARNING: Location' -e '^WARNING: Skipping' >&2)
    printf '%s\n' "$fingerprint" > "$stamp"
fi

# --- Debian's chromium, poppler-utils and a headless Java for PySpark's local mode (tests only):
# apt only when a binary is missing ---------------------------------------------------------------
if [ $want_test -eq 1 ]; then
    missing=()
    [ -x /usr/bin/chromium ] || missing+=(chromium)
    [ -x /usr/bin/pdftoppm ] || missing+=(poppler-utils)
    command -v java >/dev/null 2>&1 || missing+=(default-jre-headless)
    if [ ${#missing[@]} -gt 0 ]; then
        apt_packages "${missing[@]}"
    fi
    [ -x /usr/bin/chromium ] || die "/usr/bin/chromium is still missing after apt-get install."
    say "browser: $(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium)"
    command -v java >/dev/null 2>&1 || die "java is still missing after apt-get install."
    say "java (for --engine spark): $(java -version 2>&1 | head -n 1)"
fi
say "ready"
