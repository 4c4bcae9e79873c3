"""Does an API server run workload controllers? ``init --apiserver external`` refuses one
that does: the templates users submit to Karmada (Deployments, Jobs ...) would run there
as Pods, and its controllers would overwrite the ``.status`` Karmada aggregates from the
members.

Three signs, each enough: Nodes (a kubelet runs that server's Pods); the service accounts
kube-controller-manager creates in ``kube-system`` for the workload controllers it starts
(``--use-service-account-credentials``, kubeadm's default; Karmada's own
kube-controller-manager starts none of those); and a probe, a Deployment with no replicas
in ``kube-system`` whose ``status.observedGeneration`` a Deployment controller sets within
moments (the probe is deleted again).
"""

from __future__ import annotations

import asyncio
import time

from karmada.kube import KubeClient, KubeError
from karmada.kube.resources import DEPLOYMENTS, NODES, SERVICEACCOUNTS

WORKLOAD_CONTROLLER_ACCOUNTS = (
    "deployment-controller",
    "replicaset-controller",
    "statefulset-controller",
    "daemon-set-controller",
    "job-controller",
    "cronjob-controller",
)
PROBE_NAME = "karmada-init-probe"
PROBE_NAMESPACE = "kube-system"  # Karmada never propagates from it
PROBE_WAIT = 2.0  # seconds; a Deployment controller answers in milliseconds


def _probe() -> dict[str, object]:
    labels = {"app": PROBE_NAME}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": PROBE_NAME, "namespace": PROBE_NAMESPACE, "labels": labels},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "probe", "image": "registry.k8s.io/pause:3.10"}]},
            },
        },
    }


async def _probe_status(client: KubeClient, wait: float) -> str | None:
    try:
        await client.delete(DEPLOYMENTS, PROBE_NAME, PROBE_NAMESPACE)  # left by an interrupted run
    except KubeError as error:
        if not error.not_found:
            raise
    created = await client.create(DEPLOYMENTS, _probe(), PROBE_NAMESPACE)
    try:
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            await asyncio.sleep(0.2)
            current = await client.get(DEPLOYMENTS, PROBE_NAME, PROBE_NAMESPACE)
            if (current.get("status") or {}).get("observedGeneration"):
                return (
                    f"a Deployment controller reported the status of the probe deployment "
                    f"{PROBE_NAMESPACE}/{PROBE_NAME} within {wait:g}s"
                )
        return None
    finally:
        try:
            preconditions = {"uid": created["metadata"]["uid"]}
            await client.delete(DEPLOYMENTS, PROBE_NAME, PROBE_NAMESPACE, preconditions=preconditions)
        except KubeError as error:
            if not (error.not_found or error.conflict):
                raise


async def workload_controller_signs(client: KubeClient, probe_wait: float = PROBE_WAIT) -> list[str]:
    """Why this server runs workload controllers, one sentence per sign; empty: it does not."""
    signs: list[str] = []
    nodes = (await client.list(NODES, limit="1")).get("items") or []
    if nodes:
        signs.append(f"it has Nodes (node {nodes[0]['metadata']['name']}): a kubelet runs its Pods")
    for name in WORKLOAD_CONTROLLER_ACCOUNTS:
        if await client.get_or_none(SERVICEACCOUNTS, name, "kube-system") is not None:
            signs.append(f"kube-system/{name} exists: a kube-controller-manager runs that controller")
    if not signs:
        probed = await _probe_status(client, probe_wait)
        if probed:
            signs.append(probed)
    return signs


def refusal(server: str, signs: list[str]) -> str:
    """The message ``init --apiserver external`` stops with."""
    return (
        f"refusing to use {server} as Karmada's API server: "
        + "; ".join(signs)
        + ". Resource templates submitted there would run as Pods in that cluster and its controllers "
        "would fight Karmada over their .status. Use a server that only stores objects (an existing "
        "Karmada's karmada-apiserver, or `kubectl karmada init --apiserver localkube` into this cluster)"
    )
