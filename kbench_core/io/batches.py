"""Loading many files at once: grouping them into runs (:func:`batch_groups`) and
:func:`load_files`."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

from kbench_core import bundles
from kbench_core.problems import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_DECOMPRESSED,
    RunFormatError,
)
from kbench_core.problems import fail as _fail
from kbench_core.readers import (
    _clean_name,
    _split_name,
)

from .finish import _finish
from .load import _format_alone, _parse_bundle
from .run import Run, _CallbackFailed, _Progress


def batch_groups(files: Sequence[tuple[str, bytes]]) -> list[list[int]]:
    """Which files of one batch (an upload of several files) make one run.

    Files that a multi-file native format (one that reads a folder, e.g. KahneBench's
    fingerprint reports) recognises each on its own content are one group per format, as
    the folder holding them would be one run; every other file is a group of its own, and
    so is a file whose name is already in its format's group (a folder cannot hold both).
    Groups are lists of indices into ``files``, in the order of their first file.

    >>> batch_groups([("a.csv", b"model,bias\\n"), ("b.csv", b"model,bias\\n")])
    [[0], [1]]
    """
    groups: list[list[int]] = []
    by_format: dict[str, list[int]] = {}
    # Parsing a file to look at it costs: only when two or more could make a group.
    several = sum(str(name).lower().endswith(".json") for name, _ in files) >= 2
    for index, (filename, data) in enumerate(files):
        fmt = _format_alone(_clean_name(str(filename)), bytes(data)) if several else None
        group = by_format.get(fmt.name) if fmt is not None else None
        taken = {_clean_name(str(files[i][0])) for i in group or ()}
        if group is not None and _clean_name(str(filename)) not in taken:
            group.append(index)
            continue
        groups.append([index])
        if fmt is not None and fmt.name not in by_format:
            by_format[fmt.name] = groups[-1]
    return groups


def batch_hash(files: Sequence[tuple[str, bytes]]) -> str:
    """The content hash of files loaded together: that of a folder holding just them
    (:func:`load_run` on the folder gives the same hash)."""
    digest = hashlib.sha256()
    for filename, data in sorted((_clean_name(str(n)), d) for n, d in files):
        digest.update(filename.encode() + b"\0")
        digest.update(hashlib.sha256(bytes(data)).digest())
    return digest.hexdigest()


def batch_name(files: Sequence[tuple[str, bytes]]) -> str:
    """A run name for files loaded together: their names' common start without trailing
    separators (``fingerprint_gpt52.json``, ``fingerprint_grok.json`` -> ``fingerprint``),
    else the first file's name with the count of the others."""
    stems = [_split_name(_clean_name(str(n)))[0] for n, _ in files]
    common = stems[0] if stems else ""
    for stem in stems[1:]:
        while not stem.startswith(common):
            common = common[:-1]
    common = common.rstrip("_-. ")
    if len(common) >= 3:
        return common
    return f"{stems[0]} and {len(stems) - 1} more" if stems else "files"


def load_files(files: Sequence[tuple[str, bytes]], *, name: str | None = None,
               max_bytes: int = DEFAULT_MAX_BYTES,
               max_decompressed: int = DEFAULT_MAX_DECOMPRESSED,
               progress: Callable[[float, str], None] | None = None) -> Run:
    """Several files as one run, exactly as :func:`load_run` reads a folder holding them
    (the upload of a folder's files: see :func:`batch_groups`).

    Each file must be within ``max_bytes``, all together within ``max_decompressed``;
    ``name`` defaults to :func:`batch_name`. Errors are :class:`RunFormatError` naming the
    run. ``meta["files"]`` lists the files' names.
    """
    label = _clean_name(str(name)) if name is not None else batch_name(files)
    report = _Progress(progress)

    def read() -> dict[str, bytes]:
        members = bundles.Members()
        total = 0
        for filename, data in files:
            filename = _clean_name(str(filename))
            if len(data) > max_bytes:
                raise bundles.BundleError(f"{filename} is over the file size limit")
            total += len(data)
            if total > max_decompressed:
                raise bundles.BundleError("its files add up to more than the "
                                          "decompressed-size limit")
            if filename in members:
                raise bundles.BundleError(f"two files are named {filename}")
            members[filename] = bytes(data)
        if not members:
            raise bundles.BundleError("no files")
        return members

    try:
        report(0.0, "read")
        report(0.3, "parse")
        parsed = _parse_bundle(label, "files", read, {})
        names = [_clean_name(str(n)) for n, _ in files]
        run = _finish(parsed, name=label, kind=None, on_error="raise", columns=None,
                      warnings=[], report=report,
                      meta={"source": f"{len(names)} files", "files": names,
                            "format": f"{parsed.format.name} ({len(names)} files)",
                            "bytes": sum(len(d) for _, d in files),
                            "sha256": batch_hash(files)})
        report(1.0, "done")
    except RunFormatError:
        raise
    except _CallbackFailed as failed:
        raise failed.error from None
    except Exception as exc:  # the boundary, as in load_run
        raise _fail(label, f"cannot read these files ({type(exc).__name__}: "
                           f"{str(exc)[:200]})") from None
    return run
