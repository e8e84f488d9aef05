"""A class-data-sharing (CDS) archive of the classes a Spark JVM loads, for the JVMs the tests
start (``tests.conftest.TEST_JVM_OPTIONS``: local drivers, the standalone master, worker and
executors, the Spark Connect server).

Each test module with a Spark session starts a JVM that loads ~10,000 of Spark's classes from
its jars; mapped from an archive made once, a start and a first query took 9.8 s instead of
14.3 s (Java 17, PySpark 4.0). Class loading only: what runs, and its results, are Java's either
way. The archive belongs to one Java and one PySpark install (its name hashes both), is kept
in the user's cache (``$XDG_CACHE_HOME/kbench-tests``) and is used only when it exists:
``python -m tests.jvm_cache`` builds it (``scripts/test.sh`` does, beside the numeric pass).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

# The C1 compiler alone and the serial collector: why, see tests/conftest.py.
BASE_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
# An archive a JVM cannot use (another class path: an executor's, say) is skipped with a
# warning on Java's stdout; quiet, as a test run without the archive is.
_QUIET = "-Xlog:cds*=off"

# What the JVM that writes the archive runs: a session, a grouped query, a Parquet file
# written and read back (the classes every test session loads), then Java left to exit on its
# own, which is when it writes the archive.
_WORKLOAD = """
import sys, tempfile
from pyspark import SparkContext
from pyspark.sql import SparkSession

spark = (SparkSession.builder.master("local[1]").appName("kbench-cds")
         .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
         .getOrCreate())
with tempfile.TemporaryDirectory() as folder:
    frame = spark.range(1000).selectExpr("id % 7 AS k", "CAST(id AS DOUBLE) / 3 AS v")
    frame.write.parquet(folder + "/t.parquet")
    spark.read.parquet(folder + "/t.parquet").groupBy("k").agg({"v": "avg"}).collect()
spark.stop()
java = SparkContext._gateway.proc
java.stdin.close()  # PySpark's gateway exits when its stdin closes
sys.exit(java.wait(timeout=600))
"""


def _java_home() -> Path | None:
    java = shutil.which("java")
    return Path(os.path.realpath(java)).parents[1] if java else None


def _pyspark_jars() -> Path | None:
    spec = importlib.util.find_spec("pyspark")  # found, not imported: conftest stays quick
    if spec is None or spec.origin is None:
        return None
    jars = Path(spec.origin).parent / "jars"
    return jars if jars.is_dir() else None


def archive() -> Path | None:
    """Where the archive of this Java and this PySpark lives, built or not; None without
    Java or PySpark. A Java or PySpark upgrade changes the name: an archive of another JVM
    build must never be mapped (a damaged or foreign archive can crash the JVM)."""
    home, jars = _java_home(), _pyspark_jars()
    if home is None or jars is None:
        return None
    key = hashlib.sha256(str(jars).encode())
    for path in (home / "lib" / "modules", home / "lib" / "server" / "libjvm.so",
                 home / "lib" / "server" / "classes.jsa"):
        try:
            stat = path.stat()
        except OSError:
            return None
        key.update(f"{path}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    for jar in sorted(jars.glob("*.jar")):
        key.update(jar.name.encode())
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kbench-tests"
    return cache / f"spark-cds-{key.hexdigest()[:16]}.jsa"


def jvm_options() -> str:
    """The test JVMs' options: :data:`BASE_JVM_OPTIONS`, and the archive when it is built
    (its path goes unquoted into PYSPARK_SUBMIT_ARGS: not one with spaces or quotes)."""
    path = archive()
    if path is None or not path.is_file() or any(c.isspace() or c in "\"'" for c in str(path)):
        return BASE_JVM_OPTIONS
    return f"{BASE_JVM_OPTIONS} -XX:SharedArchiveFile={path} {_QUIET}"


def build() -> str:
    """Build the archive when it is missing (best effort: the tests run without it); what
    was done, in one line."""
    path = archive()
    if path is None:
        return "no Java or PySpark: no archive for Spark's JVMs"
    if path.is_file():
        return f"Spark's JVMs map {path}"
    partial = path.with_name(f"{path.stem}.{os.getpid()}.partial")
    dump = f"{BASE_JVM_OPTIONS} -XX:ArchiveClassesAtExit={partial}"
    env = {**os.environ, "PYSPARK_SUBMIT_ARGS": f'--driver-java-options "{dump}" pyspark-shell'}
    env.pop("SPARK_REMOTE", None)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)  # a home without a cache: no archive
        done = subprocess.run([sys.executable, "-c", _WORKLOAD], env=env, capture_output=True,
                              text=True, timeout=900, check=False)
        # written whole? A JVM mapping a cut archive crashes; one this Java can read starts
        checked = done.returncode == 0 and partial.is_file() and subprocess.run(
            ["java", f"-XX:SharedArchiveFile={partial}", _QUIET, "-version"],
            capture_output=True, timeout=120, check=False).returncode == 0
        if not checked:
            return (f"no archive for Spark's JVMs (status {done.returncode}): "
                    + (done.stderr.strip().splitlines() or ["no output"])[-1][:300])
        for old in path.parent.glob("spark-cds-*.jsa"):  # another Java's or PySpark's
            old.unlink(missing_ok=True)
        os.replace(partial, path)  # whole or not at all, for JVMs starting meanwhile
        return f"Spark's JVMs map {path} (built)"
    except (OSError, subprocess.SubprocessError) as exc:
        return f"no archive for Spark's JVMs ({exc})"
    finally:
        partial.unlink(missing_ok=True)


if __name__ == "__main__":
    print(f"kbench test: {build()}")
