"""ResourceQuota admission and quota status, as kube-apiserver v1.32 and its quota controller keep them.

Mirrors kubernetes/kubernetes plugin/pkg/admission/resourcequota/admission_test.go
(TestAdmitBelowQuotaLimit, TestAdmitExceedQuotaLimit, TestAdmitEnforceQuotaConstraints,
TestAdmitPodInNamespaceWithoutQuota, TestAdmitBelowTerminatingQuotaLimit, TestAdmitBelowBestEffortQuotaLimit,
TestAdmitLimitedScopeWithCoverQuota, TestAdmitBelowStorageClassQuotaLimit, TestServiceQuota...), and
pkg/quota/v1/evaluator/core/pods_test.go (TestPodEvaluatorUsage: terminal pods, overhead).
"""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path
from typing import Any

import aiohttp

from tests.servers import Kubectl, Raw, ServerThread

Obj = dict[str, Any]
_names = itertools.count()
OVER_QUOTA = (
    '{"spec": {"containers": [{"name": "over", "image": "nginx:1.25", "resources": {"requests": {"cpu": "2"}}}]}}'
)


async def namespace(raw: Raw, hard: Obj | None = None, **spec: Any) -> str:
    """A fresh namespace, with quota ``q`` when ``hard`` is given."""
    name = f"quota-{next(_names)}"
    status, body, _ = await raw.request("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    assert status == 201, body
    if hard is not None:
        status, body, _ = await raw.request(
            "POST",
            f"/api/v1/namespaces/{name}/resourcequotas",
            {"metadata": {"name": "q"}, "spec": {"hard": hard, **spec}},
        )
        assert status == 201, body
    return name


def pod(name: str, requests: Obj | None = None, limits: Obj | None = None, **spec: Any) -> Obj:
    resources: Obj = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    return {
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "nginx:1.25", "resources": resources}], **spec},
    }


async def post(raw: Raw, ns: str, resource: str, body: Obj, prefix: str = "/api/v1") -> tuple[int, Obj]:
    status, answer, _ = await raw.request("POST", f"{prefix}/namespaces/{ns}/{resource}", body)
    return status, answer


async def used(raw: Raw, ns: str, want: Obj, name: str = "q") -> Obj:
    """The quota once its status.used is ``want``: localkube's controllers recount after each change,
    so this watches the quota until its status says so."""
    status, quota, _ = await raw.request("GET", f"/api/v1/namespaces/{ns}/resourcequotas/{name}")
    assert status == 200, quota
    seen: Obj = quota
    if quota.get("status", {}).get("used") == want:
        return seen
    url = (
        f"{raw.url}/api/v1/namespaces/{ns}/resourcequotas?watch=1&fieldSelector=metadata.name%3D{name}"
        f"&resourceVersion={quota['metadata']['resourceVersion']}"
    )
    try:
        async with (
            asyncio.timeout(10),
            aiohttp.ClientSession() as session,
            session.get(url, ssl=raw.context) as response,
        ):
            async for line in response.content:
                seen = json.loads(line)["object"]
                if seen.get("status", {}).get("used") == want:
                    return seen
    except TimeoutError:
        pass
    raise AssertionError(f"status.used stayed {seen.get('status')}, want {want}")


async def test_pod_count_is_enforced_and_freed_on_delete(raw: Raw) -> None:
    ns = await namespace(raw, {"pods": "2", "count/pods": "5"})
    status, quota, _ = await raw.request("GET", f"/api/v1/namespaces/{ns}/resourcequotas/q")
    assert quota["status"] == {"hard": {"count/pods": "5", "pods": "2"}, "used": {"count/pods": "0", "pods": "0"}}
    for name in ("p1", "p2"):
        status, body = await post(raw, ns, "pods", pod(name))
        assert status == 201, body
    status, body = await post(raw, ns, "pods", pod("p3"))
    assert status == 403, body
    assert body["message"] == (
        'pods "p3" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2'
    )
    assert body["reason"] == "Forbidden" and body["details"] == {"name": "p3", "kind": "pods"}
    await used(raw, ns, {"count/pods": "2", "pods": "2"})
    status, body, _ = await raw.request("DELETE", f"/api/v1/namespaces/{ns}/pods/p1")
    assert status == 200, body
    await used(raw, ns, {"count/pods": "1", "pods": "1"})
    status, body = await post(raw, ns, "pods", pod("p3"))
    assert status == 201, body


async def test_namespace_without_quota_admits_everything(raw: Raw) -> None:
    ns = await namespace(raw)
    for index in range(3):
        status, body = await post(raw, ns, "pods", pod(f"p{index}"))
        assert status == 201, body


async def test_compute_quota_requires_requests_and_limits(raw: Raw) -> None:
    ns = await namespace(raw, {"requests.cpu": "1", "limits.memory": "1Gi"})
    status, body = await post(raw, ns, "pods", pod("bare"))
    assert status == 403, body
    assert body["message"] == (
        'pods "bare" is forbidden: failed quota: q: must specify limits.memory for: c; requests.cpu for: c'
    )
    status, body = await post(raw, ns, "pods", pod("first", {"cpu": "600m"}, {"memory": "512Mi"}))
    assert status == 201, body
    status, body = await post(raw, ns, "pods", pod("second", {"cpu": "0.6"}, {"memory": "256Mi"}))
    assert status == 403, body
    assert body["message"] == (
        'pods "second" is forbidden: exceeded quota: q, requested: requests.cpu=600m, '
        "used: requests.cpu=600m, limited: requests.cpu=1"
    )
    status, body = await post(raw, ns, "pods", pod("third", {"cpu": "400m"}, {"memory": "512Mi"}))
    assert status == 201, body
    await used(raw, ns, {"limits.memory": "1Gi", "requests.cpu": "1"})


async def test_terminal_pods_count_only_as_objects(raw: Raw) -> None:
    ns = await namespace(raw, {"pods": "1", "count/pods": "2"})
    status, body = await post(raw, ns, "pods", pod("done"))
    assert status == 201, body
    status, body, _ = await raw.request(
        "PATCH",
        f"/api/v1/namespaces/{ns}/pods/done/status",
        {"status": {"phase": "Succeeded"}},
        content_type="application/merge-patch+json",
    )
    assert status == 200, body
    await used(raw, ns, {"count/pods": "1", "pods": "0"})
    status, body = await post(raw, ns, "pods", pod("next"))
    assert status == 201, body
    status, body = await post(raw, ns, "pods", pod("third"))
    assert status == 403, body
    assert body["message"] == (
        'pods "third" is forbidden: exceeded quota: q, requested: count/pods=1,pods=1, '
        "used: count/pods=2,pods=1, limited: count/pods=2,pods=1"
    )


async def test_dry_run_is_checked_but_charges_nothing(raw: Raw) -> None:
    ns = await namespace(raw, {"pods": "1"})
    status, body, _ = await raw.request("POST", f"/api/v1/namespaces/{ns}/pods?dryRun=All", pod("trial"))
    assert status == 201, body
    status, body = await post(raw, ns, "pods", pod("real"))
    assert status == 201, body
    status, body, _ = await raw.request("POST", f"/api/v1/namespaces/{ns}/pods?dryRun=All", pod("again"))
    assert status == 403, body
    assert body["message"] == (
        'pods "again" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1'
    )


async def test_services_load_balancers_and_node_ports(raw: Raw) -> None:
    ns = await namespace(raw, {"services": "3", "services.loadbalancers": "1", "services.nodeports": "2"})

    def service(name: str, kind: str, ports: int) -> Obj:
        return {
            "metadata": {"name": name},
            "spec": {
                "type": kind,
                "selector": {"app": name},
                "ports": [{"name": f"p{i}", "port": 80 + i} for i in range(ports)],
            },
        }

    status, body = await post(raw, ns, "services", service("lb", "LoadBalancer", 1))
    assert status == 201, body
    status, body = await post(raw, ns, "services", service("lb2", "LoadBalancer", 1))
    assert status == 403, body
    assert body["message"] == (
        'services "lb2" is forbidden: exceeded quota: q, requested: services.loadbalancers=1, '
        "used: services.loadbalancers=1, limited: services.loadbalancers=1"
    )
    status, body = await post(raw, ns, "services", service("internal", "ClusterIP", 2))
    assert status == 201, body
    # an update is charged for what it adds: ClusterIP to NodePort needs two node ports, one is left
    status, body, _ = await raw.request(
        "PATCH",
        f"/api/v1/namespaces/{ns}/services/internal",
        {"spec": {"type": "NodePort"}},
        content_type="application/merge-patch+json",
    )
    assert status == 403, body
    assert body["message"] == (
        'services "internal" is forbidden: exceeded quota: q, requested: services.nodeports=2, '
        "used: services.nodeports=1, limited: services.nodeports=2"
    )
    await used(raw, ns, {"services": "2", "services.loadbalancers": "1", "services.nodeports": "1"})


async def test_object_counts_of_any_group(raw: Raw) -> None:
    ns = await namespace(raw, {"count/deployments.apps": "1", "configmaps": "2", "count/secrets": "1"})
    # the namespace's kube-root-ca.crt counts too, once localkube's controller has written it
    await used(raw, ns, {"configmaps": "1", "count/deployments.apps": "0", "count/secrets": "0"})
    deployment = {
        "metadata": {"name": "d1"},
        "spec": {
            "selector": {"matchLabels": {"app": "d"}},
            "template": {
                "metadata": {"labels": {"app": "d"}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]},
            },
        },
    }
    status, body = await post(raw, ns, "deployments", deployment, "/apis/apps/v1")
    assert status == 201, body
    deployment["metadata"] = {"name": "d2"}
    status, body = await post(raw, ns, "deployments", deployment, "/apis/apps/v1")
    assert status == 403, body
    assert body["message"] == (
        'deployments.apps "d2" is forbidden: exceeded quota: q, requested: count/deployments.apps=1, '
        "used: count/deployments.apps=1, limited: count/deployments.apps=1"
    )
    assert body["details"] == {"name": "d2", "group": "apps", "kind": "deployments"}
    status, body = await post(raw, ns, "configmaps", {"metadata": {"name": "one"}})
    assert status == 201, body
    status, body = await post(raw, ns, "configmaps", {"metadata": {"name": "two"}})
    assert status == 403, body
    assert body["message"] == (
        'configmaps "two" is forbidden: exceeded quota: q, requested: configmaps=1, used: configmaps=2, '
        "limited: configmaps=2"
    )
    status, body = await post(raw, ns, "secrets", {"metadata": {"name": "s1"}, "stringData": {"k": "v"}})
    assert status == 201, body
    await used(raw, ns, {"configmaps": "2", "count/deployments.apps": "1", "count/secrets": "1"})


async def test_claims_by_storage_class(raw: Raw) -> None:
    ns = await namespace(
        raw,
        {
            "requests.storage": "5Gi",
            "persistentvolumeclaims": "3",
            "gold.storageclass.storage.k8s.io/requests.storage": "2Gi",
        },
    )

    def claim(name: str, size: str, storage_class: str) -> Obj:
        return {
            "metadata": {"name": name},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": storage_class,
                "resources": {"requests": {"storage": size}},
            },
        }

    status, body = await post(raw, ns, "persistentvolumeclaims", claim("gold-big", "3Gi", "gold"))
    assert status == 403, body
    assert body["message"] == (
        'persistentvolumeclaims "gold-big" is forbidden: exceeded quota: q, '
        "requested: gold.storageclass.storage.k8s.io/requests.storage=3Gi, "
        "used: gold.storageclass.storage.k8s.io/requests.storage=0, "
        "limited: gold.storageclass.storage.k8s.io/requests.storage=2Gi"
    )
    status, body = await post(raw, ns, "persistentvolumeclaims", claim("silver", "4Gi", "silver"))
    assert status == 201, body
    status, body = await post(raw, ns, "persistentvolumeclaims", claim("gold", "2Gi", "gold"))
    assert status == 403, body
    assert body["message"].endswith(
        "requested: requests.storage=2Gi, used: requests.storage=4Gi, limited: requests.storage=5Gi"
    )
    await used(
        raw,
        ns,
        {
            "gold.storageclass.storage.k8s.io/requests.storage": "0",
            "persistentvolumeclaims": "1",
            "requests.storage": "4Gi",
        },
    )


async def test_best_effort_scope(raw: Raw) -> None:
    ns = await namespace(raw, {"pods": "1"}, scopes=["BestEffort"])
    status, body = await post(raw, ns, "pods", pod("free"))
    assert status == 201, body
    status, body = await post(raw, ns, "pods", pod("free2"))
    assert status == 403, body
    assert "exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1" in body["message"]
    # a pod with requests is not BestEffort: this quota does not see it
    status, body = await post(raw, ns, "pods", pod("sized", {"cpu": "100m"}))
    assert status == 201, body
    await used(raw, ns, {"pods": "1"})


async def test_terminating_scope(raw: Raw) -> None:
    ns = await namespace(raw, {"pods": "0"}, scopes=["Terminating"])
    status, body = await post(raw, ns, "pods", pod("job", activeDeadlineSeconds=60))
    assert status == 403, body
    status, body = await post(raw, ns, "pods", pod("server"))
    assert status == 201, body


async def test_priority_class_scope_selector(raw: Raw) -> None:
    status, body, _ = await raw.request(
        "POST",
        "/apis/scheduling.k8s.io/v1/priorityclasses",
        {"metadata": {"name": "quota-high"}, "value": 1000},
    )
    assert status == 201, body
    selector = {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": ["quota-high"]}]}
    ns = await namespace(raw, {"pods": "0"}, scopeSelector=selector)
    status, body = await post(raw, ns, "pods", pod("urgent", priorityClassName="quota-high"))
    assert status == 403, body
    assert body["message"] == (
        'pods "urgent" is forbidden: exceeded quota: q, requested: pods=1, used: pods=0, limited: pods=0'
    )
    status, body = await post(raw, ns, "pods", pod("normal"))
    assert status == 201, body


async def test_pod_overhead_is_charged(raw: Raw) -> None:
    status, body, _ = await raw.request(
        "POST",
        "/apis/node.k8s.io/v1/runtimeclasses",
        {"metadata": {"name": "quota-sandbox"}, "handler": "runsc", "overhead": {"podFixed": {"cpu": "250m"}}},
    )
    assert status == 201, body
    ns = await namespace(raw, {"requests.cpu": "1"})
    status, body = await post(raw, ns, "pods", pod("sandboxed", {"cpu": "750m"}, runtimeClassName="quota-sandbox"))
    assert status == 201, body
    await used(raw, ns, {"requests.cpu": "1"})


async def test_quota_spec_update_moves_status_hard(raw: Raw) -> None:
    ns = await namespace(raw, {"pods": "1"})
    status, body = await post(raw, ns, "pods", pod("one"))
    assert status == 201, body
    status, body, _ = await raw.request(
        "PATCH",
        f"/api/v1/namespaces/{ns}/resourcequotas/q",
        {"spec": {"hard": {"pods": "3", "cpu": "2"}}},
        content_type="application/merge-patch+json",
    )
    assert status == 200, body
    assert body["status"] == {"hard": {"cpu": "2", "pods": "3"}, "used": {"cpu": "0", "pods": "1"}}


def test_kubectl_create_and_describe_quota(admin: Kubectl, raw: Raw) -> None:
    ns = asyncio.run(namespace(raw))
    admin("create", "quota", "compute", "--hard=pods=4,requests.cpu=2,count/configmaps=10", "-n", ns)
    asyncio.run(post(raw, ns, "pods", pod("described", {"cpu": "500m"})))
    asyncio.run(used(raw, ns, {"count/configmaps": "1", "pods": "1", "requests.cpu": "500m"}, name="compute"))
    out = admin("describe", "quota", "compute", "-n", ns).stdout
    lines = [line.split() for line in out.splitlines()]
    assert ["Resource", "Used", "Hard"] in lines
    assert ["pods", "1", "4"] in lines
    assert ["requests.cpu", "500m", "2"] in lines
    assert ["count/configmaps", "1", "10"] in lines  # kube-root-ca.crt
    refused = admin("run", "over", "--image=nginx:1.25", "-n", ns, "--overrides", OVER_QUOTA, check=False)
    assert refused.returncode != 0
    assert 'pods "over" is forbidden: exceeded quota: compute, requested: requests.cpu=2, ' in refused.stderr


GADGET_CRD = {
    "metadata": {"name": "gadgets.quota.example.com"},
    "spec": {
        "group": "quota.example.com",
        "scope": "Namespaced",
        "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
            }
        ],
    },
}


async def test_custom_resources_are_counted(raw: Raw) -> None:
    status, body, _ = await raw.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", GADGET_CRD)
    assert status == 201, body
    ns = await namespace(raw, {"count/gadgets.quota.example.com": "1"})
    gadgets = f"/apis/quota.example.com/v1/namespaces/{ns}/gadgets"
    deadline = asyncio.get_running_loop().time() + 10
    while (await raw.request("GET", gadgets))[0] != 200:  # the CRD is served once established
        assert asyncio.get_running_loop().time() < deadline, "gadgets never became served"
        await asyncio.sleep(0.05)
    status, body, _ = await raw.request("POST", gadgets, {"metadata": {"name": "g1"}})
    assert status == 201, body
    status, body, _ = await raw.request("POST", gadgets, {"metadata": {"name": "g2"}})
    assert status == 403, body
    assert body["message"] == (
        'gadgets.quota.example.com "g2" is forbidden: exceeded quota: q, requested: count/gadgets.quota.example.com=1, '
        "used: count/gadgets.quota.example.com=1, limited: count/gadgets.quota.example.com=1"
    )
    status, body, _ = await raw.request("DELETE", f"{gadgets}/g1")
    assert status == 200, body
    await used(raw, ns, {"count/gadgets.quota.example.com": "0"})
    status, body, _ = await raw.request("POST", gadgets, {"metadata": {"name": "g2"}})
    assert status == 201, body


async def test_counts_stay_exact_past_the_event_history(small_history: ServerThread, workdir: Path) -> None:
    """Usage is kept as a running total over the store's event history; with only 5 events
    retained per resource the total falls out of it and is recounted from the objects."""
    raw = Raw(small_history, small_history.kubeconfig(workdir / "small"))
    ns = await namespace(raw, {"pods": "3"})
    other = await namespace(raw)
    status, body = await post(raw, ns, "pods", pod("p1"))
    assert status == 201, body
    for index in range(8):  # more pod events elsewhere than the history keeps
        status, body = await post(raw, other, "pods", pod(f"elsewhere-{index}"))
        assert status == 201, body
    for name in ("p2", "p3"):
        status, body = await post(raw, ns, "pods", pod(name))
        assert status == 201, body
    status, body = await post(raw, ns, "pods", pod("p4"))
    assert status == 403, body
    assert body["message"].endswith("requested: pods=1, used: pods=3, limited: pods=3")
    # within the history: the delete is subtracted from the running total
    status, body, _ = await raw.request("DELETE", f"/api/v1/namespaces/{ns}/pods/p1")
    assert status == 200, body
    status, body = await post(raw, ns, "pods", pod("p4"))
    assert status == 201, body
    status, body = await post(raw, ns, "pods", pod("p5"))
    assert status == 403, body


def test_kubectl_create_quota_with_scopes(admin: Kubectl, raw: Raw) -> None:
    ns = asyncio.run(namespace(raw))
    admin("create", "quota", "best-effort", "--hard=pods=1", "--scopes=BestEffort,NotTerminating", "-n", ns)
    quota = json.loads(admin("get", "quota", "best-effort", "-n", ns, "-o", "json").stdout)
    assert quota["spec"] == {"hard": {"pods": "1"}, "scopes": ["BestEffort", "NotTerminating"]}
    assert quota["status"] == {"hard": {"pods": "1"}, "used": {"pods": "0"}}
    admin("run", "first", "--image=nginx:1.25", "-n", ns)
    refused = admin("run", "second", "--image=nginx:1.25", "-n", ns, check=False)
    assert refused.returncode != 0
    assert 'pods "second" is forbidden: exceeded quota: best-effort, requested: pods=1, used: pods=1' in refused.stderr
