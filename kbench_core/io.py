"""Loading and validating runs (``docs/formats.md``).

:func:`load_run` is the one door through which data enters kbench: it reads CSV, TSV, JSON,
JSON Lines and Parquet (each optionally gzipped) from a path or ``(filename, bytes)``, detects the
run kind from the columns, validates every row against :mod:`kbench_core.schema` and returns a
frozen :class:`Run`. Everything downstream trusts the frame it gets. The benchmarks' own output
formats (a KahneBench result JSON, a folder or archive of BlockBench judge outputs, ...) are
recognised by :mod:`kbench_core.native`, reshaped to canonical columns and then validated the same
way.

Invalid input raises :class:`RunFormatError`, whose message names the file, the row (1-based, as
a user counts: CSV/TSV/JSON Lines by line with the header as line 1, JSON lists by record,
Parquet by row) and the field. Nothing else escapes the loader: parser exceptions are caught at
this edge and re-raised as :class:`RunFormatError`, and its messages never carry a raw control
character (they are written as ``\x1b``-style escapes), so printing one is safe on a terminal.

Limits are checked before the work they bound (``docs/formats.md``, File formats): regular files
only (no devices or FIFOs), the file size, the decompressed size, :data:`MAX_COLUMNS` columns (from
the header, the Parquet schema or the JSON keys), :data:`MAX_ROWS` rows and the Parquet file's own
row count and uncompressed size (from its metadata, before reading), the Parquet rows' decoded size
(summed batch by batch while reading, so a dictionary bomb stops at the decompressed-size limit),
every archive entry (see :mod:`kbench_core.bundles`) and :data:`MAX_CELL_CHARS` per cell.


Memory (at most 3x the frame, ``benchmarks/README.md``): a CSV/TSV over 1 MB, uncompressed on disk
or gzipped, is parsed as its bytes come (pyarrow's streaming reader), never held whole beside the
table; label columns are read as dictionaries. A JSON array or JSON Lines file of flat records
over 1 MB is parsed the same way, in batches (:mod:`kbench_core.readers.streamed`). A file the
streaming parser would have to look at more closely (a parse error, odd quotes, UTF-16, nested
or NaN values, ...) is parsed whole, with the same result.

Parsers do not lose data: a quote that runs to the end of a CSV file is an error naming its
line, JSON Lines are split on ``\n`` only, and JSON is parsed strictly
(:func:`kbench_core.native.load_json`).

Data never runs as code: JSON is parsed with :mod:`json`, tables with :mod:`pyarrow`; no
``eval`` and no ``pickle`` anywhere.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from kbench_core import bundles, families, native
from kbench_core.native._advice import advise_columns
from kbench_core.problems import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_DECOMPRESSED,
    MAX_CELL_CHARS,
    MAX_COLUMNS,
    MAX_JSON_DEPTH,
    MAX_LISTED_PROBLEMS,
    MAX_ROWS,
    OnError,
    Problem,
    RunFormatError,
    Source,
)
from kbench_core.problems import fail as _fail
from kbench_core.readers import (
    _clean_name,
    _decode,
    _decode_labels,
    _file_chunks,
    _from_native,
    _gunzip,
    _gunzip_chunks,
    _gunzip_head,
    _gunzip_prefix,
    _Native,
    _open_file,
    _parse_delimited,
    _parse_delimited_stream,
    _parse_json,
    _parse_jsonl,
    _parse_parquet,
    _parse_records_stream,
    _pieces,
    _read_source,
    _sniff_format,
    _split_name,
    _Table,
    _too_many_columns,
    _too_many_rows,
)
from kbench_core.schema import Kind, KindSpec
from kbench_core.text import lookalike_warnings, strip_controls
from kbench_core.validation import _validate

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_DECOMPRESSED",
    "MAX_CELL_CHARS",
    "MAX_COLUMNS",
    "MAX_JSON_DEPTH",
    "MAX_LISTED_PROBLEMS",
    "MAX_ROWS",
    "Problem",
    "Run",
    "RunFormatError",
    "batch_groups",
    "batch_hash",
    "batch_name",
    "combine_runs",
    "detect_kind",
    "load_files",
    "load_run",
]


@dataclass(frozen=True)
class Run:
    """One loaded, validated run.

    ``frame`` holds the canonical columns (categoricals for repeated labels) plus any extra
    columns the file had; ``meta`` records the source file, format, size, content hash and the
    models; ``warnings`` lists what the loader noticed but accepted (skipped rows, BOMs,
    re-encoded text).
    """

    name: str
    kind: Kind
    frame: pd.DataFrame = field(repr=False)
    meta: Mapping[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    @property
    def models(self) -> list[str]:
        return sorted(map(str, self.frame["model"].unique()))

    @property
    def content_hash(self) -> str:
        return str(self.meta.get("sha256", ""))

    def __len__(self) -> int:
        return len(self.frame)


# ---------------------------------------------------------------------------- kind detection


def detect_kind(columns: Sequence[str]) -> Kind | None:
    """The run kind whose signature columns are all present, or None.

    Checked from the most to the least specific signature so that a judged or replication
    file that also happens to have a ``score`` column is not taken for a bias run.
    """
    return families.detect(columns)


def _undetected(filename: str, columns: Sequence[str]) -> RunFormatError:
    advice = advise_columns(columns)
    if advice is not None:
        return _fail(filename, advice)
    names = set(columns)

    def closeness(spec: KindSpec) -> tuple[int, int]:
        return (len(spec.signature & names) + bool(spec.signature_any & names),
                -len(spec.signature_none & names))

    best = max((f.spec for f in families.all_families()), key=closeness)
    needs = sorted(best.signature - names)
    if best.signature_any and not best.signature_any & names:
        needs.append("one of " + "/".join(sorted(best.signature_any)))
    extra = sorted(best.signature_none & names)
    what = (f"which also needs: {', '.join(needs)}" if needs else "")
    if extra:
        what += ("; " if what else "which must not have: ") + (
            f"and must not have {', '.join(extra)}" if needs else ", ".join(extra))
    shown = ", ".join(list(columns)[:12]) + (" ..." if len(columns) > 12 else "")
    return _fail(filename, f"cannot tell the run kind from the columns ({shown}). The closest "
                           f"kind is '{best.kind}' ({best.description}), {what}. Rename "
                           "columns with load_run(..., columns={'their name': 'our name'}) "
                           "or pass kind=")


# ---------------------------------------------------------------------------- entry point


def load_run(
    source: Source,
    *,
    name: str | None = None,
    kind: Kind | None = None,
    on_error: OnError = "raise",
    columns: Mapping[str, str] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_decompressed: int = DEFAULT_MAX_DECOMPRESSED,
    ground_truth: Source | None = None,
    progress: Callable[[float, str], None] | None = None,
) -> Run:
    """Load and validate one run.

    Parameters
    ----------
    source : path or (filename, bytes)
        The file. Its name picks the format (``.csv``, ``.tsv``, ``.json``, ``.jsonl``,
        ``.parquet``, each optionally ``.gz``); without a known suffix the content decides.
        A benchmark's native output is recognised by its content (see
        :mod:`kbench_core.native`): a JSON document, or a folder, ``.zip``, ``.tar`` or
        ``.tar.gz`` holding a tree of output files.
    name : str, optional
        Run name; default the file name without its suffixes.
    kind : {"bias", "replication", "replication_summary", "judged"}, optional
        Skip detection and validate as this kind.
    on_error : {"raise", "skip"}
        ``"raise"`` (default) raises :class:`RunFormatError` on the first invalid file;
        ``"skip"`` drops invalid rows and lists them in ``Run.warnings`` (a file whose every row
        is invalid, or that misses a required column, still raises).
    columns : mapping, optional
        Rename the file's columns to canonical names first: ``{"their name": "our name"}``.
    max_bytes, max_decompressed : int
        Size limits for the file as given and after decompression (200 MB and 1 GB); for a
        folder, ``max_decompressed`` bounds the sum of its files.
    ground_truth : path or (filename, bytes), optional
        A ground-truth file for native formats that keep it apart from the results
        (BlockBench).
    progress : callable, optional
        ``progress(fraction, stage)``, called as each stage of the load starts, for a progress
        bar: ``stage`` is ``"read"`` (0.0), ``"decompress"`` (0.15, gzip only), ``"parse"``
        (0.3), ``"validate"`` (0.75) and finally ``"done"`` (1.0); ``fraction`` is the rough
        share of the work done before that stage and never decreases. A handful of calls per
        file, never one per row. ``"done"`` is not reported when the file is refused
        (:class:`RunFormatError`). An exception raised by the callback (to cancel a load)
        propagates unchanged.

    Returns
    -------
    Run

    Raises
    ------
    RunFormatError
        Naming the file, the 1-based row and the field of each problem (at most 20, then a
        count).

    Examples
    --------
    >>> run = load_run(("tiny.csv", b"model,bias,condition,domain,score\\n"
    ...                              b"m,anchoring_effect,control,social,0\\n"))
    >>> run.kind, len(run), run.models
    ('bias', 1, ['m'])
    """
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    if kind is not None and not families.is_registered(kind):
        raise ValueError(f"kind must be one of {', '.join(families.kinds())}, got {kind!r}")
    if isinstance(source, tuple) and (len(source) != 2 or not isinstance(
            source[1], bytes | bytearray | memoryview)):
        raise TypeError("source must be a path or a (filename, bytes) pair")
    report = _Progress(progress)
    try:
        run = _load(source, name=name, kind=kind, on_error=on_error, columns=columns,
                    max_bytes=max_bytes, max_decompressed=max_decompressed,
                    ground_truth=ground_truth, report=report)
    except RunFormatError:
        raise
    except _CallbackFailed as failed:  # the caller's own exception, e.g. a cancelled upload
        raise failed.error from None
    except MemoryError:
        raise _fail(_source_name(source), "not enough memory to load this file; split it "
                                          "into smaller runs") from None
    except Exception as exc:  # the boundary: nothing but RunFormatError leaves the loader
        raise _fail(_source_name(source), f"cannot read this file ({type(exc).__name__}: "
                                          f"{str(exc)[:200]})") from None
    try:
        report(1.0, "done")
    except _CallbackFailed as failed:
        raise failed.error from None
    return run


class _CallbackFailed(Exception):
    """Carries an exception raised by the caller's progress callback through the loader's
    boundary (which turns every other exception into a RunFormatError)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


class _Progress:
    """The optional progress callback of :func:`load_run`: called at stage starts only, with
    a fraction that never goes back."""

    def __init__(self, callback: Callable[[float, str], None] | None) -> None:
        self.callback = callback
        self.last = 0.0
        self.stages: list[str] = []

    def __call__(self, fraction: float, stage: str) -> None:
        # A stage is reported once: a big CSV that the streaming parser hands back to the
        # whole-text one does not start "parse" twice.
        if self.callback is None or stage in self.stages:
            return
        self.stages.append(stage)
        self.last = max(self.last, fraction)
        try:
            self.callback(self.last, stage)
        except Exception as exc:
            raise _CallbackFailed(exc) from exc


def _source_name(source: Source) -> str:
    if isinstance(source, tuple):
        return _clean_name(str(source[0]))
    return _clean_name(Path(source).name or str(source))


def _load(source: Source, *, name: str | None, kind: Kind | None, on_error: OnError,
          columns: Mapping[str, str] | None, max_bytes: int, max_decompressed: int,
          ground_truth: Source | None, report: _Progress) -> Run:
    report(0.0, "read")
    if name is not None:
        name = _clean_name(str(name))
    options: dict[str, Any] = {}
    if ground_truth is not None:
        options["ground_truth"] = _read_source(ground_truth, max_bytes)
    warnings: list[str] = []
    if not isinstance(source, tuple) and Path(source).is_dir() \
            and not Path(source).is_symlink():
        folder = Path(source)
        report(0.3, "parse")
        read: list[bundles.Members] = []  # hashed as read: skipped files are never opened
        parsed = _parse_bundle(folder.name, "folder", lambda: read.append(bundles.read_folder(
            folder, max_decompressed)) or read[0], options)
        return _finish(parsed, name=name or _clean_name(folder.name), kind=kind,
                       on_error=on_error,
                       columns=columns, warnings=warnings, report=report,
                       meta={"source": folder.name, "format": f"{parsed.format.name} (folder)",
                             "bytes": sum(map(len, read[0].values())),
                             "sha256": _folder_hash(read[0])})
    if not isinstance(source, tuple):
        run = _load_file_streamed(source, name=name, kind=kind, on_error=on_error,
                                  columns=columns, max_bytes=max_bytes, report=report)
        if run is not None:
            return run
    filename, raw = _read_source(source, max_bytes)
    stem, gz_suffix, suffix = _split_name(filename)
    sha256 = hashlib.sha256(raw).hexdigest()
    if not raw:
        raise _fail(filename, "the file is empty")
    compressed = raw[:2] == b"\x1f\x8b"
    if gz_suffix and not compressed:
        raise _fail(filename, "named .gz but is not gzip data")
    meta = {"source": filename, "bytes": len(raw), "sha256": sha256}
    if compressed and bundles.is_archive(_gunzip_head(raw)):
        # A tar.gz is read as a stream: its headers are counted as they come, so 1.6 M
        # folder entries cost 20,000 headers, not the whole decompressed archive in memory.
        report(0.15, "decompress")
        report(0.3, "parse")
        parsed = _parse_bundle(filename, "tar.gz", lambda: bundles.read_archive(
            raw, max_decompressed, gzipped=True), options)
        return _finish(parsed, name=name or stem.removesuffix(".tar"), kind=kind,
                       on_error=on_error, columns=columns, warnings=warnings, report=report,
                       meta={**meta, "format": f"{parsed.format.name} (tar.gz)"})
    if compressed:
        report(0.15, "decompress")
        head = _gunzip_prefix(raw, _STREAM_HEAD)
        parsed = _stream_table(filename, suffix, head, lambda: _gunzip_chunks(
            filename, raw, max_decompressed), lambda: _gunzip(filename, raw, max_decompressed),
            warnings, report)
        if parsed is not None:
            return _finish(parsed, name=name or stem, kind=kind, on_error=on_error,
                           columns=columns, warnings=warnings, report=report,
                           meta={**meta, "format": _sniff_format(filename, suffix, head)
                                 + ".gz"})
    data = _gunzip(filename, raw, max_decompressed) if compressed else raw
    if not data[:4096].strip() and not data.strip():  # the full strip only for blank heads
        raise _fail(filename, "the file is empty" + (" after decompression" * compressed))
    if bundles.is_archive(data):
        kind_name = ("zip" if data[:2] == b"PK" else "tar") + (".gz" if compressed else "")
        report(0.3, "parse")
        parsed = _parse_bundle(filename, kind_name,
                               lambda: bundles.read_archive(data, max_decompressed), options)
        return _finish(parsed, name=name or stem.removesuffix(".tar"), kind=kind,
                       on_error=on_error, columns=columns, warnings=warnings, report=report,
                       meta={**meta, "format": f"{parsed.format.name} ({kind_name})"})
    fmt = _sniff_format(filename, suffix, data)
    report(0.3, "parse")
    try:
        if fmt == "parquet":
            parsed = _parse_parquet(filename, data, max_decompressed)
        elif fmt in ("csv", "tsv"):
            parsed = _parse_delimited(filename, data, "\t" if fmt == "tsv" else ",", warnings)
        elif len(data) >= _STREAM_HEAD and (fast := _parse_records_stream(
                filename, fmt, _pieces(data), warnings, max_decompressed)) is not None:
            parsed = fast  # a big JSON (Lines) file of flat records, parsed in batches
        elif fmt == "json":
            parsed = _parse_json(filename, _decode(filename, data, warnings), options,
                                 raw=data, limit=max_decompressed)
        else:
            parsed = _parse_jsonl(filename, _decode(filename, data, warnings), max_decompressed)
    except RunFormatError:
        raise
    except (ValueError, TypeError, OverflowError, MemoryError, RecursionError,
            pa.ArrowException, UnicodeError) as exc:
        raise _fail(filename, f"cannot read as {fmt.upper()}: {str(exc)[:300]}") from None
    format_name = fmt + (".gz" if compressed else "")
    if isinstance(parsed, _Native):
        format_name = f"{parsed.format.name} ({format_name})"
    return _finish(parsed, name=name or stem, kind=kind, on_error=on_error, columns=columns,
                   warnings=warnings, meta={**meta, "format": format_name}, report=report)


# A text file whose (decompressed) bytes pass this is parsed as they come (CSV/TSV): the
# text is never held whole beside the table (``benchmarks/README.md``: memory <= 3x the frame).
_STREAM_HEAD = 1 << 20


def _stream_table(filename: str, suffix: str, head: bytes,
                  chunks: Callable[[], Iterator[bytes]],
                  reread: Callable[[], bytes | bytearray], warnings: list[str],
                  report: _Progress) -> _Table | None:
    """A big CSV/TSV parsed from a stream of its bytes, or None when the file is small, of
    another format, or needs the whole-text parser (see :func:`_parse_delimited_stream`)."""
    if len(head) < _STREAM_HEAD or not head[:4096].strip() or bundles.is_archive(head):
        return None
    fmt = _sniff_format(filename, suffix, head)
    seen: list[str] = []
    if fmt in ("json", "jsonl"):
        report(0.3, "parse")
        parsed = _parse_records_stream(filename, fmt, chunks(), seen)
        if parsed is not None:
            warnings.extend(seen)
        return parsed
    if fmt not in ("csv", "tsv"):
        return None
    report(0.3, "parse")
    parsed = _parse_delimited_stream(filename, head, chunks(), "\t" if fmt == "tsv" else ",",
                                     seen, reread)
    if parsed is not None:
        warnings.extend(seen)
    return parsed


def _load_file_streamed(source: str | Path, *, name: str | None, kind: Kind | None,
                        on_error: OnError, columns: Mapping[str, str] | None,
                        max_bytes: int, report: _Progress) -> Run | None:
    """A big uncompressed CSV/TSV file parsed as it is read, hashed on the way; None when
    the file is for the whole-bytes path (any other format, gzip, small, or a file to look
    at more closely), which then reads it again."""
    filename, handle = _open_file(source, max_bytes)
    stem, gz_suffix, suffix = _split_name(filename)
    with handle:
        try:
            head = handle.read(_STREAM_HEAD)
        except OSError:
            return None  # the whole-bytes path reports it
        if gz_suffix or head[:2] == b"\x1f\x8b":
            return None
        digest = hashlib.sha256()
        size: list[int] = []

        def chunks() -> Iterator[bytes]:
            for chunk in _file_chunks(filename, handle, head, max_bytes, digest):
                size.append(len(chunk))
                yield chunk

        warnings: list[str] = []
        parsed = _stream_table(filename, suffix, head, chunks,
                               lambda: _read_source(source, max_bytes)[1], warnings, report)
    if parsed is None:
        return None
    meta = {"source": filename, "bytes": sum(size), "sha256": digest.hexdigest(),
            "format": _sniff_format(filename, suffix, head)}
    return _finish(parsed, name=name or stem, kind=kind, on_error=on_error, columns=columns,
                   warnings=warnings, meta=meta, report=report)


def _folder_hash(files: Mapping[str, bytes]) -> str:
    """A content hash of a folder: paths and bytes of the files read (the ones within the
    size limit; hidden and unrelated files are skipped unread), in path order."""
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(path.encode("utf-8", "surrogateescape") + b"\0")
        digest.update(hashlib.sha256(files[path]).digest())
    return digest.hexdigest()


# A file is looked at alone (to see which native format reads it) up to this size: the
# benchmarks' per-model reports are tens of KB; a bigger file is never grouped.
GROUP_PARSE_LIMIT = 16 * 1024**2


def _format_alone(filename: str, data: bytes) -> native.NativeFormat | None:
    """The native format that reads several files as one run (``from_files``) and that
    recognises this JSON file on its own content, or None."""
    if not filename.lower().endswith(".json") or len(data) > GROUP_PARSE_LIMIT:
        return None
    try:
        payload = native.load_json(bytes(data).decode("utf-8-sig"), raw=data)
    except (native.JsonProblem, UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(payload, dict):  # one report per file, as the benchmarks write them
        return None
    for fmt in native.formats():
        if fmt.from_files is None or fmt.matches_json is None or fmt.advice:
            continue
        try:
            if fmt.matches_json(payload):
                return fmt
        except Exception:  # a matcher meeting odd data: not this format
            continue
    return None


def _format_by_content(files: Mapping[str, bytes]) -> native.NativeFormat | None:
    """The multi-file native format of the first member recognised on its own content: a
    folder whose reports were renamed (not ``fingerprint_*.json``) is still a folder of
    reports."""
    for path in sorted(files):
        fmt = _format_alone(path.rsplit("/", 1)[-1], files[path])
        if fmt is not None:
            return fmt
    return None


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


def _parse_bundle(filename: str, what: str, read: Callable[[], dict[str, bytes]],
                  options: Mapping[str, Any]) -> _Native:
    """A folder or archive, converted by the first native format that recognises its files."""
    try:
        files = read()
    except bundles.BundleError as exc:
        raise _fail(filename, f"cannot read the {what}: {exc}") from None
    paths = sorted(files)
    chosen = next((fmt for fmt in native.formats()
                   if fmt.matches_files is not None and fmt.from_files is not None
                   and fmt.matches_files(paths)), None) or _format_by_content(files)
    if chosen is not None:
        return _Native(chosen, _from_native(
            filename, lambda f=chosen: f.from_files(filename, files, options)))
    # a path of a deep archive tree runs to kilobytes: its last 80 characters are enough
    shown = ", ".join(p if len(p) <= 80 else "\u2026" + p[-79:] for p in paths[:5]) + (
        f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    known = ", ".join(sorted({f.name for f in native.formats()
                              if f.matches_files and not f.advice})) or "none"
    raise _fail(filename, f"the {what} holds no benchmark output kbench knows ({shown}); "
                          f"known folder formats: {known}")


def _native_table(filename: str, table: _Table, kind: Kind | None, warnings: list[str],
                  meta: dict[str, Any]) -> _Table:
    """A parsed table reshaped by the first native table format that recognises its columns
    (e.g. HumanStudy-Bench's ``simple_findings.csv``), or the table unchanged."""
    names = [str(c).strip() for c in table.frame.columns]
    decoded = False
    for fmt in native.formats():
        if fmt.matches_table is None or fmt.from_table is None:
            continue
        if kind is not None and kind != fmt.kind:
            continue
        if not fmt.matches_table(names):
            continue
        if not decoded:  # a native converter reads the file's text as it is
            _decode_labels(table)
            decoded = True
        frame = table.frame.set_axis(names, axis=1)
        converted = _from_native(filename, lambda f=fmt, fr=frame: f.from_table(filename, fr,
                                                                                  {}))
        warnings.extend(converted.warnings)
        meta.update(converted.meta)
        meta["format"] = f"{fmt.name} ({meta.get('format', 'table')})"
        return _Table(converted.frame, table.numbers, table.unit, table.nonfinite,
                      table.overflow)
    return table


def _finish(parsed: _Table | _Native, *, name: str, kind: Kind | None, on_error: OnError,
            columns: Mapping[str, str] | None, warnings: list[str],
            meta: dict[str, Any], report: _Progress | None = None) -> Run:
    """Validate a parsed table (canonical or native) and wrap it as a :class:`Run`."""
    filename = str(meta["source"])
    if isinstance(parsed, _Native):
        converted = parsed.converted
        if kind is not None and kind != converted.kind:
            raise _fail(filename, f"this is a {parsed.format.name} file, which holds "
                                  f"{converted.kind} results, not {kind}")
        kind = converted.kind  # type: ignore[assignment]
        warnings.extend(converted.warnings)
        meta.update(converted.meta)
        table = _Table(converted.frame.reset_index(drop=True), np.asarray(converted.numbers),
                       converted.unit)
    else:
        table = _native_table(filename, parsed, kind, warnings, meta)
    frame = table.frame
    frame.columns = [str(c).strip() for c in frame.columns]
    if columns:
        frame = frame.rename(columns=dict(columns))
        if frame.columns.duplicated().any():
            dup = frame.columns[frame.columns.duplicated()][0]
            raise _fail(filename, f"the column mapping makes two columns named {dup!r}",
                        field=dup)
    detected = kind or detect_kind(list(frame.columns))
    if detected is None:
        raise _undetected(filename, list(frame.columns))
    aliases = families.get(detected).aliases
    renames = {c: aliases[c] for c in frame.columns if c in aliases
               and aliases[c] not in frame.columns}
    if renames:
        frame = frame.rename(columns=renames)
    if table.encoded:  # the reader's dictionary columns, under their new names
        mapping = dict(columns or {})
        table.encoded = {renames.get(mapping.get(c, c), mapping.get(c, c))
                         for c in table.encoded}
    table.frame = frame
    label_names = {c.name for c in families.spec(detected).columns if c.type == "category"}
    _decode_labels(table, keep=label_names.__contains__)
    if len(frame.columns) > MAX_COLUMNS:
        raise _too_many_columns(filename, len(frame.columns), "the run")
    if len(frame) > MAX_ROWS:
        raise _too_many_rows(filename, len(frame))
    spec = families.spec(detected)
    if report is not None:
        report(0.75, "validate")
    _without_nul(spec, table, warnings)
    canonical = _validate(filename, table, spec, on_error, warnings)
    warnings.extend(_lookalikes(spec, canonical))
    meta.update(rows=len(canonical), columns=list(canonical.columns))
    return Run(name=run_name(name), kind=detected, frame=canonical, meta=meta,
               warnings=tuple(warnings))


MAX_RUN_NAME = 200


def run_name(name: str) -> str:
    """A run's name as kbench keeps it: control, bidi and zero-width characters removed, white
    space trimmed, at most 200 characters, ``run`` when nothing is left.

    A run's name comes from a stranger's file name and is shown in every table, legend, file
    name and link; the same rule applies when a saved run comes back from a workspace, so every
    saved run reloads under the name it was saved with.

    >>> run_name("  results\\u202e.csv \\x00")
    'results.csv'
    >>> run_name(" ")
    'run'
    """
    cleaned = strip_controls(name).strip()
    return cleaned[:MAX_RUN_NAME].strip() or "run"


def _without_nul(spec: KindSpec, table: _Table, warnings: list[str]) -> None:
    """Label columns of ``table`` with NUL characters removed, and a warning naming the first
    row of each column that had one.

    A NUL ends a string for C-based readers (spreadsheets, LaTeX, file systems), so
    ``evil\x00model`` would show as ``evil`` in one place and as the whole name in another.
    Checked on the distinct values only, so a million rows of a few labels cost one hash pass.
    """
    frame = table.frame
    for col in spec.columns:
        if col.type != "category" or col.name not in frame:
            continue
        series = frame[col.name]
        if isinstance(series.dtype, pd.CategoricalDtype):
            labels = series.cat.categories
            with_nul = [isinstance(v, str) and "\x00" in v for v in labels]
            bad = np.isin(series.cat.codes.to_numpy(), np.flatnonzero(with_nul))
        elif series.dtype != object and not pd.api.types.is_string_dtype(series.dtype):
            continue  # numbers as labels: no NUL to remove
        else:  # text (Arrow-backed: vectorised) or objects, nested values among them
            bad = series.str.contains("\x00", regex=False).fillna(False).to_numpy(dtype=bool)
        if not bad.any():
            continue
        position = int(np.flatnonzero(bad)[0])
        row = table.row_numbers[position] if len(table.row_numbers) > position else position + 1
        count = int(bad.sum())
        rows = "1 row" if count == 1 else f"{count:,} rows"
        warnings.append(f"field {col.name!r}: {rows} had NUL characters (\\x00) in the "
                        f"label, removed (first: {table.unit} {row})")
        cleaned = series.astype(object).map(
            lambda v: v.replace("\x00", "") if isinstance(v, str) else v)
        frame[col.name] = cleaned


def _lookalikes(spec: KindSpec, frame: pd.DataFrame) -> list[str]:
    """Look-alike labels (invisible, bidi, confusable characters) of the label columns, named
    with escapes; the distinct labels only, so a million rows cost nothing."""
    notes: list[str] = []
    for col in spec.columns:
        if col.type != "category" or col.allowed is not None or col.name not in frame:
            continue
        series = frame[col.name]
        labels = (series.cat.categories if isinstance(series.dtype, pd.CategoricalDtype)
                  else series.dropna().unique())
        notes.extend(lookalike_warnings(col.name, labels))
    return notes


def combine_runs(runs: Sequence[Run]) -> pd.DataFrame:
    """Runs of one kind viewed together: one frame with a ``run`` column.

    A model name that occurs in more than one run is told apart as ``model (run)``; names
    unique to one run stay as they are. Label columns stay categorical (ordered ones keep their
    order).
    """
    if not runs:
        raise ValueError("combine_runs needs at least one run")
    kinds = {run.kind for run in runs}
    if len(kinds) > 1:
        raise ValueError(f"runs of different kinds cannot be combined: {', '.join(sorted(kinds))}")
    if len(runs) == 1:
        return runs[0].frame.assign(run=runs[0].name)
    owners: dict[str, set[str]] = {}
    for run in runs:
        for model in run.models:
            owners.setdefault(model, set()).add(run.name)
    parts = []
    for run in runs:
        frame = run.frame.assign(run=run.name)
        clash = {m: f"{m} ({run.name})" for m in run.models if len(owners[m]) > 1}
        if clash:
            frame["model"] = frame["model"].astype(str).replace(clash)
        parts.append(frame)
    combined = pd.concat(parts, ignore_index=True)
    for column in runs[0].frame.columns:
        first = runs[0].frame[column].dtype
        if isinstance(first, pd.CategoricalDtype) and column in combined:
            if first.ordered:
                combined[column] = pd.Categorical(combined[column], categories=first.categories,
                                                  ordered=True)
            elif not isinstance(combined[column].dtype, pd.CategoricalDtype):
                combined[column] = combined[column].astype("category")
    combined["run"] = combined["run"].astype("category")
    return combined

