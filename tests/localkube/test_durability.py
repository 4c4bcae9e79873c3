"""State files are private and durable: modes under any umask, fsync before
the answer (one for many writes), a journal bounded while running, and no
serving key left behind by a killed server."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import re
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from localkube.journal import Journal
from localkube.process import LocalKubeProcess
from localkube.server import ServerConfig
from tests.servers import Kubectl, Raw, ServerThread

ROOT = Path(__file__).resolve().parents[2]
LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"


def _modes(top: Path) -> dict[str, int]:
    """Mode of ``top`` and of everything below it, by relative path."""
    modes = {".": stat.S_IMODE(top.stat().st_mode)}
    for path in top.rglob("*"):
        modes[str(path.relative_to(top))] = stat.S_IMODE(path.lstat().st_mode)
    return modes


def _assert_private(top: Path) -> None:
    for name, mode in _modes(top).items():
        path = top / name
        wanted = 0o700 if path.is_dir() else 0o600
        assert mode == wanted, f"{path} is {oct(mode)}, not {oct(wanted)}"


@pytest.fixture
def open_umask() -> Iterator[None]:
    """Every file created in the test would be world-writable by default."""
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


def test_every_file_and_directory_is_private_even_with_umask_000(tmp_path: Path, open_umask: None) -> None:
    data = tmp_path / "deep" / "er" / "data"
    kubeconfig = tmp_path / "out" / "sub" / "admin.kubeconfig"
    (tmp_path / "tmp").mkdir(mode=0o700)
    server = LocalKubeProcess(
        kubeconfig,
        data_dir=data,
        log=tmp_path / "logs" / "localkube.log",
        env={**os.environ, "TMPDIR": str(tmp_path / "tmp")},
    )
    (tmp_path / "logs").mkdir(mode=0o755)
    server.start()
    try:
        kube = Kubectl(kubeconfig, tmp_path / "cache")
        kube("create", "namespace", "private")
        kube("create", "secret", "generic", "s", "-n", "private", "--from-literal=k=v")
        _assert_private(tmp_path / "deep")
        _assert_private(tmp_path / "out")
        assert stat.S_IMODE(kubeconfig.stat().st_mode) == 0o600
        assert stat.S_IMODE((tmp_path / "logs" / "localkube.log").stat().st_mode) == 0o600
        assert stat.S_IMODE((tmp_path / "logs").stat().st_mode) == 0o755, "an existing directory is left alone"
        assert {p.name for p in data.iterdir()} == {"ca.crt", "ca.key", "sa.key", "state"}
    finally:
        server.stop()
    again = LocalKubeProcess(tmp_path / "again.kubeconfig", data_dir=data)
    with again:
        _assert_private(tmp_path / "deep")


def test_an_existing_data_directory_is_narrowed(tmp_path: Path, open_umask: None) -> None:
    data = tmp_path / "data"
    with LocalKubeProcess(tmp_path / "admin.kubeconfig", data_dir=data):
        pass
    # as an older version left it, and a crash during a snapshot write
    for path, mode in ((data, 0o777), (data / "state", 0o755), (data / "ca.crt", 0o644)):
        os.chmod(path, mode)
    leftover = data / "state" / ".snapshot.json.4242.1.tmp"
    leftover.write_bytes(b'{"rv": 1, "obj')
    with LocalKubeProcess(tmp_path / "again.kubeconfig", data_dir=data):
        _assert_private(data)
        assert not leftover.exists()


# files that hold keys, tokens or objects must be written by the private-file helpers only
WRITERS = re.compile(
    r"\.write_(text|bytes)\(|\.mkdir\(|\.chmod\(|\bopen\([^)]*[\"'][wax]b?\+?[\"']|mkstemp|NamedTemporaryFile"
)


@pytest.mark.parametrize("package", ["localkube", "karmada/sandbox"])
def test_no_file_is_written_outside_the_private_file_helpers(package: str) -> None:
    offending = []
    for path in sorted((ROOT / package).rglob("*.py")):
        if path.name == "private_files.py":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if WRITERS.search(line):
                offending.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offending == []


def test_many_writes_share_one_fsync_and_each_answer_waits_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []  # journal size at each fsync of the journal
    real_fsync = os.fsync
    journal_file = tmp_path / "state" / "journal.jsonl"

    def fsync(fd: int) -> None:
        real_fsync(fd)
        if journal_file.exists() and os.fstat(fd).st_ino == journal_file.stat().st_ino:
            synced.append(os.fstat(fd).st_size)

    monkeypatch.setattr(os, "fsync", fsync)

    async def scenario() -> None:
        journal = Journal(tmp_path / "state")
        journal.compact(0, {})
        synced.clear()
        for rv in range(1, 51):
            journal.append("put", "/configmaps", ("default", f"c{rv}"), rv, {"metadata": {"name": f"c{rv}"}})
        await journal.durable()
        assert synced == [journal_file.stat().st_size], "one fsync for the 50 writes of one loop iteration"
        await journal.durable()
        assert len(synced) == 1, "nothing new: no fsync"
        journal.append("delete", "/configmaps", ("default", "c1"), 51, None)
        await journal.durable()
        assert synced[-1] == journal_file.stat().st_size
        journal.close()

    asyncio.run(scenario())

    thread = ServerThread(ServerConfig(data_dir=tmp_path / "server")).start()
    journal_file = tmp_path / "server" / "state" / "journal.jsonl"
    try:
        raw = Raw(thread, thread.kubeconfig(tmp_path))

        async def writes() -> None:
            for index in range(5):
                synced.clear()
                status, _, _ = await raw.request("POST", LEASES, {"metadata": {"name": f"l{index}"}})
                assert status == 201
                written = journal_file.stat().st_size
                assert synced and max(synced) >= written, "the answer came after the fsync of its write"
            answers = await asyncio.gather(
                *(raw.request("POST", LEASES, {"metadata": {"name": f"m{index}"}}) for index in range(40))
            )
            assert {status for status, _, _ in answers} == {201}

        synced.clear()
        asyncio.run(writes())
    finally:
        thread.stop()


def _lease_patch(holder: str) -> dict[str, Any]:
    return {"spec": {"holderIdentity": holder, "renewTime": "2025-01-02T03:04:05.000000Z"}}


def test_the_journal_stays_bounded_while_leases_renew_and_a_restart_restores_the_last_state(tmp_path: Path) -> None:
    data = tmp_path / "data"
    compact = 32 * 1024
    thread = ServerThread(ServerConfig(data_dir=data, journal_compact_bytes=compact)).start()
    journal = thread.server.store.journal
    assert journal is not None
    at_start = journal.compactions
    journal_file = data / "state" / "journal.jsonl"
    sizes: list[int] = []
    try:
        raw = Raw(thread, thread.kubeconfig(tmp_path))

        async def renew() -> None:
            for name in ("a", "b", "c", "d"):
                await raw.request("POST", LEASES, {"metadata": {"name": name}, "spec": {"holderIdentity": "x"}})
            for round_ in range(150):
                answers = await asyncio.gather(
                    *(
                        raw.request(
                            "PATCH",
                            f"{LEASES}/{name}",
                            _lease_patch(f"{name}-{round_}"),
                            content_type="application/merge-patch+json",
                        )
                        for name in ("a", "b", "c", "d")
                    )
                )
                assert {status for status, _, _ in answers} == {200}
                sizes.append(journal_file.stat().st_size)

        asyncio.run(renew())
        snapshot = (data / "state" / "snapshot.json").stat().st_size
        bound = max(compact, 2 * snapshot) + 8 * 1024  # plus one round of four renewals
        assert journal.compactions - at_start >= 3, "compacted while running"
        assert max(sizes) <= bound, (max(sizes), bound)
    finally:
        thread.stop()
    again = ServerThread(ServerConfig(data_dir=data)).start()
    try:
        for name in ("a", "b", "c", "d"):
            lease = again.server.store.get("coordination.k8s.io/leases", "default", name)
            assert lease is not None and lease["spec"]["holderIdentity"] == f"{name}-149"
    finally:
        again.stop()


def test_a_write_acknowledged_just_before_sigkill_survives(tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = LocalKubeProcess(tmp_path / "admin.kubeconfig", data_dir=data, log=tmp_path / "localkube.log")
    server.start()
    try:
        kube = Kubectl(server.kubeconfig, tmp_path / "cache")
        created = json.loads(kube("create", "configmap", "last-word", "--from-literal=k=v", "-o", "json").stdout)
    finally:
        server.kill()  # at once: no shutdown, no final sync
    with LocalKubeProcess(tmp_path / "again.kubeconfig", data_dir=data) as again:
        kube = Kubectl(again.kubeconfig, tmp_path / "cache2")
        restored = json.loads(kube("get", "configmap", "last-word", "-o", "json").stdout)
        assert restored["metadata"]["uid"] == created["metadata"]["uid"]
        assert restored["data"] == {"k": "v"}


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_no_serving_key_outlives_a_killed_server_and_leftovers_are_removed(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir(mode=0o700)
    stale = tmp / f"localkube-serving-{_dead_pid()}-crashed"
    live = tmp / f"localkube-serving-{os.getpid()}-running"
    other = tmp / "localkube-something-else"
    for directory in (stale, live, other):
        directory.mkdir(mode=0o700)
        (directory / "tls.key").write_bytes(b"key")
    env = {**os.environ, "TMPDIR": str(tmp)}
    server = LocalKubeProcess(tmp_path / "admin.kubeconfig", log=tmp_path / "localkube.log", env=env)
    server.start()
    try:
        assert not stale.exists(), "a dead server's leftover is removed at start"
        assert live.exists() and other.exists(), "a live process's directory and other names are left alone"
        serving = [p for p in tmp.iterdir() if p.name.startswith(f"localkube-serving-{server.pid}-")]
        assert serving == [], "the key is on disk only while ssl loads it"
    finally:
        server.kill()
    assert sorted(p.name for p in tmp.iterdir()) == sorted([live.name, other.name])
    assert [p for p in tmp.rglob("tls.key") if p.parent not in (live, other)] == []


def test_after_a_failed_fsync_nothing_is_acknowledged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    failing = False
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if failing:
            raise OSError(errno.EIO, "Input/output error")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    thread = ServerThread(ServerConfig(data_dir=tmp_path / "data")).start()
    try:
        raw = Raw(thread, thread.kubeconfig(tmp_path))

        async def scenario() -> None:
            nonlocal failing
            status, _, _ = await raw.request("POST", LEASES, {"metadata": {"name": "before"}})
            assert status == 201
            failing = True
            with pytest.raises(aiohttp.ClientError):
                await raw.request("POST", LEASES, {"metadata": {"name": "lost"}})
            failing = False
            with pytest.raises(aiohttp.ClientError):
                await raw.request("GET", f"{LEASES}/before")  # the disk is no longer trusted: no answers at all

        asyncio.run(scenario())
    finally:
        thread.stop()
    again = ServerThread(ServerConfig(data_dir=tmp_path / "data")).start()
    try:
        assert again.server.store.get("coordination.k8s.io/leases", "default", "before") is not None
    finally:
        again.stop()
