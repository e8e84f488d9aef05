"""Loading one run from a file, folder, archive or bytes (:func:`load_run`), large text files read
in batches as they come."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa

from kbench_core import bundles, families, native
from kbench_core.problems import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_DECOMPRESSED,
    OnError,
    RunFormatError,
    Source,
)
from kbench_core.problems import fail as _fail
from kbench_core.readers import (
    _clean_name,
    _decode,
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
)
from kbench_core.schema import Kind

from .finish import _finish
from .run import Run, _CallbackFailed, _Progress, _source_name

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
    kind : str, optional
        Skip detection and validate as this kind (any registered kind,
        :func:`kbench_core.families.kinds`).
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
        # the folder's name as text (a non-UTF-8 name's bytes as U+FFFD), as a file's is:
        # it is printed, and written into reports and provenance
        label = _clean_name(folder.name)
        report(0.3, "parse")
        read: list[bundles.Members] = []  # hashed as read: skipped files are never opened
        parsed = _parse_bundle(label, "folder", lambda: read.append(bundles.read_folder(
            folder, max_decompressed)) or read[0], options)
        return _finish(parsed, name=name or label, kind=kind,
                       on_error=on_error,
                       columns=columns, warnings=warnings, report=report,
                       meta={"source": label, "format": f"{parsed.format.name} (folder)",
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
