"""The default mutating admission plugins, as kube-apiserver v1.32 applies them.

Mirrors kubernetes/kubernetes plugin/pkg/admission/serviceaccount/admission_test.go
(TestAssignsDefaultServiceAccountAndBoundTokenWithNoSecretTokens, TestRejectsMirrorPod...,
TestAutomountsAPIToken, TestRespectsExistingMount, TestDenyUnknownServiceAccount...),
defaulttolerationseconds/admission_test.go (TestForgivenessAdmission),
priority/admission_test.go (TestPodAdmission), storage/storageclass/setdefault/
admission_test.go and network/defaultingressclass/admission_test.go.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from localkube import admission
from localkube.errors import APIError
from localkube.simulation import SimulationConfig
from localkube.store import Store
from tests.servers import Raw, ServerThread, start_server

Obj = dict[str, Any]
PODS = "/api/v1/namespaces/default/pods"
MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
DEFAULT_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
]


def token_volume(name: str) -> Obj:
    return {
        "name": name,
        "projected": {
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {
                    "downwardAPI": {
                        "items": [
                            {"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}
                        ]
                    }
                },
            ],
        },
    }


def pod(name: str, **spec: Any) -> Obj:
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}], **spec}}


async def test_plain_pod_gets_account_token_tolerations_and_priority(raw: Raw) -> None:
    body = pod("plain", initContainers=[{"name": "init", "image": "busybox"}])
    status, created, _ = await raw.request("POST", PODS, body)
    assert status == 201, created
    spec = created["spec"]
    assert spec["serviceAccountName"] == "default" and spec["serviceAccount"] == "default"
    (volume,) = spec["volumes"]
    assert re.fullmatch(r"kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}", volume["name"])
    assert volume == token_volume(volume["name"])
    mount = {"name": volume["name"], "readOnly": True, "mountPath": MOUNT}
    assert spec["containers"][0]["volumeMounts"] == [mount]
    assert spec["initContainers"][0]["volumeMounts"] == [mount]
    assert spec["tolerations"] == DEFAULT_TOLERATIONS
    assert spec["priority"] == 0 and spec["preemptionPolicy"] == "PreemptLowerPriority"
    # the defaults the decoder adds, for comparison with kube-apiserver's answer
    assert spec["restartPolicy"] == "Always" and spec["dnsPolicy"] == "ClusterFirst"
    assert spec["schedulerName"] == "default-scheduler" and spec["terminationGracePeriodSeconds"] == 30
    assert spec["enableServiceLinks"] is True and spec["securityContext"] == {}
    assert spec["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    assert spec["initContainers"][0]["imagePullPolicy"] == "Always"
    assert created["status"] == {"phase": "Pending", "qosClass": "BestEffort"}


@pytest.mark.parametrize(
    ("tolerations", "added"),
    [
        ([{"operator": "Exists"}], []),  # tolerates every taint
        ([{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}], DEFAULT_TOLERATIONS[1:]),
        (
            [
                {
                    "key": "node.kubernetes.io/unreachable",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 7,
                }
            ],
            DEFAULT_TOLERATIONS[:1],
        ),
        ([{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule"}], DEFAULT_TOLERATIONS),
    ],
)
async def test_default_tolerations_unless_tolerated(raw: Raw, tolerations: list[Obj], added: list[Obj]) -> None:
    name = f"tol-{len(tolerations[0])}-{len(added)}"
    status, created, _ = await raw.request("POST", PODS, pod(name, tolerations=tolerations))
    assert status == 201, created
    assert created["spec"]["tolerations"] == tolerations + added


async def test_missing_service_account_is_refused(raw: Raw) -> None:
    status, answer, _ = await raw.request("POST", PODS, pod("orphan", serviceAccountName="missing"))
    assert status == 403
    assert answer["reason"] == "Forbidden"
    assert answer["message"] == (
        'pods "orphan" is forbidden: error looking up service account default/missing: '
        'serviceaccount "missing" not found'
    )
    assert (await raw.request("GET", f"{PODS}/orphan"))[0] == 404


async def test_account_settings_and_existing_mounts(raw: Raw) -> None:
    account = {
        "metadata": {"name": "quiet"},
        "automountServiceAccountToken": False,
        "imagePullSecrets": [{"name": "reg"}],
    }
    assert (await raw.request("POST", "/api/v1/namespaces/default/serviceaccounts", account))[0] == 201
    _, quiet, _ = await raw.request("POST", PODS, pod("quiet", serviceAccountName="quiet"))
    assert "volumes" not in quiet["spec"] and "volumeMounts" not in quiet["spec"]["containers"][0]
    assert quiet["spec"]["imagePullSecrets"] == [{"name": "reg"}]
    # the pod's own setting wins over the account's
    _, loud, _ = await raw.request(
        "POST", PODS, pod("loud", serviceAccountName="quiet", automountServiceAccountToken=True)
    )
    assert [v["name"][:16] for v in loud["spec"]["volumes"]] == ["kube-api-access-"]
    own = pod("own", volumes=[{"name": "mine", "emptyDir": {}}])
    own["spec"]["containers"].append(
        {"name": "d", "image": "i:1", "volumeMounts": [{"name": "mine", "mountPath": MOUNT}]}
    )
    _, created, _ = await raw.request("POST", PODS, own)
    token = created["spec"]["volumes"][1]["name"]
    assert [m["name"] for m in created["spec"]["containers"][0]["volumeMounts"]] == [token]
    assert [m["name"] for m in created["spec"]["containers"][1]["volumeMounts"]] == ["mine"]


async def test_priority_classes(raw: Raw) -> None:
    _, critical, _ = await raw.request("POST", PODS, pod("critical", priorityClassName="system-node-critical"))
    assert critical["spec"]["priority"] == 2000001000
    status, answer, _ = await raw.request("POST", PODS, pod("unknown", priorityClassName="gold"))
    assert status == 403
    assert answer["message"] == 'pods "unknown" is forbidden: no PriorityClass with name gold was found'
    status, answer, _ = await raw.request("POST", PODS, pod("preset", priority=5))
    assert status == 403
    assert answer["message"] == (
        'pods "preset" is forbidden: the integer value of priority (5) must not be provided in pod spec; '
        "priority admission controller computed 0 from the given PriorityClass name"
    )


def test_default_classes_and_global_priority() -> None:
    """Storage, ingress and priority classes are read from the store (kinds served by other groups)."""
    store = Store()
    for storage, name, created, annotation in (
        (admission.STORAGE_CLASSES, "old", "2024-01-01T00:00:00Z", admission.DEFAULT_STORAGE_CLASS),
        (admission.STORAGE_CLASSES, "new", "2025-01-01T00:00:00Z", admission.DEFAULT_STORAGE_CLASS),
        (admission.STORAGE_CLASSES, "plain", "2026-01-01T00:00:00Z", ""),
        (admission.INGRESS_CLASSES, "nginx", "2025-01-01T00:00:00Z", admission.DEFAULT_INGRESS_CLASS),
    ):
        meta = {"name": name, "creationTimestamp": created, "annotations": {annotation: "true"} if annotation else {}}
        store.put(storage, {"metadata": meta}, "ADDED")
    store.put(admission.PRIORITY_CLASSES, {"metadata": {"name": "base"}, "value": 10, "globalDefault": True}, "ADDED")
    claim: Obj = {"metadata": {"name": "c"}, "spec": {}}
    admission.admit(store, "PersistentVolumeClaim", claim, None)
    assert claim["spec"]["storageClassName"] == "new"
    explicit: Obj = {"metadata": {"name": "c"}, "spec": {"storageClassName": ""}}
    admission.admit(store, "PersistentVolumeClaim", explicit, None)
    assert explicit["spec"]["storageClassName"] == ""
    ingress: Obj = {"metadata": {"name": "i"}, "spec": {}}
    admission.admit(store, "Ingress", ingress, None)
    assert ingress["spec"]["ingressClassName"] == "nginx"
    annotated: Obj = {"metadata": {"name": "i", "annotations": {"kubernetes.io/ingress.class": "x"}}, "spec": {}}
    admission.admit(store, "Ingress", annotated, None)
    assert "ingressClassName" not in annotated["spec"]
    store.put("/serviceaccounts", {"metadata": {"name": "default", "namespace": "ns"}}, "ADDED")
    prioritised: Obj = {"metadata": {"name": "p", "namespace": "ns"}, "spec": {"containers": []}}
    admission.admit(store, "Pod", prioritised, None)
    assert prioritised["spec"]["priority"] == 10 and prioritised["spec"]["priorityClassName"] == "base"
    mirror: Obj = {
        "metadata": {"name": "m", "namespace": "ns", "annotations": {admission.MIRROR_POD_ANNOTATION: "x"}},
        "spec": {"serviceAccountName": "default", "containers": []},
    }
    with pytest.raises(APIError) as refused:
        admission.admit(store, "Pod", mirror, None)
    assert refused.value.code == 403


@pytest.fixture(scope="module")
def simulated() -> Iterator[ServerThread]:
    yield from start_server(port=0, simulation=SimulationConfig(nodes=1, node_prefix="a", workloads=True))


def test_pods_of_workloads_are_admitted(simulated: ServerThread, workdir: Path) -> None:
    (workdir / "sim").mkdir(exist_ok=True)
    raw = Raw(simulated, simulated.kubeconfig(workdir / "sim"))
    deployment = {
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "i:1"}]},
            },
        },
    }

    async def check() -> list[Obj]:
        status, created, _ = await raw.request("POST", "/apis/apps/v1/namespaces/default/deployments", deployment)
        assert status == 201, created
        for _ in range(200):
            _, pods, _ = await raw.request("GET", f"{PODS}?labelSelector=app%3Dweb")
            if len(pods["items"]) == 2:
                return list(pods["items"])
            await asyncio.sleep(0.05)
        raise AssertionError("the simulation made no pods")

    for item in asyncio.run(check()):
        spec = item["spec"]
        assert spec["tolerations"] == DEFAULT_TOLERATIONS
        assert spec["volumes"] == [token_volume(spec["volumes"][0]["name"])]
        assert spec["serviceAccountName"] == "default"
