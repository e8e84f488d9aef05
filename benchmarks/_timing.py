"""What the benchmark scripts share: :func:`best_of`, the best of a few timed calls, and
:func:`write_chunks`, a big run written to Parquet a chunk at a time. Imported
by its file name (a script's own folder is first on ``sys.path`` when it is run as
``python benchmarks/<script>.py``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


def best_of(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    """The least wall time of ``repeat`` calls of ``fn`` (seconds), and its last result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def write_chunks(path: Path, chunks: Iterable[pd.DataFrame]) -> Path:
    """Write ``chunks`` (frames of one schema) as one Parquet file at ``path``, labels as
    plain text (as a user's file holds them), through a temporary name so an interrupted
    write leaves no half file a later run would take as made."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    writer = None
    for frame in chunks:
        table = pa.Table.from_pandas(frame, preserve_index=False)
        table = table.cast(pa.schema([pa.field(f.name, pa.string())
                                      if pa.types.is_dictionary(f.type) else f
                                      for f in table.schema]))
        if writer is None:
            writer = pq.ParquetWriter(tmp, table.schema)
        writer.write_table(table)
    if writer is None:
        raise ValueError("no chunk to write")
    writer.close()
    tmp.rename(path)
    return path


def measured_in_child(script: str, *args: str) -> dict:
    """Run ``python script --measure ARGS`` in a process of its own (its peak RSS its own) and
    return the JSON of its last line, or ``{"error": ...}`` with its last line of stderr."""
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, script, "--measure", *args], capture_output=True,
                         text=True, cwd=Path(script).resolve().parent.parent, check=False)
    if out.returncode:
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[-1][:300]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def before_and_after(script: str, argv: list[str], measure: Callable[..., dict],
                     make: Callable[[int], Path], flag: str, default: str) -> None:
    """A before/after benchmark's command line: ``--measure PATH HOW VALUE`` measures in this
    process (``measure(path, how, value)``, its JSON on the last line); otherwise each size
    given (default 1M rows) is made (``make``) and measured ``before`` and ``after`` (or
    ``--only`` one) in a child process each, with ``flag VALUE`` (default ``default``) passed
    on, one JSON line per measure."""
    import json

    if argv[:1] == ["--measure"]:
        print(json.dumps(measure(argv[1], argv[2], argv[3])))
        return
    only = argv[argv.index("--only") + 1] if "--only" in argv else None
    value = argv[argv.index(flag) + 1] if flag in argv else default
    sizes = [int(a) for a in argv if a.isdigit()] or [1_000_000]
    for n_rows in sizes:
        path = make(n_rows)
        for how in ("before", "after"):
            if only and how != only:
                continue
            result = measured_in_child(script, str(path), how, value)
            print(json.dumps({"rows": n_rows, "path": how, flag.lstrip("-"): value,
                              **result}), flush=True)
