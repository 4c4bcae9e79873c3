"""The TLS context of the HTTPS listener, with the serving key on disk only
while ``ssl`` loads it.

Python's ``ssl`` loads a certificate chain from files only, so the freshly
issued serving certificate and key are written (0600) into a private
temporary directory named ``localkube-serving-<pid>-*`` and the directory is
removed as soon as the context holds them. A process killed in that moment
leaves the directory behind; every start removes such leftovers: directories
with that prefix, owned by this user, whose pid no longer runs. Any other
name, owner or a live pid (another server, or this process's other servers)
is left alone. A serving certificate given as files (``--tls-cert-file``) is
loaded from them: nothing is written then.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import ssl
import stat
import tempfile
from pathlib import Path

from localkube.given_pki import ServingCertificate
from localkube.pki import CertificateAuthority, cert_pem
from localkube.private_files import private_temporary_directory, write_private

PREFIX = "localkube-serving-"


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


def remove_stale(parent: Path) -> list[Path]:
    """Remove serving-key directories in ``parent`` left by crashed servers; the ones removed."""
    removed = []
    with contextlib.suppress(FileNotFoundError), os.scandir(parent) as entries:
        for entry in entries:
            if not entry.name.startswith(PREFIX):
                continue
            pid = entry.name[len(PREFIX) :].split("-", 1)[0]
            if not pid.isdigit():
                continue
            info = entry.stat(follow_symlinks=False)
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or _running(int(pid)):
                continue
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
    return removed


def server_context(
    ca: CertificateAuthority,
    hosts: list[str],
    *,
    serving: ServingCertificate | None = None,
    client_ca_pem: bytes | None = None,
) -> ssl.SSLContext:
    """A TLS 1.2+ server context with a new serving certificate for ``hosts`` (or the given
    ``serving`` one, loaded from its own files), client certificates optional and verified
    against ``client_ca_pem`` (default: ``ca``)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if serving is not None:
        context.load_cert_chain(serving.cert_file, serving.key_file)
    else:
        _load_issued(context, ca, hosts)
    context.load_verify_locations(cadata=(client_ca_pem or cert_pem(ca.cert)).decode())
    context.verify_mode = ssl.CERT_OPTIONAL
    return context


def _load_issued(context: ssl.SSLContext, ca: CertificateAuthority, hosts: list[str]) -> None:
    parent = Path(tempfile.gettempdir())
    remove_stale(parent)
    cert, key = ca.issue_server(hosts)
    directory = private_temporary_directory(parent, f"{PREFIX}{os.getpid()}-")
    try:
        write_private(directory / "tls.crt", cert, sync=False)
        write_private(directory / "tls.key", key, sync=False)
        context.load_cert_chain(directory / "tls.crt", directory / "tls.key")
    finally:
        shutil.rmtree(directory, ignore_errors=True)
