"""Spark as a user runs it (issue 39, item 4): a standalone master and one worker started from
the pip pyspark install (``bin/spark-class``: the pip package has no ``sbin/start-*.sh``), and
``kbench metrics RUN --engine spark --spark-master spark://…`` for every family, equal to the
memory engine; and the same through Spark Connect (``SPARK_REMOTE=sc://…``, a Connect server
started from the pip install's ``jars/spark-connect_*.jar``). Skipped, with the reason, where
Java (or the Connect jar) is missing."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import TEST_JVM_OPTIONS

ROOT = Path(__file__).resolve().parent.parent
# one run of each family (the published-table kinds go through the same engine code, and
# tests/test_engines.py runs them on a local Spark session): each run costs the cluster ~15 s
RUNS = ["bias.csv", "judged.csv", "replication.csv"]
SEPARATOR = "=== kbench run ==="


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for(port: int, process: subprocess.Popen, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the Spark process ended with status {process.returncode}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise RuntimeError(f"nothing listened on port {port} within {seconds:.0f} s")


def _spark_class(home: Path, *args: str, log: Path) -> subprocess.Popen:
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_NO_DAEMONIZE": "1",
           "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_DAEMON_JAVA_OPTS": TEST_JVM_OPTIONS}
    with log.open("wb") as out:
        return subprocess.Popen([str(home / "bin" / "spark-class"), *args], env=env,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _spark_home(what: str) -> Path:
    """The pip pyspark install holding ``bin/spark-class``; the test skipped, with the reason,
    where Java or that script is missing (``what`` needs them)."""
    if shutil.which("java") is None:
        pytest.skip(f"Java is missing: {what} needs a JVM "
                    "(bash scripts/setup.sh --test installs default-jre-headless)")
    pyspark = pytest.importorskip("pyspark")
    home = Path(pyspark.__file__).resolve().parent
    if not (home / "bin" / "spark-class").exists():
        pytest.skip(f"no bin/spark-class in the pyspark install at {home}")
    return home


@contextlib.contextmanager
def standalone(home: Path, logs: Path, *, cores: str = "1",
               memory: str = "1g") -> Iterator[tuple[str, subprocess.Popen]]:
    """``(spark://127.0.0.1:PORT, worker process)``: a standalone master and a worker of
    ``cores`` and ``memory``, both started with ``bin/spark-class`` from the pyspark package
    at ``home``, logging into ``logs``, stopped on leaving (``benchmarks/spark_cluster.py``
    starts its cluster so too)."""
    port, ui, worker_ui = _free_port(), _free_port(), _free_port()
    master = _spark_class(home, "org.apache.spark.deploy.master.Master", "--host",
                          "127.0.0.1", "--port", str(port), "--webui-port", str(ui),
                          log=logs / "master.log")
    worker = None
    try:
        _wait_for(port, master, 120)
        url = f"spark://127.0.0.1:{port}"
        worker = _spark_class(home, "org.apache.spark.deploy.worker.Worker", url, "--cores",
                              cores, "--memory", memory, "--webui-port", str(worker_ui),
                              "--work-dir", str(logs / "work"), log=logs / "worker.log")
        deadline = time.monotonic() + 120
        while "registered with master" not in (logs / "worker.log").read_text(
                errors="replace").lower():
            if time.monotonic() > deadline or worker.poll() is not None:
                raise RuntimeError("the worker did not register with the master:\n"
                                   + (logs / "worker.log").read_text(errors="replace")[-2000:])
            time.sleep(0.5)
        yield url, worker
    finally:
        if worker is not None:
            _stop(worker)
        _stop(master)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """``spark://127.0.0.1:PORT``: a standalone master and a worker of 1 core and 1 GB
    (:func:`standalone`), stopped after the module."""
    home = _spark_home("a Spark master and worker")
    with standalone(home, tmp_path_factory.mktemp("spark-logs")) as (url, _):
        yield url


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory):
    """``sc://127.0.0.1:PORT``: a Spark Connect server (``local[1]``, no UI, 4 shuffle
    partitions) started with ``bin/spark-class org.apache.spark.deploy.SparkSubmit`` from the
    pyspark package, whose ``jars/`` holds the server, stopped after the module."""
    home = _spark_home("a Spark Connect server")
    if not list((home / "jars").glob("spark-connect_*.jar")):
        pytest.skip(f"no jars/spark-connect_*.jar (the Spark Connect server) in the pyspark "
                    f"install at {home}")
    logs = tmp_path_factory.mktemp("spark-connect-logs")
    port = _free_port()
    server = _spark_class(
        home, "org.apache.spark.deploy.SparkSubmit", "--class",
        "org.apache.spark.sql.connect.service.SparkConnectServer", "--master", "local[1]",
        "--conf", f"spark.connect.grpc.binding.port={port}",
        "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=4",
        "--conf", f"spark.driver.extraJavaOptions={TEST_JVM_OPTIONS}",
        "--conf", "spark.sql.session.timeZone=UTC",
        "--conf", f"spark.sql.warehouse.dir={logs / 'warehouse'}",
        "spark-internal", log=logs / "server.log")
    try:
        try:
            _wait_for(port, server, 120)
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}:\n" + (logs / "server.log").read_text(
                errors="replace")[-2000:]) from None
        yield f"sc://127.0.0.1:{port}"
    finally:
        _stop(server)


def _metrics(paths: list[Path], *args: str, env: dict[str, str] | None = None,
             driver_jvm: bool | None = None) -> list[str]:
    """``kbench metrics`` of each path in one fresh process (as a user runs it: a Spark
    driver of its own), the outputs with the export time blanked. ``SPARK_REMOTE`` is unset
    for the child unless ``env`` (settings added to the child's environment) gives it.
    ``driver_jvm``: whether the child must have started a Spark driver JVM of its own (a
    client of a standalone master does; a Spark Connect client does not)."""
    script = (
        "import sys\n"
        "from kbench_core.cli import main\n"
        f"for path in sys.argv[1:]:\n"
        f"    print({SEPARATOR!r}, flush=True)\n"
        f"    if main(['metrics', path, *{list(args)!r}]) != 0:\n"
        "        sys.exit(f'kbench metrics {path} failed')\n"
        "    sys.stdout.flush()\n"
        "from pyspark import SparkContext\n"
        "print('driver_jvm=%s' % (SparkContext._active_spark_context is not None),"
        " file=sys.stderr)\n")
    child = {**os.environ, "PYTHONPATH": str(ROOT)}
    child.pop("SPARK_REMOTE", None)
    child.update(env or {})
    done = subprocess.run([sys.executable, "-c", script, *map(str, paths)], env=child,
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    if driver_jvm is not None:
        assert f"driver_jvm={driver_jvm}" in done.stderr, done.stderr[-3000:]
    parts = done.stdout.split(SEPARATOR + "\n")[1:]
    return [re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "<time>", p) for p in parts]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[Path]:
    """Every sample run (:data:`RUNS`) as a Parquet file."""
    from kbench_core import io

    folder = tmp_path_factory.mktemp("runs")
    paths = []
    for name in RUNS:
        path = folder / f"{Path(name).stem}.parquet"
        io.load_run(ROOT / "sample_data" / name).frame.to_parquet(path)
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def memory(runs) -> list[str]:
    """``kbench metrics --engine memory`` of every run: what each Spark path must print."""
    return _metrics(runs, "--engine", "memory")


def _assert_equal(memory: list[str], sparked: list[str]) -> None:
    assert len(memory) == len(sparked) == len(RUNS)
    for name, want, got in zip(RUNS, memory, sparked, strict=True):
        assert want.count("\n") > 3, name
        assert got == want, name


def test_metrics_on_a_standalone_cluster_equal_memory(cluster, runs, memory):
    _assert_equal(memory, _metrics(runs, "--engine", "spark", "--spark-master", cluster,
                                   driver_jvm=True))


def test_metrics_through_spark_connect_equal_memory(connect_server, runs, memory):
    """``SPARK_REMOTE=sc://…`` and no ``--spark-master``: kbench opens a Spark Connect
    session (:func:`kbench_core.engines.spark.session`) and every family prints what the
    memory engine prints."""
    # the judged run's tiers from the cells summed on the server (not its rows fetched: the
    # path of a run of KBENCH_JUDGED_CELLS_ROWS rows or more), their answers cached there
    _assert_equal(memory, _metrics(runs, "--engine", "spark",
                                   env={"SPARK_REMOTE": connect_server,
                                        "KBENCH_JUDGED_CELLS_ROWS": "0"}, driver_jvm=False))
