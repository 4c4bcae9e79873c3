"""Files only the owner may read: every directory localkube creates is 0700 and
every file 0600, with that mode from the moment it exists.

A file is created with ``O_CREAT | O_EXCL`` and mode 0600 under a temporary
name, set to exactly 0600 before any byte is written (a umask can only narrow
the creation mode; ``fchmod`` makes it exact), filled, fsynced and renamed
over its final name, and the directory is fsynced: a reader sees the old file
or the complete new one, never a wider mode or a torn write. Directories are
made 0700 and existing ones narrowed to 0700 (an existing directory of another
user is refused: its owner could swap our files).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path

DIRECTORY_MODE = 0o700
FILE_MODE = 0o600
TEMPORARY_SUFFIX = ".tmp"


def private_directory(path: Path, *, narrow_existing: bool = True) -> Path:
    """Create ``path`` (and missing parents) as 0700; narrow an existing one of ours to 0700
    (unless ``narrow_existing`` is false: the parent of an output file may be the user's own)."""
    missing: list[Path] = []
    current = path
    while not current.exists():
        missing.append(current)
        current = current.parent
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(directory, DIRECTORY_MODE)
        os.chmod(directory, DIRECTORY_MODE)  # empty and at most 0700 so far: the umask only narrows
    info = os.stat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise NotADirectoryError(f"{path} is not a directory")
    if not narrow_existing and not missing:
        return path
    if info.st_uid != os.getuid():
        raise PermissionError(f"{path} belongs to another user")
    if stat.S_IMODE(info.st_mode) != DIRECTORY_MODE:
        os.chmod(path, DIRECTORY_MODE)
    return path


def fsync_directory(path: Path) -> None:
    """Make renames and new names in ``path`` durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def create_private(path: Path) -> int:
    """A new file opened for writing, mode exactly 0600; fails if ``path`` exists."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def open_private_append(path: Path) -> int:
    """A file descriptor appending to ``path``, created 0600 if missing (an existing one is narrowed)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), FILE_MODE)
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) != FILE_MODE:
            os.fchmod(fd, FILE_MODE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_private(path: Path, data: bytes, *, sync: bool = True) -> Path:
    """Replace ``path`` atomically with ``data`` in a 0600 file (fsynced, directory too,
    unless ``sync`` is false: a file that must not outlive a crash anyway)."""
    return write_private_chunks(path, (data,), sync=sync)


def write_private_chunks(path: Path, chunks: Iterable[bytes], *, sync: bool = True) -> Path:
    """:func:`write_private` of the concatenated ``chunks``, each written as it is produced
    (a large file is never held whole in memory)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}{TEMPORARY_SUFFIX}")
    tmp.unlink(missing_ok=True)  # left by a crash of this very pid number
    fd = create_private(tmp)
    try:
        for data in chunks:
            write_all(fd, data)
        if sync:
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    os.replace(tmp, path)
    if sync:
        fsync_directory(path.parent)
    return path


def private_temporary_directory(parent: Path, prefix: str) -> Path:
    """A new, empty, exactly 0700 directory ``parent/prefix*``."""
    directory = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    os.chmod(directory, DIRECTORY_MODE)  # mkdtemp's 0700 less the umask; still empty here
    return directory


def remove_temporary_files(directory: Path) -> None:
    """Remove what :func:`write_private` left in ``directory`` when a process died mid-write."""
    for path in directory.glob(f".*{TEMPORARY_SUFFIX}"):
        if path.is_file() and not path.is_symlink():
            path.unlink(missing_ok=True)


def narrow(path: Path) -> None:
    """Set an existing file of ours (written by an older version, perhaps) to 0600."""
    info = os.lstat(path)
    if stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) != FILE_MODE:
        os.chmod(path, FILE_MODE)
