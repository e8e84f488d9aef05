"""``kbench validate``: each file's kind and size, or its errors."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from kbench_core.io import DEFAULT_MAX_BYTES, RunFormatError, load_run
from kbench_core.text import count_noun

from ._common import _safe, _size


def validate(paths: Sequence[str], *, max_mb: float) -> int:
    """Print each file's kind and size, or its errors; 1 if any file is invalid."""
    status = 0
    for path in paths:
        try:
            run = load_run(path, max_bytes=int(max_mb * 1024**2))
        except RunFormatError as err:
            status = 1
            print(f"INVALID {err}")  # RunFormatError messages are escaped already
            continue
        size = f"{_size(int(run.meta['bytes']))}, " if run.meta.get("bytes") else ""
        models = ", ".join(_safe(m) for m in run.models[:6])
        print(f"ok      {_safe(path)}: {run.kind}, {count_noun(len(run), 'row')}, "
              f"{count_noun(len(run.models), 'model')} "
              f"({models}{', ...' if len(run.models) > 6 else ''}), "
              f"{size}format {_safe(run.meta['format'])}")
        for warning in run.warnings:
            print(f"        warning: {_safe(warning)}")
    return status


def add_parser(sub: argparse._SubParsersAction) -> None:
    val = sub.add_parser("validate", help="check files: kind and size, or every error")
    val.add_argument("files", nargs="+")
    val.add_argument("--max-mb", type=float, default=DEFAULT_MAX_BYTES / 1024**2,
                     help="size limit in MB (default %(default)g)")
    val.set_defaults(run=lambda args, parser: validate(args.files, max_mb=args.max_mb))
