"""Folders and archives (``.zip``, ``.tar``, ``.tar.gz``) read into memory as ``{path: bytes}``.

Some benchmarks write a tree of small JSON files rather than one table (BlockBench's judge output
has a folder per detector model). :func:`kbench_core.io.load_run` reads such a tree with these
functions and hands it to the native converter that recognises it.

Nothing is extracted to disk, so member names such as ``../../etc/passwd`` cannot escape; they are
only used as labels. Sizes are bounded: the sum of the members' sizes must stay under the
decompressed-size limit (checked from the headers before reading, and again while reading, since
headers can lie), and at most :data:`MAX_MEMBERS` files are read. Hidden files and macOS resource
forks (``__MACOSX/``, ``._x``) are skipped.
"""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path, PurePosixPath

__all__ = ["MAX_MEMBERS", "BundleError", "is_archive", "read_archive", "read_folder"]

MAX_MEMBERS = 20_000


class BundleError(ValueError):
    """A folder or archive that cannot be read; the message says why."""


def _skipped(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return any(p.startswith(".") or p == "__MACOSX" for p in parts)


def _mb(n: int) -> str:
    return f"{n / 1024**2:,.1f} MB"


class _Budget:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self.members = 0

    def take(self, size: int) -> None:
        self.used += size
        self.members += 1
        if self.used > self.limit:
            raise BundleError(f"its files add up to more than {_mb(self.limit)}, over the "
                              "decompressed-size limit")
        if self.members > MAX_MEMBERS:
            raise BundleError(f"it holds more than {MAX_MEMBERS:,} files")


def is_archive(data: bytes) -> bool:
    """True for zip or (uncompressed) tar data; gzip is undone before this is asked."""
    return data[:4] == b"PK\x03\x04" or data[257:262] == b"ustar"


def read_archive(data: bytes, limit: int) -> dict[str, bytes]:
    """Every regular file of a zip or tar archive as ``{posix path: bytes}``."""
    budget = _Budget(limit)
    files: dict[str, bytes] = {}
    try:
        if data[:4] == b"PK\x03\x04":
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                for info in archive.infolist():
                    if info.is_dir() or _skipped(info.filename):
                        continue
                    budget.take(info.file_size)
                    with archive.open(info) as member:
                        content = member.read(info.file_size + 1)
                    if len(content) > info.file_size:  # a header that understates the size
                        raise BundleError(f"{info.filename} is larger than its header says")
                    files[info.filename] = content
        else:
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
                for info in archive:
                    if not info.isfile() or _skipped(info.name):
                        continue
                    budget.take(info.size)
                    member = archive.extractfile(info)
                    if member is not None:
                        files[info.name] = member.read()
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as exc:
        raise BundleError(f"corrupt archive ({exc})") from None
    except RuntimeError as exc:  # zipfile: encrypted members
        raise BundleError(f"cannot read the archive ({exc})") from None
    if not files:
        raise BundleError("the archive holds no files")
    return files


def read_folder(folder: Path, limit: int) -> dict[str, bytes]:
    """Every regular file under ``folder`` (symbolic links not followed) as ``{path: bytes}``."""
    budget = _Budget(limit)
    files: dict[str, bytes] = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if path.is_symlink() or not path.is_file() or _skipped(relative):
            continue
        budget.take(path.stat().st_size)
        files[relative] = path.read_bytes()
    if not files:
        raise BundleError("the folder holds no files")
    return files
