"""Push members' clients in the cluster proxy: a proxied request costs no Secret reads while
the client is fresh; a changed Secret or Cluster, or a stale check, reads them again."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from controlplane.cluster_proxy import SECRET_RECHECK, PushMembers

CLUSTER: dict[str, Any] = {
    "metadata": {"name": "push1", "uid": "u-1"},
    "spec": {
        "syncMode": "Push",
        "apiEndpoint": "https://push1.example:6443",
        "secretRef": {"namespace": "karmada-cluster", "name": "push1"},
        "impersonatorSecretRef": {"namespace": "karmada-cluster", "name": "push1-impersonator"},
    },
}
OWNER = [
    {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "name": "push1", "uid": "u-1", "controller": True}
]


class ControlPlane:
    def __init__(self) -> None:
        self.gets = 0
        self.versions = {"push1": "1", "push1-impersonator": "1"}

    async def get(self, _resource: Any, name: str, namespace: str | None = None) -> dict[str, Any]:
        self.gets += 1
        token = base64.b64encode(f"token-of-{name}".encode()).decode()
        meta = {"name": name, "namespace": namespace, "resourceVersion": self.versions[name], "ownerReferences": OWNER}
        return {"metadata": meta, "data": {"token": token}}


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def members() -> Any:
    control, clock = ControlPlane(), Clock()
    made = PushMembers(control, clock)  # type: ignore[arg-type]
    yield made, control, clock
    await made.close()


async def test_the_impersonators_token_is_used_and_reads_are_not_repeated(members: Any) -> None:
    push, control, clock = members
    client = await push.client(CLUSTER)
    assert client.config.credentials.token == "token-of-push1-impersonator"
    assert client.config.server == "https://push1.example:6443"
    assert control.gets == 2
    for _ in range(10):
        assert await push.client(CLUSTER) is client
    assert control.gets == 2  # no Secret read per request
    clock.now += SECRET_RECHECK
    assert await push.client(CLUSTER) is client  # read again, unchanged: the same client
    assert control.gets == 4


async def test_a_changed_secret_or_cluster_makes_a_new_client(members: Any) -> None:
    push, control, clock = members
    first = await push.client(CLUSTER)
    control.versions["push1-impersonator"] = "2"
    clock.now += SECRET_RECHECK
    second = await push.client(CLUSTER)
    assert second is not first
    moved = {**CLUSTER, "spec": {**CLUSTER["spec"], "apiEndpoint": "https://push1.other:6443"}}
    third = await push.client(moved)  # a changed Cluster is seen at once, without waiting
    assert third is not second and third.config.server == "https://push1.other:6443"
