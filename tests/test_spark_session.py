"""Spark settings fail fast, in one line, without Java's log (issue 42, item 4).

A master URL of the wrong form, a closed port, an unknown host, a Spark Connect URL without
its packages: each used to cost a minute of Java retries and 120 lines of log, or a stack
trace, before "unexpected error". Every test here but the last two runs without Java.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from kbench_core.engines import spark
from kbench_core.io import load_run

pytest.importorskip("pyspark.sql")

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def no_java(monkeypatch):
    """Java must not start in these tests (a check before it is what they test); every
    setting is tried afresh."""
    def started(options):
        raise AssertionError("Java was started")

    monkeypatch.setattr(spark, "_java", started)
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    spark.forget_failures()
    yield
    spark.forget_failures()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def raised(**kwargs) -> tuple[str, float]:
    start = time.perf_counter()
    with pytest.raises(spark.SparkUnavailable) as info:
        spark.session(**kwargs)
    return str(info.value), time.perf_counter() - start


@pytest.mark.parametrize("master", ["junk://x", "spark://", "spark://head", "local[0]",
                                    "spark://h:99999", "k8s:/x", "local[*] ", "yarn\n"])
def test_a_master_of_the_wrong_form_is_named_before_java_starts(master) -> None:
    message, seconds = raised(spark_master=master)
    assert "\n" not in message and repr(master) in message and seconds < 1
    assert "expected" in message or "out of range" in message


@pytest.mark.parametrize("master", ["local", "local[*]", "local[4]", "local[2,3]", "yarn",
                                    "spark://a.lab:7077", "spark://a:7077,b:7078",
                                    "k8s://https://api.lab:6443", "k8s://api.lab"])
def test_masters_of_spark_s_forms_pass_the_check(master) -> None:
    spark.check_master(master)


def test_a_closed_port_fails_in_one_line_at_once() -> None:
    port = closed_port()
    message, seconds = raised(spark_master=f"spark://127.0.0.1:{port}")
    assert seconds < 15  # it was 66-74 s and 120 lines of Java's log
    assert message == (f"Spark master 'spark://127.0.0.1:{port}': cannot connect to "
                       f"127.0.0.1:{port} (connection refused); use --engine duckdb or "
                       f"--engine memory instead")


def test_an_unknown_host_fails_in_one_line() -> None:
    message, _ = raised(spark_master="spark://no-such-host.invalid:7077")
    assert "'no-such-host.invalid' is unknown" in message and "\n" not in message


def test_spark_connect_of_the_wrong_form_or_a_closed_port(monkeypatch) -> None:
    monkeypatch.setenv("SPARK_REMOTE", "http://x")
    message, _ = raised()
    assert message.startswith("SPARK_REMOTE='http://x' is not a Spark Connect URL")
    monkeypatch.setenv("SPARK_REMOTE", f"sc://127.0.0.1:{closed_port()}")
    message, seconds = raised()
    assert "(SPARK_REMOTE): cannot connect" in message and seconds < 15


def test_spark_connect_without_its_packages_names_the_extra(monkeypatch) -> None:
    from pyspark.errors import PySparkImportError
    from pyspark.sql.connect import utils

    def missing(name):
        raise PySparkImportError(errorClass="PACKAGE_NOT_INSTALLED",
                                 messageParameters={"package_name": "grpcio",
                                                    "minimum_version": "1.48.1"})

    monkeypatch.setattr(utils, "check_dependencies", missing)
    monkeypatch.setenv("SPARK_REMOTE", "sc://127.0.0.1:15002")
    message, _ = raised()
    assert "grpcio" in message and "pip install 'kbench[spark]'" in message


def test_the_spark_extra_installs_what_spark_connect_needs() -> None:
    from pyspark.sql.connect.utils import check_dependencies

    check_dependencies("kbench")  # grpcio, grpcio-status, googleapis-common-protos


def test_a_failed_setting_is_not_tried_again(monkeypatch) -> None:
    calls = []
    real = spark._reach
    monkeypatch.setattr(spark, "_reach", lambda *a: calls.append(a) or real(*a))
    master = f"spark://127.0.0.1:{closed_port()}"
    first, _ = raised(spark_master=master)
    again, seconds = raised(spark_master=master)
    assert again == first and len(calls) == 1 and seconds < 0.1
    spark.forget_failures()
    raised(spark_master=master)
    assert len(calls) == 2


def test_a_master_that_never_answers_is_given_up_on(monkeypatch) -> None:
    # a port that accepts connections but is not a Spark master: Spark retries for a minute
    import pyspark.sql

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    hang = threading.Event()

    class Builder:
        def __getattr__(self, name):
            return lambda *args: hang.wait(30) if name == "getOrCreate" else self

    monkeypatch.setattr(spark, "_java", lambda options: None)
    monkeypatch.setattr(pyspark.sql, "SparkSession", type("S", (), {"builder": Builder()}))
    monkeypatch.setenv("KBENCH_SPARK_TIMEOUT", "1")
    monkeypatch.setenv("KBENCH_SPARK_LOG", "-")
    try:
        master = f"spark://127.0.0.1:{listener.getsockname()[1]}"
        message, seconds = raised(spark_master=master)
    finally:
        hang.set()
        listener.close()
    assert seconds < 5 and f"Spark master {master!r}: no session within 1 s" in message


def test_the_app_does_not_retry_a_failed_session_on_every_use(tmp_path, monkeypatch) -> None:
    from streamlit.testing.v1 import AppTest

    from kbench_app import state
    from kbench_app.registry import RunRegistry
    from kbench_core.workspace import Workspace

    bias = (ROOT / "sample_data" / "bias.csv").read_bytes()
    RunRegistry(workspace=Workspace(tmp_path)).add_files(
        [("a.csv", bias), ("b.csv", bias.replace(b"synthetic-gamma", b"synthetic-delta"))])
    calls = []
    real = spark._reach
    monkeypatch.setattr(spark, "_reach", lambda *a: calls.append(a) or real(*a))
    master = f"spark://127.0.0.1:{closed_port()}"
    monkeypatch.setenv("KBENCH_APP_ARGS", f"--no-samples --workspace {tmp_path} "
                                          f"--engine spark --spark-master {master}")
    for _ in range(2):  # two sessions, each opening the Runs page twice
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
        at.run()
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        problems = at.dataframe[0].value.set_index("name")["problem"]
        for name in ("a", "b"):
            assert f"Spark master {master!r}: cannot connect" in problems[name]
            assert "--engine duckdb or --engine memory" in problems[name]
            assert "does not try Spark again until the app restarts" in problems[name]
        assert at.session_state[state.REGISTRY].runs["a"].error is not None
    assert len(calls) == 1


def _kbench(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    import os

    return subprocess.run([sys.executable, "-m", "kbench_core.cli", *args], text=True,
                          capture_output=True, timeout=240,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


@pytest.fixture
def judged_parquet(tmp_path) -> Path:
    path = tmp_path / "judged.parquet"
    load_run(ROOT / "sample_data" / "judged.csv").frame.to_parquet(path, index=False)
    return path


def test_the_command_prints_one_line_for_a_closed_port(judged_parquet) -> None:
    result = _kbench("metrics", str(judged_parquet), "--engine", "spark", "--spark-master",
                     f"spark://127.0.0.1:{closed_port()}")
    assert result.returncode == 1 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert "cannot connect" in result.stderr and "unexpected error" not in result.stderr


def test_a_local_session_keeps_java_s_log_out_of_the_terminal(judged_parquet,
                                                              tmp_path) -> None:
    import shutil

    if shutil.which("java") is None:
        pytest.skip("Java is missing: PySpark's local mode needs a JVM")
    log = tmp_path / "java.log"
    result = _kbench("metrics", str(judged_parquet), "--engine", "spark", "--spark-master",
                     "local[1]", env={"KBENCH_SPARK_LOG": str(log)})
    assert result.returncode == 0, result.stderr
    assert result.stderr == "" and "synthetic-detector" in result.stdout
    assert "Setting default log level to \"WARN\"" in log.read_text()


def test_results_come_back_as_arrow_not_as_rows() -> None:
    # As rows, a replication run's 4.2M per-finding moments held 6.9 GiB in the driver
    # (benchmarks/spark_cluster.py); the tests' own session takes the same settings.
    assert ("spark.sql.execution.arrow.pyspark.enabled", "true") in spark._options("local[1]")
