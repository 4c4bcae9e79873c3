"""Fixtures of the client-library tests: a client of the session's localkube."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from karmada.kube import KubeClient, from_kubeconfig
from tests.servers import ServerThread


@pytest.fixture
async def kube(localkube: ServerThread, workdir: Path) -> AsyncIterator[KubeClient]:
    async with KubeClient(from_kubeconfig(localkube.kubeconfig(workdir))) as client:
        yield client
