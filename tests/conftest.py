"""Shared pytest set-up: Hypothesis profiles, the browser marker, paths every test may use."""

from __future__ import annotations

import os
import platform
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests import jvm_cache

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DIR = ROOT / "sample_data"
BROWSER_DIR = ROOT / "tests" / "browser"


def in_ci() -> bool:
    """True under CI (``.ci/run`` sets ``CI=true``): missing tools fail instead of skipping."""
    return os.environ.get("CI", "").strip().lower() not in {"", "0", "false", "no"}


# The Spark JVMs the tests start (local drivers, in this process or a `kbench` child, and the
# executors a child asks a standalone worker for) run tiny queries for seconds: the C1
# compiler alone and the serial collector cost such a JVM ~37% less CPU (15 s against 25 s for
# a start and one judged `kbench metrics`) at the same wall time, CPU the other test worker
# needs. JVM flags only: results are Java's either way. When tests/jvm_cache.py's archive of
# Spark's classes is built (scripts/test.sh builds it), the JVMs map their classes from it: a
# start and a first query take ~30% less.
TEST_JVM_OPTIONS = jvm_cache.jvm_options()
os.environ.setdefault("PYSPARK_SUBMIT_ARGS",
                      f'--driver-java-options "{TEST_JVM_OPTIONS}" '
                      f'--conf "spark.executor.extraJavaOptions={TEST_JVM_OPTIONS}" pyspark-shell')

# Property tests: no wall-clock deadlines (a loaded CI machine is slow, not wrong); in CI the
# examples are derandomised so a red build reproduces on a laptop.
settings.register_profile("dev", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if in_ci() else "dev"))


def pytest_report_header(config: pytest.Config) -> list[str]:
    chromium = os.environ.get("KBENCH_CHROMIUM", "/usr/bin/chromium")
    state = "found" if Path(chromium).exists() else "MISSING"
    return [f"kbench: python {platform.python_version()}, CI={in_ci()}, "
            f"chromium {chromium} ({state})"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Everything under ``tests/browser/`` is a browser test (``-m "not browser"`` skips it)."""
    for item in items:
        if BROWSER_DIR in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(autouse=True)
def _work_ahead_finished():
    """After a test that opened a page, wait until the work that page queued ahead
    (kbench_app.prefetch) is done, so it does not run into the next test's counters or
    monkeypatches."""
    yield
    import sys

    prefetch = sys.modules.get("kbench_app.prefetch")
    if prefetch is not None:
        prefetch.wait_idle(120)


@pytest.fixture(scope="module")
def exporter():
    """One static-figure exporter (kaleido driving Debian's chromium) per test module."""
    from kbench_core import export

    if not shutil.which("chromium"):
        if in_ci():
            pytest.fail("CI: Debian's chromium is needed for static figure export")
        pytest.skip("static export needs Debian's chromium on the PATH")
    with export.FigureExporter() as ex:
        yield ex


@pytest.fixture(scope="module")
def spark():
    """An Ibis backend on a local PySpark session (``local[1]``, kbench's settings with smaller
    shuffles) for the engine tests; skipped without Java. Module-scoped: the session stops
    with the module, the JVM does not (it lives as long as the worker process, so a module
    pays a SparkContext's start, not Java's; one session per worker saved nothing)."""
    if shutil.which("java") is None:
        pytest.skip("Java is missing: PySpark's local mode needs a JVM "
                    "(bash scripts/setup.sh --test installs default-jre-headless)")
    pyspark = pytest.importorskip("pyspark.sql")
    from kbench_core import engines
    from kbench_core.engines.spark import _options

    builder = pyspark.SparkSession.builder.master("local[1]").appName("kbench-tests")
    # the settings a session kbench starts has (results collected as Arrow among them), but
    # smaller shuffles
    for key, value in _options("local[1]"):
        if key not in ("spark.master", "spark.app.name", "spark.log.level"):
            builder = builder.config(key, value)
    session = builder.config("spark.sql.shuffle.partitions", "2").getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield engines.connect("spark", session=session)
    session.stop()


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def sample_dir() -> Path:
    """The bundled sample runs (one file per kind)."""
    return SAMPLE_DIR


def count_calls(monkeypatch: pytest.MonkeyPatch, owner: object, name: str,
                calls: dict[str, int], key: str | None = None) -> None:
    """Replace ``owner.name`` (a module's function) for the test by a wrapper adding 1 to
    ``calls[key]`` (default ``name``) on each call."""
    import functools

    original = getattr(owner, name)
    key = key or name
    calls.setdefault(key, 0)

    @functools.wraps(original)
    def counted(*args, **kwargs):
        calls[key] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)


def bias_page(monkeypatch: pytest.MonkeyPatch, args: str):
    """The Cognitive biases page (AppTest) opened with ``KBENCH_APP_ARGS=args``, run once,
    without an exception."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("KBENCH_APP_ARGS", args)
    at = AppTest.from_file(str(ROOT / "views" / "bias.py"), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def clear_app_caches() -> None:
    """Forget every result of the app's caches and the workspace's, as a new server would."""
    from kbench_app import cache, state
    from kbench_core import workspace

    workspace.clear_caches()
    cache.clear()
    state._cached_load.clear()


@pytest.fixture
def bias_workspace(tmp_path, monkeypatch):
    """A workspace (``tmp_path / "ws"``) holding the bias sample, every app cache emptied
    before and after, and ``calls["engine"]`` counting the engine's reductions
    (``kbench_core.engines.reduce_source``): yields ``(folder, calls)``; a test file's own
    fixture adds its counters to ``calls``."""
    from kbench_app.registry import RunRegistry
    from kbench_core import engines
    from kbench_core.workspace import Workspace

    ws = tmp_path / "ws"
    RunRegistry(workspace=Workspace(ws)).add_files(
        [("bias.csv", (SAMPLE_DIR / "bias.csv").read_bytes())])
    clear_app_caches()
    calls = {"engine": 0}
    count_calls(monkeypatch, engines, "reduce_source", calls, "engine")
    yield ws, calls
    clear_app_caches()
