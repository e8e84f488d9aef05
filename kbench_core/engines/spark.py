"""The Spark session of ``--engine spark``, started so that a bad setting fails fast and says why.

Before any Java starts, the master URL's form is checked (``local[*]``, ``local[N]``,
``spark://HOST:PORT``, ``yarn``, ``k8s://HOST:PORT``; ``SPARK_REMOTE=sc://HOST[:PORT]`` for
Spark Connect), Spark Connect's Python packages are looked for (the ``spark`` extra), and a
master that lives at a host and port is probed with one TCP connection: a closed port or an
unknown host used to cost a minute of Java retries and 120 lines of Java's log before an
"unexpected error". Java's own output (its log at WARN) goes to a file of the temporary folder,
named in every error once Java runs (and removed at exit when no message named it), not to the
terminal, unless ``KBENCH_SPARK_LOG=-`` asks for it there (or names another file).
A cluster's session that does not come up within ``KBENCH_SPARK_TIMEOUT`` seconds once Java runs
(default 30; a port that accepts connections but is not a Spark master) is given up on.

Every failure is one :class:`SparkUnavailable` line naming the master and the cause. It is
remembered for the process: the app (one process for every session) does not start Java again on
every page use for a master that just failed; the message offers the other engines.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import socket
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import IO, Any

__all__ = ["SparkUnavailable", "check_master", "check_remote", "forget_failures", "session"]

PROBE_SECONDS = 5.0  # one TCP connection to the master (a name lookup included)
DEFAULT_TIMEOUT = 30.0  # the session itself, once Java runs
INSTEAD = "use --engine duckdb or --engine memory instead"


class SparkUnavailable(RuntimeError):
    """No Spark session for this setting; the message is one line naming the master and the
    cause. A RuntimeError, so the commands print it as ``kbench: <message>``."""


_HOST = r"(?:[A-Za-z0-9_](?:[A-Za-z0-9._-]*[A-Za-z0-9_])?|\[[0-9A-Fa-f:.]+\])"
_HOST_PORT = rf"({_HOST}):(\d{{1,5}})"
_LOCAL = re.compile(r"local(?:\[(?:\*|[1-9]\d*)(?:,\s*[1-9]\d*)?\])?"
                    r"|local-cluster\[[1-9]\d*,\s*[1-9]\d*,\s*[1-9]\d*\]")
_STANDALONE = re.compile(rf"spark://{_HOST_PORT}(?:,{_HOST_PORT})*")
_K8S = re.compile(rf"k8s://(?:(https?)://)?({_HOST})(?::(\d{{1,5}}))?/?")
_REMOTE = re.compile(rf"sc://({_HOST})(?::(\d{{1,5}}))?(?:/.*)?", re.DOTALL)
MASTER_FORMS = "local[*], local[N], spark://HOST:PORT, yarn or k8s://HOST:PORT"


def _shown(text: str) -> str:
    """A setting as it is quoted in a message: its repr, cut (it may be anything)."""
    return repr(text if len(text) <= 120 else text[:120] + "\u2026")


def _port(master: str, text: str) -> int:
    port = int(text)
    if not 0 < port < 65536:
        raise SparkUnavailable(f"Spark master {_shown(master)}: port {port} is out of range "
                               f"(1 to 65535)")
    return port


def check_master(master: str) -> list[tuple[str, int]]:
    """The hosts and ports to probe for ``master`` (none for ``local`` and ``yarn``);
    :class:`SparkUnavailable` when it is not a Spark master URL."""
    if _LOCAL.fullmatch(master) or master == "yarn":
        return []
    if _STANDALONE.fullmatch(master):
        pairs = re.findall(_HOST_PORT, master[len("spark://"):])
        return [(host, _port(master, port)) for host, port in pairs]
    k8s = _K8S.fullmatch(master)
    if k8s:
        scheme, host, port = k8s.groups()
        return [(host, _port(master, port) if port else (80 if scheme == "http" else 443))]
    raise SparkUnavailable(f"--spark-master {_shown(master)} is not a Spark master URL "
                           f"(expected {MASTER_FORMS})")


def check_remote(remote: str) -> tuple[str, int]:
    """The host and port of a Spark Connect URL (``sc://HOST[:PORT][/;params]``, port 15002
    by default); :class:`SparkUnavailable` when it is not one."""
    found = _REMOTE.fullmatch(remote)
    if not found:
        raise SparkUnavailable(f"SPARK_REMOTE={_shown(remote)} is not a Spark Connect URL "
                               f"(expected sc://HOST[:PORT])")
    host, port = found.groups()
    return host, _port(remote, port) if port else 15002


def _connect_packages() -> None:
    """Spark Connect's Python packages (grpcio, grpcio-status, googleapis-common-protos: the
    ``spark`` extra), else :class:`SparkUnavailable` naming the extra."""
    try:
        from pyspark.sql.connect.utils import check_dependencies

        check_dependencies("kbench")
    except Exception as exc:  # PySparkImportError, or an ImportError of pyspark's own
        raise SparkUnavailable(
            f"SPARK_REMOTE: Spark Connect needs packages that are not installed "
            f"({_first_line(exc)}): pip install 'kbench[spark]'") from None


def _reach(where: str, targets: list[tuple[str, int]], seconds: float) -> None:
    """One TCP connection to any of ``targets`` within ``seconds`` (the name lookup included,
    which a socket timeout does not bound), else :class:`SparkUnavailable` saying why."""

    def connect(host: str, port: int) -> None:
        with socket.create_connection((host.strip("[]"), port), timeout=seconds):
            pass

    causes = []
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kbench-spark-probe")
    try:
        for host, port in targets:
            try:
                pool.submit(connect, host, port).result(timeout=seconds)
                return
            except socket.gaierror:
                causes.append(f"the host {host!r} is unknown")
            except (FutureTimeout, TimeoutError):
                causes.append(f"no answer from {host}:{port} within {seconds:.0f} s")
            except OSError as exc:
                causes.append(f"cannot connect to {host}:{port} "
                              f"({(exc.strerror or str(exc)).lower()})")
    finally:
        pool.shutdown(wait=False)
    raise SparkUnavailable(f"{where}: {'; '.join(causes)}; {INSTEAD}")


def _first_line(exc: BaseException) -> str:
    """The cause of ``exc`` in one line: a Java exception's own message rather than Py4J's
    "An error occurred while calling ..." and the stack trace."""
    java = getattr(exc, "java_exception", None)
    if java is not None:
        try:
            return " ".join(str(java.toString()).split())[:300]
        except Exception:  # the JVM is gone: Py4J's text below
            pass
    for line in str(exc).splitlines():
        line = line.strip(" :")
        if line and not line.startswith("An error occurred while calling"):
            return line[:300]
    return type(exc).__name__


_LOG: dict[str, Any] = {}


def _log_name() -> str:
    """The name of Java's log for a message; a log a message names is kept after exit."""
    _LOG["named"] = True
    return _log()[1]


def _drop_unnamed_log() -> None:
    """At exit: the default log file kbench made, unless a message pointed the user to it."""
    if _LOG.get("made") and not _LOG.get("named"):
        with contextlib.suppress(OSError):
            _LOG["file"].close()
            os.unlink(_LOG["name"])


def _log() -> tuple[IO[bytes] | None, str]:
    """Where Java's output goes: (an open file, its name), or (None, "the terminal") when
    ``KBENCH_SPARK_LOG=-``. The default is a new file of this process in the temporary
    folder (its name made unguessable by ``mkstemp``)."""
    if "file" not in _LOG:
        wanted = os.environ.get("KBENCH_SPARK_LOG", "")
        if wanted == "-":
            _LOG.update(file=None, name="the terminal")
        elif wanted:
            _LOG.update(file=open(wanted, "ab"), name=wanted)  # noqa: SIM115  (kept open)
        else:
            handle, name = tempfile.mkstemp(prefix="kbench-spark-", suffix=".log")
            _LOG.update(file=os.fdopen(handle, "ab"), name=name, made=True)
            atexit.register(_drop_unnamed_log)
    return _LOG["file"], _LOG["name"]


def _options(master: str) -> list[tuple[str, str]]:
    """A local or cluster session's settings: small shuffles (the reductions' tables are
    small), no UI nor progress bars, UTC, Java's log at WARN, and the driver's heap when
    ``KBENCH_SPARK_MEMORY`` gives it (``spark.driver.memory``: a driver kbench starts)."""
    from kbench_core.engines import settings

    memory = [("spark.driver.memory", settings.SPARK_MEMORY)] if settings.SPARK_MEMORY else []
    return [("spark.master", master), ("spark.app.name", "kbench"),
            ("spark.sql.shuffle.partitions", "4"), ("spark.ui.enabled", "false"),
            ("spark.ui.showConsoleProgress", "false"), ("spark.sql.session.timeZone", "UTC"),
            ("spark.log.level", "WARN"),
            # Results come back to Python as Arrow batches, not as Java then Python rows: a
            # replication run's per-finding moments (4.2M rows at 10M tests) took a 4g heap
            # and 6.9 GiB of driver memory as rows (benchmarks/spark_cluster.py).
            ("spark.sql.execution.arrow.pyspark.enabled", "true"), *memory]


def _java(options: list[tuple[str, str]]) -> None:
    """Start the process's Java gateway (as PySpark would on the first session) with its
    output sent to :func:`_log`; nothing when one runs already."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    with SparkContext._lock:
        if SparkContext._gateway is not None:
            return
        out, _ = _log()
        conf = SparkConf()
        for key, value in options:
            conf.set(key, value)
        gateway = launch_gateway(conf, popen_kwargs=None if out is None
                                 else {"stdout": out, "stderr": out})
        SparkContext._gateway = gateway
        SparkContext._jvm = gateway.jvm


def _within(build: Any, seconds: float | None, where: str) -> Any:
    """``build()`` on a helper thread, given up on after ``seconds`` (None: waited for);
    its failure as :class:`SparkUnavailable`."""
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["session"] = build()
        except BaseException as exc:  # handed to the caller below
            result["error"] = exc

    thread = threading.Thread(target=run, name="kbench-spark-start", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise SparkUnavailable(f"{where}: no session within {seconds:.0f} s "
                               f"(KBENCH_SPARK_TIMEOUT); Java's log: {_log_name()}; {INSTEAD}")
    if "error" in result:
        raise SparkUnavailable(f"{where}: the session could not start "
                               f"({_first_line(result['error'])}); Java's log: {_log_name()}; "
                               f"{INSTEAD}") from None
    return result["session"]


def _timeout() -> float:
    text = os.environ.get("KBENCH_SPARK_TIMEOUT", "")
    try:
        seconds = float(text) if text else DEFAULT_TIMEOUT
    except ValueError:
        raise SparkUnavailable(f"KBENCH_SPARK_TIMEOUT={_shown(text)} is not a number of "
                               f"seconds") from None
    return seconds if seconds > 0 else DEFAULT_TIMEOUT


def _start(master: str | None, remote: str | None) -> Any:
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise SparkUnavailable("--engine spark needs PySpark: pip install 'kbench[spark]'; "
                               + INSTEAD) from None
    seconds = _timeout()
    if remote:
        where = f"Spark Connect at {_shown(remote)} (SPARK_REMOTE)"
        target = check_remote(remote)
        _connect_packages()
        _reach(where, [target], PROBE_SECONDS)
        return _within(lambda: SparkSession.builder.appName("kbench").remote(remote)
                       .getOrCreate(), seconds, where)
    master = master or "local[*]"
    where = f"Spark master {_shown(master)}"
    targets = check_master(master)
    if targets:
        _reach(where, targets, PROBE_SECONDS)
    options = _options(master)
    # Java starts before the clock: its start is seconds of a loaded machine, not the master's
    # answer (PySpark itself waits until it runs or exits).
    try:
        _java(options)
    except Exception as exc:
        raise SparkUnavailable(f"{where}: Java did not start ({_first_line(exc)}); Java's "
                               f"log: {_log_name()}; {INSTEAD}") from None

    def build() -> Any:
        builder = SparkSession.builder
        for key, value in options:
            builder = (builder.master(value) if key == "spark.master"
                       else builder.appName(value) if key == "spark.app.name"
                       else builder.config(key, value))
        return builder.getOrCreate()

    # A local session waits for nothing outside this machine; a cluster's master may accept
    # the connection and never register the application (Spark retries for about a minute).
    return _within(build, seconds if targets or master == "yarn" else None, where)


_FAILED: dict[tuple[str | None, str | None], SparkUnavailable] = {}
_LOCK = threading.Lock()


def session(*, spark_master: str | None = None) -> Any:
    """A SparkSession: Spark Connect when ``SPARK_REMOTE`` is set (and no master is given),
    else ``spark_master`` (default ``local[*]``); :class:`SparkUnavailable` (one line: the
    master and the cause) when it cannot start, and the same error again, at once, for the
    same setting later in this process (:func:`forget_failures` to try again)."""
    remote = None if spark_master else (os.environ.get("SPARK_REMOTE") or None)
    key = (spark_master, remote)
    with _LOCK:  # one start at a time: sessions of a server share the process's one JVM
        if key in _FAILED:
            raise _FAILED[key]
        try:
            return _start(spark_master, remote)
        except SparkUnavailable as exc:
            _FAILED[key] = exc
            raise


def forget_failures() -> None:
    """Let the next :func:`session` try every setting again (tests)."""
    with _LOCK:
        _FAILED.clear()
