"""Files only the owner may read, for what the sandbox and the tools write
(kubeconfigs with client keys, process records, logs): directories are
created 0700 and files 0600, with that mode from the moment they exist.

A file is created with ``O_CREAT | O_EXCL`` and mode 0600 under a temporary
name, set to exactly 0600 before any byte is written (a umask only narrows the
creation mode), filled, fsynced and renamed over its final name: a reader sees
the old file or the complete new one, never a wider mode. localkube has its
own copy of these few lines (it imports nothing of ours).
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

DIRECTORY_MODE = 0o700
FILE_MODE = 0o600
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def private_directory(path: Path) -> Path:
    """Create ``path`` and its missing parents as 0700 (an existing directory is left as it is)."""
    missing: list[Path] = []
    current = path
    while not current.exists():
        missing.append(current)
        current = current.parent
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(directory, DIRECTORY_MODE)
        os.chmod(directory, DIRECTORY_MODE)  # still empty; the umask can only have narrowed it
    return path


def write_private(path: Path, data: bytes) -> Path:
    """Replace ``path`` atomically with ``data`` in a 0600 file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)  # left by a crash of a process with this pid
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    os.replace(tmp, path)
    return path


def open_private_append(path: Path) -> int:
    """A descriptor appending to ``path``, created 0600 if missing (an existing wider file is narrowed)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _CLOEXEC, FILE_MODE)
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) != FILE_MODE:
            os.fchmod(fd, FILE_MODE)
    except BaseException:
        os.close(fd)
        raise
    return fd
