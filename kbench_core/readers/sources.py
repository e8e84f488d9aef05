"""Bytes in: paths and uploads read with their size limits (regular files only), gzip streams
unpacked within the decompressed-size limit, format sniffing and text decoding."""

from __future__ import annotations

import os
import re
import stat
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from kbench_core.problems import (
    Format,
    RunFormatError,
    Source,
)
from kbench_core.problems import fail as _fail
from kbench_core.readers._common import _SUFFIX_FORMATS

# ---------------------------------------------------------------------------- reading bytes


_SURROGATES = re.compile("[\ud800-\udfff]")


def _clean_name(name: str) -> str:
    """A file name as text: undecodable bytes (surrogate escapes of a command-line path) as
    U+FFFD, so the name can be shown, hashed and written anywhere."""
    return _SURROGATES.sub("\ufffd", name)


def _read_source(source: Source, max_bytes: int) -> tuple[str, bytes]:
    if isinstance(source, tuple):
        if len(source) != 2 or not isinstance(source[1], bytes | bytearray | memoryview):
            raise TypeError("source must be a path or a (filename, bytes) pair")
        filename, data = _clean_name(str(source[0])), bytes(source[1])
        if len(data) > max_bytes:
            raise _size_error(filename, len(data), max_bytes)
        return filename, data
    filename, handle = _open_file(source, max_bytes)
    with handle:
        try:
            data = handle.read(max_bytes + 1)
        except OSError as exc:
            raise _fail(filename, f"cannot read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:  # grew while being read
        raise _size_error(filename, len(data), max_bytes)
    return filename, data


def _open_file(source: str | Path, max_bytes: int) -> tuple[str, BinaryIO]:
    """(file name, open binary handle) of a regular file within ``max_bytes``."""
    path = Path(source)
    filename = _clean_name(path.name or str(path))
    try:
        # Opened without blocking and checked on the open descriptor: a FIFO or a device
        # (/dev/zero) is refused before a single read, and cannot be swapped in afterwards.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise _fail(filename, f"no such file: {_clean_name(str(path))}") from None
    except IsADirectoryError:
        raise _fail(filename, "is a folder, not a file") from None
    except PermissionError:
        raise _fail(filename, "cannot read: permission denied") from None
    except OSError as exc:
        raise _fail(filename, f"cannot open: {exc.strerror or exc}") from None
    try:
        # checked before it becomes a file object (which refuses a folder with a bare
        # IsADirectoryError: a link to / named like a run)
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise _fail(filename, "is a folder, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise _fail(filename, "not a regular file (a device, FIFO or socket); give the "
                                  "path of a saved file")
        if info.st_size > max_bytes:
            raise _size_error(filename, info.st_size, max_bytes)
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    return filename, handle


def open_regular(path: str | Path) -> tuple[str, BinaryIO]:
    """(file name, open binary handle) of a regular file, whatever its size: opened without
    blocking and checked on the open descriptor (:func:`_open_file`), so a FIFO, a device
    (``/dev/zero``), a folder or a link to one is refused, naming the entry, before a byte is
    read, and cannot be swapped in between the check and the read (the engines read the file
    through this descriptor: :mod:`kbench_core.engines.source`)."""
    return _open_file(path, sys.maxsize)


def read_regular(path: str | Path) -> bytes:
    """The bytes of a regular file (:func:`open_regular`), read from the descriptor that was
    checked; RunFormatError naming the entry when it is not one or cannot be read."""
    filename, handle = open_regular(path)
    with handle:
        try:
            return handle.read()
        except OSError as exc:
            raise _fail(filename, f"cannot read: {exc.strerror or exc}") from None


def _file_chunks(filename: str, handle: BinaryIO, head: bytes, max_bytes: int,
                 digest: Any) -> Iterator[bytes]:
    """The bytes of an open file from where ``head`` ends, in 1 MB pieces, hashed into
    ``digest`` (``head`` first) and held to ``max_bytes`` (a file that grows while read)."""
    digest.update(head)
    size = len(head)
    yield head
    while True:
        try:
            chunk = handle.read(_CHUNK)
        except OSError as exc:
            raise _fail(filename, f"cannot read: {exc.strerror or exc}") from None
        if not chunk:
            return
        size += len(chunk)
        if size > max_bytes:
            raise _size_error(filename, size, max_bytes)
        digest.update(chunk)
        yield chunk


def _mb(n: int) -> str:
    return f"{n / 1024**2:,.1f} MB"


def _size_error(filename: str, size: int, limit: int) -> RunFormatError:
    return _fail(filename, f"file is {_mb(size)}, over the {_mb(limit)} limit; split the run "
                           "into smaller files or raise the limit (max_bytes / "
                           "server.maxUploadSize)")


_CHUNK = 1 << 20


def _gunzip(filename: str, data: bytes, limit: int) -> bytearray:
    """Decompress with a hard output limit, so a gzip bomb costs at most ``limit`` bytes.

    Concatenated members are read on; zero bytes after the last member (tape and disk images
    pad that way) are ignored, as :mod:`gzip` does. The result is the bytearray that was
    filled, not a copy.
    """
    out = bytearray()
    for block in _gunzip_chunks(filename, data, limit):
        out += block
    return out


def _gunzip_chunks(filename: str, data: bytes, limit: int) -> Iterator[bytes]:
    """The decompressed bytes of :func:`_gunzip`, 1 MB at a time, with the same limit and
    checks (a reader can parse them as they come, never holding the whole file)."""
    decomp = zlib.decompressobj(16 + zlib.MAX_WBITS)
    chunk = _CHUNK
    pos = 0
    total = 0
    try:
        while pos < len(data) or decomp.unconsumed_tail:
            if decomp.unconsumed_tail:
                block = decomp.decompress(decomp.unconsumed_tail, chunk)
            else:
                block = decomp.decompress(data[pos:pos + chunk], chunk)
                pos += chunk
            total += len(block)
            if total > limit:
                raise _fail(filename, f"decompresses to more than {_mb(limit)}, over the "
                                      "decompressed-size limit (a gzip bomb, or a run too big "
                                      "to load at once)")
            if block:
                yield block
            if decomp.eof:
                # Concatenated gzip members are valid gzip (BGZF files are thousands of them):
                # keep reading from where this member ended, without copying the rest.
                pos = min(pos, len(data)) - len(decomp.unused_data)
                if data[pos:pos + 2] != b"\x1f\x8b":
                    if data.count(0, pos) == len(data) - pos:
                        break  # nothing, or zero padding, after the last member
                    raise _fail(filename, "corrupt gzip data: bytes after the compressed "
                                          "stream are neither a gzip member nor padding")
                decomp = zlib.decompressobj(16 + zlib.MAX_WBITS)
    except zlib.error as exc:
        raise _fail(filename, f"corrupt gzip data ({exc})") from None
    if not decomp.eof:
        raise _fail(filename, "truncated gzip file: the compressed stream ends early")


def _gunzip_prefix(data: bytes, size: int) -> bytes:
    """The first ``size`` decompressed bytes of gzip ``data`` (fewer for a shorter or broken
    stream: the full decompression then says what is wrong)."""
    try:
        decomp = zlib.decompressobj(16 + zlib.MAX_WBITS)
        out = bytearray()
        pos = 0
        while len(out) < size and pos < len(data) and not decomp.eof:
            out += decomp.decompress(data[pos:pos + _CHUNK], size - len(out))
            pos += _CHUNK
            while decomp.unconsumed_tail and len(out) < size:
                out += decomp.decompress(decomp.unconsumed_tail, size - len(out))
        return bytes(out)
    except zlib.error:
        return b""


def _gunzip_head(data: bytes, size: int = 512) -> bytes:
    """The first ``size`` decompressed bytes (enough to tell a tar archive), or b""."""
    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data[:1 << 16], size)
    except zlib.error:
        return b""


def _split_name(filename: str) -> tuple[str, bool, str]:
    """(stem, gzipped, suffix) of a file name; ``runs.csv.gz`` → ("runs", True, ".csv")."""
    name = filename.rsplit("/", 1)[-1]
    gz = name.lower().endswith(".gz")
    if gz:
        name = name[:-3]
    stem, dot, suffix = name.rpartition(".")
    if not dot:
        return name, gz, ""
    return stem, gz, "." + suffix.lower()


def _sniff_format(filename: str, suffix: str, data: bytes) -> Format:
    if data[:4] == b"PAR1":
        return "parquet"
    if suffix in _SUFFIX_FORMATS and _SUFFIX_FORMATS[suffix] != "parquet":
        fmt = _SUFFIX_FORMATS[suffix]
        if fmt == "json" and _looks_like_jsonl(data):
            return "jsonl"
        return fmt
    if suffix in (".parquet", ".pq"):
        raise _fail(filename, "not a Parquet file (no PAR1 magic bytes)")
    head = data[:8192].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head[:1] in (b"[", b"{"):
        return "jsonl" if _looks_like_jsonl(data) else "json"
    first_line = head.split(b"\n", 1)[0]
    return "tsv" if first_line.count(b"\t") > first_line.count(b",") else "csv"


def _looks_like_jsonl(data: bytes) -> bool:
    lines = [ln.strip() for ln in data[:65536].splitlines() if ln.strip()]
    return len(lines) > 1 and all(ln[:1] == b"{" and ln[-1:] == b"}" for ln in lines[:-1])


def _decode(filename: str, data: bytes, warnings: list[str]) -> str:
    """Text of a file: UTF-8 (BOM stripped) or UTF-16 with a BOM; anything else refused."""
    if data.startswith(b"\xef\xbb\xbf"):
        warnings.append("UTF-8 byte-order mark removed")
        data = data[3:]
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise _fail(filename, f"starts with a UTF-16 byte-order mark but is not valid "
                                  f"UTF-16 ({exc.reason}); save it as UTF-8") from None
        warnings.append("decoded from UTF-16")
        return text
    if b"\x00" in data[:8192]:
        raise _fail(filename, "binary data, not a text table: expected CSV, TSV, JSON, "
                              "JSON Lines or Parquet")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise _fail(filename, f"not UTF-8: byte 0x{data[exc.start]:02x} cannot be decoded; "
                              "save the file as UTF-8", row=line, unit="line") from None
