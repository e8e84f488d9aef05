"""Cost of refusing hostile uploads (issue 19): time and peak memory of each denial-of-service
case, and the peak memory of loading a big gzipped CSV against the frame it gives (the targets:
memory <= 3x the frame). Issue 29's cases follow: a JSON object with two record lists (rows
lost), a gzipped JSON array of 3.1 M flat records (300 MB), a folder with a big hidden file,
2 M tiny JSON Lines, the same 200 k bias trials as a JSON array and as JSON Lines, and the
first start of the app's run registry on a workspace of 1,500 saved runs.

Each case runs in a fresh interpreter, so its peak resident memory (``VmHWM``, minus the
resident size after imports, the family registry included) is its own: ``ru_maxrss`` would
start at the parent's high-water mark, since Linux keeps it across ``exec``.
Run: ``python benchmarks/hostile.py [--quick] [--only TEXT]``.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
HEAD = "model,bias,condition,intensity,domain,score"
ROW = "m,anchoring_effect,treatment,weak,social,0.5"

PROBE = """
import sys, time
from pathlib import Path
from kbench_core.io import RunFormatError, load_run
from kbench_core import families
families.all_families()  # the registry (plotly, scipy: ~70 MB) is part of the program


def rss(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1]) / 1024
    return 0.0


base = rss("VmRSS:")
wall, cpu = time.perf_counter(), time.process_time()
try:
    run = load_run(sys.argv[1])
    outcome = f"loaded {len(run):,} rows"
    frame_mb = run.frame.memory_usage(deep=True).sum() / 1024**2
except RunFormatError as err:
    outcome, frame_mb = "refused: " + str(err).split(": ", 1)[1][:70].replace(chr(10), " "), 0.0
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
peak = rss("VmHWM:") - base
print(f"{wall:.2f}|{cpu:.2f}|{peak:.0f}|{frame_mb:.0f}|{outcome}")
"""


START = """
import sys, time
from pathlib import Path
from kbench_app.registry import RunRegistry
from kbench_core.workspace import Workspace
from kbench_core import families
families.all_families()


def rss(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1]) / 1024
    return 0.0


base = rss("VmRSS:")
wall, cpu = time.perf_counter(), time.process_time()
registry = RunRegistry(workspace=Workspace(sys.argv[1]))
report = registry.load_workspace()  # what the app's first session does
registry.summary()  # what the Runs page lists
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
peak = rss("VmHWM:") - base
outcome = f"started: {len(registry.runs):,} runs, {len(report.errors)} errors"
print(f"{wall:.2f}|{cpu:.2f}|{peak:.0f}|0|{outcome}")
"""


def _measure(path: Path, probe: str = PROBE) -> tuple[float, float, float, float, str]:
    done = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True,
                          text=True, cwd=ROOT, timeout=900)
    if done.returncode != 0:
        return (float("nan"),) * 4 + (f"crashed: {done.stderr.strip()[-80:]}",)
    wall, cpu, peak, frame, outcome = done.stdout.strip().splitlines()[-1].split("|", 4)
    return float(wall), float(cpu), float(peak), float(frame), outcome


def _wide_csv(path: Path, n: int) -> None:
    path.write_text(HEAD + "," + ",".join(f"x{i}" for i in range(n)) + "\n"
                    + ROW + "," + ",".join("1" for _ in range(n)) + "\n")


def _many_rows_parquet(path: Path, n: int) -> None:
    table = pa.table({"model": pa.array(np.zeros(n, np.int8)).dictionary_encode()})
    pq.write_table(table, path, compression="zstd")


def _dir_tar(path: Path, n: int) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for i in range(n):
            info = tarfile.TarInfo(f"d{i}")
            info.type = tarfile.DIRTYPE
            archive.addfile(info)
    path.write_bytes(buffer.getvalue())


def _dir_zip(path: Path, n: int) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        for i in range(n):
            archive.writestr(f"d{i}/", b"")


def _big_cell(path: Path, mb: int) -> None:
    path.write_text(HEAD + ",note\n" + ROW + "," + "x" * (mb * 1024**2) + "\n")


def _dictionary_bomb(path: Path, rows: int) -> None:
    """One 1,000-character value repeated through a dictionary: ~0.24 MB for 2 M rows."""
    index = pa.array(np.zeros(rows, np.int32))

    def repeated(value: str) -> pa.DictionaryArray:
        return pa.DictionaryArray.from_arrays(index, pa.array([value]))

    table = pa.table({"model": repeated("m"), "bias": repeated("x" * 1000),
                      "condition": repeated("control"), "domain": repeated("d"),
                      "score": np.full(rows, 0.5)})
    pq.write_table(table, path, compression="zstd", store_schema=False)


def _text_gzip_csv(path: Path, rows: int) -> None:
    """Bias rows whose response is a unique sentence: text, not labels, fills the file."""
    lines = [HEAD + ",response\n"]
    lines += [f"model-{i % 8},anchoring_effect,control,,social,{i % 10 / 10},"
              f"the answer to trial {i} is {i * 7919 % 1000003} because of the reasons given\n"
              for i in range(rows)]
    path.write_bytes(gzip.compress("".join(lines).encode(), compresslevel=1))


def _gzip_csv(path: Path, rows: int) -> None:
    from kbench_core.samples import big_bias_trials

    path.write_bytes(gzip.compress(big_bias_trials(rows).to_csv(index=False).encode(),
                                   compresslevel=1))


def _flat_records(n: int) -> list[dict]:
    from kbench_core.samples import big_bias_trials

    frame = big_bias_trials(n)
    frame = frame[frame["condition"] != "debiasing"][
        ["model", "bias", "condition", "intensity", "domain", "score"]]
    return json.loads(frame.to_json(orient="records"))


def _gzip_json(path: Path, n: int) -> None:
    """Flat bias records as one JSON array (the red team's 300 MB, 1.5 MB gzipped, file)."""
    path.write_bytes(gzip.compress(json.dumps(_flat_records(n)).encode(), compresslevel=9))


def _bias_records(path: Path, n: int, lines: bool) -> None:
    """Full bias trials (prompts, responses, 16 fields) as a JSON array or JSON Lines."""
    from kbench_core.samples import big_bias_trials

    path.write_text(big_bias_trials(n).to_json(orient="records", lines=lines))


def _empty_lines(path: Path, n: int) -> None:
    path.write_bytes(gzip.compress(b'{"x": 0}\n' * n, compresslevel=9))


def _two_lists(path: Path) -> None:
    record = {"model": "m", "bias": "anchoring_effect", "condition": "control",
              "domain": "social", "score": 0.5}
    path.write_text(json.dumps({"records": [record] * 4, "data": [record] * 4}))


def _hidden_folder(path: Path, mb: int) -> None:
    """40 KahneBench reports and one hidden file of ``mb`` MB (a cache, an editor's swap)."""
    path.mkdir()
    reports = sorted((ROOT / "sample_data" / "real" / "kahnebench").glob("fingerprint_*"))
    for i in range(40):
        data = reports[i % len(reports)].read_bytes()
        (path / f"fingerprint_m{i}.json").write_bytes(
            data.replace(b'"model_id": "', f'"model_id": "m{i}-'.encode(), 1))
    block = np.random.default_rng(0).bytes(1 << 20)
    with open(path / ".cache.bin", "wb") as handle:
        for _ in range(mb):
            handle.write(block)


def _workspace(path: Path, n: int) -> None:
    """``n`` saved runs of 300 bias trials each, told apart by their model names (distinct
    bytes: the validated-run cache of a process cannot share them)."""
    from kbench_core.io import load_run
    from kbench_core.workspace import Workspace

    run = load_run(ROOT / "sample_data" / "bias.csv")
    frame = run.frame.head(300).copy()
    frame["model"] = frame["model"].astype(str)
    workspace = Workspace(path)
    for i in range(n):
        frame["model"] = [f"model-{i}-{k % 3}" for k in range(len(frame))]
        workspace.save(type(run)(name=f"run {i}", kind=run.kind, frame=frame.copy(),
                                 meta={**run.meta, "sha256": f"{i:064x}"},
                                 warnings=run.warnings))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller cases")
    parser.add_argument("--only", default="", help="run the cases whose label has this text")
    args = parser.parse_args()
    quick = args.quick
    cases = [
        ("8,000-column CSV", "wide.csv", lambda p: _wide_csv(p, 8_000)),
        ("50,000-column CSV", "wider.csv", lambda p: _wide_csv(p, 50_000)),
        ("Parquet, 40 M rows", "rows.parquet",
         lambda p: _many_rows_parquet(p, 4_000_000 if quick else 40_000_000)),
        ("tar.gz, 1.6 M folders", "dirs.tar.gz",
         lambda p: _dir_tar(p, 100_000 if quick else 1_600_000)),
        ("zip, 100 k folders", "dirs.zip", lambda p: _dir_zip(p, 100_000)),
        ("CSV, one 100 MB cell", "cell.csv", lambda p: _big_cell(p, 100)),
        ("gzip CSV, 1.5 M bias rows", "bias.csv.gz",
         lambda p: _gzip_csv(p, 150_000 if quick else 1_500_000)),
        ("gzip CSV, 3.6 M text rows", "text.csv.gz",
         lambda p: _text_gzip_csv(p, 360_000 if quick else 3_600_000)),
        ("Parquet dictionary bomb", "bomb.parquet",
         lambda p: _dictionary_bomb(p, 200_000 if quick else 2_000_000)),
        # issue 29
        ("JSON, two record lists", "two.json", _two_lists),
        ("gzip JSON, 3.1 M flat records", "flat.json.gz",
         lambda p: _gzip_json(p, 440_000 if quick else 4_400_000)),
        ("folder, 40 reports + hidden", "reports",
         lambda p: _hidden_folder(p, 100 if quick else 1_000)),
        ("gzip JSONL, 2 M tiny lines", "tiny.jsonl.gz",
         lambda p: _empty_lines(p, 200_000 if quick else 2_000_000)),
        ("JSON, 200 k bias trials", "trials.json",
         lambda p: _bias_records(p, 20_000 if quick else 200_000, lines=False)),
        ("JSONL, 200 k bias trials", "trials.jsonl",
         lambda p: _bias_records(p, 20_000 if quick else 200_000, lines=True)),
        ("workspace, 1,500 runs: start", "workspace",
         lambda p: _workspace(p, 150 if quick else 1_500)),
    ]
    cases = [case for case in cases if args.only.lower() in case[0].lower()]
    print(f"{'case':28} {'file':>9} {'wall s':>7} {'CPU s':>6} {'peak MB':>8} "
          f"{'x frame':>8}  outcome")
    with tempfile.TemporaryDirectory() as tmp:
        for label, name, make in cases:
            path = Path(tmp) / name
            make(path)
            size = sum(p.stat().st_size for p in path.rglob("*")) if path.is_dir() \
                else path.stat().st_size
            wall, cpu, peak, frame, outcome = _measure(
                path, START if name == "workspace" else PROBE)
            ratio = f"{peak / frame:.2f}" if frame else "-"
            print(f"{label:28} {size / 1024**2:7.2f}MB {wall:7.2f} {cpu:6.2f} {peak:8.0f} "
                  f"{ratio:>8}  {outcome}", flush=True)
            shutil.rmtree(path) if path.is_dir() else path.unlink()


if __name__ == "__main__":
    main()
