"""Folders and archives (``.zip``, ``.tar``, ``.tar.gz``) read into memory as ``{path: bytes}``.

Some benchmarks write a tree of small JSON files rather than one table (BlockBench's judge output
has a folder per detector model). :func:`kbench_core.io.load_run` reads such a tree with these
functions and hands it to the native converter that recognises it.

Nothing is extracted to disk, so member names such as ``../../etc/passwd`` cannot escape; they are
only used as labels. Sizes are bounded: the sum of the members' sizes must stay under the
decompressed-size limit (checked from the headers before reading, and again while reading, since
headers can lie), and at most :data:`MAX_MEMBERS` entries of any type (files, folders, links,
devices: each costs a header to parse) are looked at; a zip's entry count is read from its
central directory before :mod:`zipfile` parses a single entry. Two members with one name are an
error (which one is meant?), not a silent "last one wins". A member whose path leaves the
archive (a ``..`` part, an absolute or drive path) is an error naming it: no benchmark writes one,
so it is a crafted archive, and dropping it would silently lose a file. Hidden files, macOS
resource forks (``__MACOSX/``, ``._x``) and unrelated files (not JSON, CSV, TSV, text or
Markdown: images, logs, weights) are skipped before they are read and listed in
:attr:`Members.skipped`, which the native converters turn into a warning of the run.
"""

from __future__ import annotations

import errno
import io
import os
import re
import stat
import struct
import tarfile
import zipfile
import zlib
from pathlib import Path, PurePosixPath

__all__ = ["MAX_MEMBERS", "BundleError", "Members", "is_archive", "read_archive", "read_folder"]

MAX_MEMBERS = 20_000


class BundleError(ValueError):
    """A folder or archive that cannot be read; the message says why."""


class Members(dict[str, bytes]):
    """``{path: bytes}`` of a folder or archive, with the hidden members that were skipped."""

    skipped: list[str]

    def __init__(self) -> None:
        super().__init__()
        self.skipped = []


_DRIVE = re.compile(r"[A-Za-z]:")


def _escapes(path: str) -> bool:
    """Whether a member's path leaves the archive: a ``..`` part, absolute or a drive path
    (backslashes count as separators: a zip written on Windows may use them)."""
    text = path.replace("\\", "/")
    return text.startswith("/") or bool(_DRIVE.match(text)) or ".." in text.split("/")


def _check(path: str) -> None:
    if _escapes(path):
        shown = path.encode("unicode_escape").decode("ascii")[:200]
        raise BundleError(f"member {shown!r} has a path that leaves the archive (a '..' part or "
                          "an absolute path); kbench refuses such an archive rather than drop "
                          "the file. Rename the member")


# What a benchmark's output tree holds: the folder formats read JSON, and recognise their
# CSV, text and Markdown companions by name. Anything else (images, logs, model weights, a
# cache) is unrelated: skipped before it is read, and named in the run's warnings.
_RELATED_SUFFIXES = frozenset({".json", ".jsonl", ".ndjson", ".csv", ".tsv", ".txt", ".md"})


def _skipped(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return (any(p.startswith(".") or p == "__MACOSX" for p in parts)
            or PurePosixPath(path).suffix.lower() not in _RELATED_SUFFIXES)


def _mb(n: int) -> str:
    return f"{n / 1024**2:,.1f} MB"


def _too_many() -> BundleError:
    return BundleError(f"it holds more than {MAX_MEMBERS:,} entries (files, folders and links "
                       f"count alike), over the limit of {MAX_MEMBERS:,} entries")


class _Budget:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self.entries = 0

    def entry(self) -> None:
        """Count one entry of any type, before any work is done for it."""
        self.entries += 1
        if self.entries > MAX_MEMBERS:
            raise _too_many()

    def take(self, size: int) -> None:
        self.used += size
        if self.used > self.limit:
            raise BundleError(f"its files add up to more than {_mb(self.limit)}, over the "
                              "decompressed-size limit")


def _zip_entries(data: bytes) -> int:
    """An upper bound of a zip's entries, from its central directory, before parsing it.

    The end-of-central-directory record (or its zip64 twin) gives where the directory is and
    how many entries it claims; since the count can lie, the entry signatures inside the
    directory are counted too (each entry starts with ``PK\\x01\\x02``; a name holding
    those bytes only makes the bound larger). Written by hand: :mod:`zipfile` reads the whole
    directory in its constructor, which is the cost being bounded.
    """
    tail_start = max(0, len(data) - (1 << 16) - 22)
    end = data.rfind(b"PK\x05\x06", tail_start)
    if end < 0 or end + 22 > len(data):
        return data.count(b"PK\x01\x02")
    claimed, size, offset = struct.unpack("<xxxxxxxxxxHII", data[end:end + 20])[0:3]
    locator = end - 20
    if locator >= 0 and data[locator:locator + 4] == b"PK\x06\x07":
        (record,) = struct.unpack("<Q", data[locator + 8:locator + 16])
        if data[record:record + 4] == b"PK\x06\x06":
            claimed, size, offset = struct.unpack("<QQQ", data[record + 32:record + 56])
    if offset + size > len(data) or size == 0:
        return max(claimed, data.count(b"PK\x01\x02"))
    return max(claimed, data.count(b"PK\x01\x02", offset, offset + size))


def is_archive(data: bytes) -> bool:
    """True for zip or (uncompressed) tar data; gzip is undone before this is asked."""
    return data[:4] == b"PK\x03\x04" or data[257:262] == b"ustar"


def read_archive(data: bytes, limit: int, *, gzipped: bool = False) -> Members:
    """Every regular file of a zip or tar archive as ``{posix path: bytes}``; ``gzipped``: a
    tar.gz, read as a stream (never decompressed whole)."""
    budget = _Budget(limit)
    files = Members()

    def keep(name: str, content: bytes) -> None:
        if name in files:
            raise BundleError(f"{name} appears twice in the archive; which one is meant? "
                              "Remove one")
        files[name] = content

    try:
        if data[:4] == b"PK\x03\x04":
            if _zip_entries(data) > MAX_MEMBERS:
                raise _too_many()
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                for info in archive.infolist():
                    budget.entry()
                    if info.is_dir():
                        continue
                    _check(info.filename)
                    if _skipped(info.filename):
                        files.skipped.append(info.filename)
                        continue
                    budget.take(info.file_size)
                    with archive.open(info) as member:
                        content = member.read(info.file_size + 1)
                    if len(content) > info.file_size:  # a header that understates the size
                        raise BundleError(f"{info.filename} is larger than its header says")
                    keep(info.filename, content)
        else:
            with tarfile.open(fileobj=io.BytesIO(data), mode="r|gz" if gzipped else "r:") \
                    as archive:
                while True:
                    budget.entry()  # before the next header is parsed
                    info = archive.next()
                    if info is None:
                        break
                    archive.members.clear()  # tarfile keeps every header otherwise
                    # Counted even when skipped: a stream must inflate a member to pass it.
                    budget.take(info.size)
                    if not info.isfile():
                        continue
                    _check(info.name)
                    if _skipped(info.name):
                        files.skipped.append(info.name)
                        continue
                    member = archive.extractfile(info)
                    if member is not None:
                        keep(info.name, member.read())
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError, struct.error,
            ValueError, UnicodeError, zlib.error) as exc:
        if isinstance(exc, BundleError):
            raise
        raise BundleError(f"corrupt archive ({str(exc)[:200]})") from None
    except RuntimeError as exc:  # zipfile: encrypted members
        raise BundleError(f"cannot read the archive ({exc})") from None
    if not files:
        raise BundleError("the archive holds no files")
    return files


def _open_regular(path: Path) -> io.BufferedReader | None:
    """``path`` opened for reading if it is a regular file, else None: opened without
    following a link and without blocking, and checked on the open descriptor, so a FIFO or
    a device put in its place after the folder was listed is never read (a FIFO would block
    the read for ever, ``/dev/zero`` never end)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOENT):  # now a link, or gone: not read
            return None
        raise  # unreadable: as a read of it would have failed
    handle = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        handle.close()
        return None
    return handle


def read_folder(folder: Path, limit: int) -> Members:
    """Every regular file under ``folder`` (symbolic links not followed) as ``{path: bytes}``."""
    budget = _Budget(limit)
    found: list[Path] = []
    # os.walk is lazy: the entry limit stops a folder of a million entries early.
    for root, dirs, names in os.walk(folder, followlinks=False):
        for name in dirs + names:
            budget.entry()
            found.append(Path(root) / name)
    files = Members()
    for path in sorted(found):
        relative = path.relative_to(folder).as_posix()
        if path.is_symlink() or not path.is_file():
            continue  # is_file: regular files only (no FIFOs or devices)
        if _skipped(relative):
            files.skipped.append(relative)
            continue
        handle = _open_regular(path)
        if handle is None:  # swapped for a link, a FIFO or a device since it was listed
            continue
        with handle:  # a file that grew since its size was taken counts as it is read
            size = os.fstat(handle.fileno()).st_size
            budget.take(size)
            content = handle.read(budget.limit - budget.used + size + 1)
        budget.take(len(content) - size)
        files[relative] = content
    if not files:
        raise BundleError("the folder holds no files")
    return files
