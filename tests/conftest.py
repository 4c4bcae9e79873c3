"""Shared fixtures: a localkube per test module, and the real kubectl bound to it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.pullmode import PullMode
from tests.servers import Kubectl, Plugin, Raw, ServerThread, start_server


@pytest.fixture(scope="module")
def localkube() -> Iterator[ServerThread]:
    """A fresh in-memory localkube for one test module."""
    yield from start_server(port=0)


@pytest.fixture(scope="module")
def small_history() -> Iterator[ServerThread]:
    """A localkube that keeps only 5 events per resource, to test 410 recovery."""
    yield from start_server(port=0, history=5)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("kube")


@pytest.fixture(scope="module")
def admin(localkube: ServerThread, workdir: Path) -> Kubectl:
    """kubectl as a cluster admin (client certificate in system:masters)."""
    return Kubectl(localkube.kubeconfig(workdir), workdir / "cache")


@pytest.fixture(scope="module")
def raw(localkube: ServerThread, workdir: Path) -> Raw:
    """Plain HTTPS requests to the module's localkube, as admin or with a token."""
    return Raw(localkube, localkube.kubeconfig(workdir))


@pytest.fixture(scope="module")
def as_user(localkube: ServerThread, workdir: Path) -> UserFactory:
    return UserFactory(localkube, workdir)


class UserFactory:
    """kubectl as any user (client certificate with the given groups)."""

    def __init__(self, server: ServerThread, workdir: Path) -> None:
        self.server = server
        self.workdir = workdir

    def __call__(self, user: str, groups: list[str] | None = None) -> Kubectl:
        return Kubectl(self.server.kubeconfig(self.workdir, user, groups or []), self.workdir / "cache")


@pytest.fixture(scope="module")
def kubectl(simulated: ServerThread, workdir: Path) -> Kubectl:
    """kubectl as admin of the module's ``simulated`` localkube (the module defines that fixture)."""
    return Kubectl(simulated.kubeconfig(workdir), workdir / "cache")


@pytest.fixture(scope="module")
def sim_raw(simulated: ServerThread, workdir: Path) -> Raw:
    """Raw HTTPS requests to the module's ``simulated`` localkube."""
    return Raw(simulated, simulated.kubeconfig(workdir))


@pytest.fixture(scope="module")
def plugin(localkube: ServerThread, workdir: Path) -> Plugin:
    """``kubectl karmada`` bound to the module's localkube as admin."""
    return Plugin(localkube.kubeconfig(workdir))


@pytest.fixture(scope="module")
def pull_mode(localkube: ServerThread, workdir: Path) -> Iterator[PullMode]:
    """Karmada installed on the module's localkube, with karmada-controlplane running."""
    env = PullMode(localkube, workdir).install()
    env.start_controlplane()
    try:
        yield env
    finally:
        env.stop()


@pytest.fixture(scope="module")
def member1() -> Iterator[ServerThread]:
    yield from start_server(port=0)


@pytest.fixture(scope="module")
def member2() -> Iterator[ServerThread]:
    yield from start_server(port=0)


@pytest.fixture(scope="module")
def member3() -> Iterator[ServerThread]:
    yield from start_server(port=0)
