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
# Bytecode caches on for the suite even where the shell turns them off: with
# PYTHONDONTWRITEBYTECODE=1 every pytest worker rewrites and compiles all ~120 test modules and
# kbench from source, and so does every Python child the tests start (the Streamlit servers,
# each `kbench` run): tests/test_cli.py alone took 94 s without them, 82 s with them. The
# __pycache__ folders are gitignored; nothing a test checks depends on them.
unset PYTHONDONTWRITEBYTECODE
# Two pytest workers (pytest-xdist), whole test files to one worker so a module's fixtures
# (a SparkSession, a Streamlit server) start once: the suite takes ~60% of its serial time on
# two cores. Give `-n 0` after the command to run serially (the last -n wins).
workers=(-n "${KBENCH_TEST_WORKERS:-2}" --dist loadfile)
numeric_tests() {  # the tests that compare numbers against hand-worked or stored values
    local name
    for name in samples stats kahne replication vuln agreement compare calibration \
                native_humanstudy native_kahnebench_report native_blockbench unscored families \
                tables doctests numeric_config; do
        echo "tests/test_$name.py"
    done
    ls tests/test_stats_round2_*.py 2>/dev/null || true
}
# The archive of Spark's classes the test JVMs map (tests/jvm_cache.py), built once per Java and
# PySpark install (~45 s the first time), beside ruff and the numeric pass: no Spark there.
.venv/bin/python -m tests.jvm_cache &
jvm_cache=$!
echo "kbench test: ruff check ."
.venv/bin/python -m ruff check .
if [ "$#" -eq 0 ]; then
    # Issue 30: the suite must pass on any CPU. Floats that depend on the machine (SIMD kernels
    # of NumPy's transcendentals, OpenBLAS's kernels for dot products and solvers) are caught by
    # running the numeric tests once more with other kernels: both settings change results on
    # an x86-64 machine with AVX2 (tests/test_numeric_config.py checks they are in force).
    second=(OPENBLAS_CORETYPE=Prescott NPY_DISABLE_CPU_FEATURES=X86_V3 KBENCH_NUMERIC_CONFIG=second)
    echo "kbench test: numeric tests under a second floating-point configuration (${second[*]})"
    env "${second[@]}" .venv/bin/python -m pytest -q -p no:cacheprovider "${workers[@]}" \
        $(numeric_tests)
fi
wait "$jvm_cache" || true  # best effort: the tests run without the archive
echo "kbench test: pytest (screenshots in ${KBENCH_ARTIFACTS#"$root"/})"
exec .venv/bin/python -m pytest "${workers[@]}" "$@"
