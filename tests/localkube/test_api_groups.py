"""Every group and resource kube-apiserver v1.32 serves by default, and the ones
that do something here: HPA v1/v2 conversion, Pod binding, eviction with
disruption budgets, ephemeral containers, and the objects a new cluster has.

The resource list is kube-apiserver v1.32's ``kubectl api-resources`` on a new
cluster (pkg/controlplane/instance.go's default resource config); only
``componentstatuses`` (deprecated since v1.19, probes of processes localkube
does not have) is left out, as the README says.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from tests.servers import Kubectl, Raw

KUBE_1_32_RESOURCES = {
    "bindings",
    "configmaps",
    "endpoints",
    "events",
    "limitranges",
    "namespaces",
    "nodes",
    "persistentvolumeclaims",
    "persistentvolumes",
    "pods",
    "podtemplates",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "serviceaccounts",
    "services",
    "mutatingwebhookconfigurations.admissionregistration.k8s.io",
    "validatingadmissionpolicies.admissionregistration.k8s.io",
    "validatingadmissionpolicybindings.admissionregistration.k8s.io",
    "validatingwebhookconfigurations.admissionregistration.k8s.io",
    "customresourcedefinitions.apiextensions.k8s.io",
    "apiservices.apiregistration.k8s.io",
    "controllerrevisions.apps",
    "daemonsets.apps",
    "deployments.apps",
    "replicasets.apps",
    "statefulsets.apps",
    "selfsubjectreviews.authentication.k8s.io",
    "tokenreviews.authentication.k8s.io",
    "localsubjectaccessreviews.authorization.k8s.io",
    "selfsubjectaccessreviews.authorization.k8s.io",
    "selfsubjectrulesreviews.authorization.k8s.io",
    "subjectaccessreviews.authorization.k8s.io",
    "horizontalpodautoscalers.autoscaling",
    "cronjobs.batch",
    "jobs.batch",
    "certificatesigningrequests.certificates.k8s.io",
    "leases.coordination.k8s.io",
    "endpointslices.discovery.k8s.io",
    "events.events.k8s.io",
    "flowschemas.flowcontrol.apiserver.k8s.io",
    "prioritylevelconfigurations.flowcontrol.apiserver.k8s.io",
    "ingressclasses.networking.k8s.io",
    "ingresses.networking.k8s.io",
    "networkpolicies.networking.k8s.io",
    "runtimeclasses.node.k8s.io",
    "poddisruptionbudgets.policy",
    "clusterrolebindings.rbac.authorization.k8s.io",
    "clusterroles.rbac.authorization.k8s.io",
    "rolebindings.rbac.authorization.k8s.io",
    "roles.rbac.authorization.k8s.io",
    "priorityclasses.scheduling.k8s.io",
    "csidrivers.storage.k8s.io",
    "csinodes.storage.k8s.io",
    "csistoragecapacities.storage.k8s.io",
    "storageclasses.storage.k8s.io",
    "volumeattachments.storage.k8s.io",
}

PODS = "/api/v1/namespaces/default/pods"


def test_every_default_resource_is_discovered(admin: Kubectl) -> None:
    served = set(admin("api-resources", "-o", "name").stdout.split())
    assert served == KUBE_1_32_RESOURCES
    versions = set(admin("api-versions").stdout.split())
    assert {"autoscaling/v1", "autoscaling/v2", "storage.k8s.io/v1", "scheduling.k8s.io/v1"} <= versions


def test_a_new_cluster_has_kube_apiservers_own_objects(admin: Kubectl) -> None:
    classes = admin("get", "priorityclasses", "-o", "jsonpath={.items[*].metadata.name}").stdout.split()
    assert classes == ["system-cluster-critical", "system-node-critical"]
    service = json.loads(admin("get", "apiservice", "v1.apps", "-o", "json").stdout)
    assert service["spec"]["group"] == "apps"
    assert service["status"]["conditions"][0]["reason"] == "Local"
    assert "v1." in admin("get", "apiservices", "-o", "name").stdout
    schemas = admin("get", "flowschemas", "-o", "jsonpath={.items[*].metadata.name}").stdout.split()
    assert set(schemas) == {"exempt", "catch-all"}


def test_new_kinds_round_trip_through_kubectl(admin: Kubectl) -> None:
    manifests = [
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "fast"},
            "provisioner": "example.com/fast",
        },
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {"name": "deny", "namespace": "default"},
            "spec": {"podSelector": {}, "policyTypes": ["Ingress"]},
        },
        {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {"name": "web-1", "namespace": "default", "labels": {"kubernetes.io/service-name": "web"}},
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.1"]}],
        },
        {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "default"}},
    ]
    out = admin("apply", "-f", "-", stdin=yaml.safe_dump_all(manifests)).stdout
    assert "storageclass.storage.k8s.io/fast created" in out
    assert "networkpolicy.networking.k8s.io/deny created" in out
    assert admin("get", "sc", "fast", "-o", "jsonpath={.provisioner}").stdout == "example.com/fast"
    assert (
        admin("get", "netpol", "-n", "default", "-o", "name").stdout.strip() == "networkpolicy.networking.k8s.io/deny"
    )


def hpa_v1(name: str, target: int | None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "maxReplicas": 5,
    }
    if target is not None:
        spec["targetCPUUtilizationPercentage"] = target
    return {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": name}, "spec": spec}


async def test_hpa_written_as_v1_reads_as_v2_and_back(raw: Raw) -> None:
    base = "/apis/autoscaling/{}/namespaces/default/horizontalpodautoscalers"
    status, created, _ = await raw.request("POST", base.format("v1"), hpa_v1("cpu", 50))
    assert status == 201, created
    assert created["apiVersion"] == "autoscaling/v1"
    assert created["spec"]["minReplicas"] == 1 and created["spec"]["targetCPUUtilizationPercentage"] == 50
    status, v2, _ = await raw.request("GET", base.format("v2") + "/cpu")
    assert v2["spec"]["metrics"] == [
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}
    ]
    memory = {
        "type": "Resource",
        "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "1Gi"}},
    }
    v2["spec"]["metrics"].append(memory)
    status, updated, _ = await raw.request("PUT", base.format("v2") + "/cpu", v2)
    assert status == 200, updated
    status, v1, _ = await raw.request("GET", base.format("v1") + "/cpu")
    assert v1["spec"]["targetCPUUtilizationPercentage"] == 50
    assert json.loads(v1["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/metrics"]) == [memory]
    status, _, _ = await raw.request("PUT", base.format("v1") + "/cpu", v1)  # v1 round trip keeps memory
    assert status == 200
    status, v2_again, _ = await raw.request("GET", base.format("v2") + "/cpu")
    assert v2_again["spec"]["metrics"][1] == memory
    assert "annotations" not in v2_again["metadata"]
    status, defaulted, _ = await raw.request("POST", base.format("v1"), hpa_v1("default", None))
    assert defaulted["spec"]["targetCPUUtilizationPercentage"] == 80  # v2's default metric


def pod(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }


async def test_binding_assigns_a_pod_once(raw: Raw) -> None:
    await raw.request("POST", PODS, pod("unbound"))
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "unbound"}, "target": {"name": "node-a"}}
    status, body, _ = await raw.request("POST", f"{PODS}/unbound/binding", binding)
    assert status == 201 and body["status"] == "Success"
    _, bound, _ = await raw.request("GET", f"{PODS}/unbound")
    assert bound["spec"]["nodeName"] == "node-a"
    assert {"type": "PodScheduled", "status": "True"}.items() <= bound["status"]["conditions"][-1].items()
    status, error, _ = await raw.request("POST", f"{PODS}/unbound/binding", binding)
    assert status == 409
    assert (
        error["message"]
        == 'Operation cannot be fulfilled on pods "unbound": pod unbound is already assigned to node "node-a"'
    )
    await raw.request("POST", PODS, pod("second"))
    status, _, _ = await raw.request(
        "POST", "/api/v1/namespaces/default/bindings", {**binding, "metadata": {"name": "second"}}
    )
    assert status == 201
    unnamed_target = {**binding, "metadata": {"name": "second"}, "target": {}}
    status, error, _ = await raw.request("POST", f"{PODS}/second/binding", unnamed_target)
    assert status == 422 and "target.name: Required value" in error["message"]


async def _running(raw: Raw, name: str, labels: dict[str, str]) -> None:
    status, created, _ = await raw.request("POST", PODS, pod(name, labels))
    assert status == 201, created
    created["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    status, body, _ = await raw.request("PUT", f"{PODS}/{name}/status", created)
    assert status == 200, body


async def test_eviction_respects_the_disruption_budget(raw: Raw) -> None:
    labels = {"app": "guarded"}
    await _running(raw, "g1", labels)
    await _running(raw, "g2", labels)
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "keep-one"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": labels}},
    }
    assert (await raw.request("POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets", pdb))[0] == 201
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "g1"}}
    status, body, _ = await raw.request("POST", f"{PODS}/g1/eviction", eviction)
    assert status == 201, body
    assert (await raw.request("GET", f"{PODS}/g1"))[0] == 404
    status, error, _ = await raw.request("POST", f"{PODS}/g2/eviction", {**eviction, "metadata": {"name": "g2"}})
    assert status == 429
    assert error["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
    assert error["details"]["causes"] == [
        {
            "reason": "DisruptionBudget",
            "message": "The disruption budget keep-one needs 1 healthy pods and has 1 currently",
        }
    ]
    _, budget, _ = await raw.request("GET", "/apis/policy/v1/namespaces/default/poddisruptionbudgets/keep-one")
    assert budget["status"]["disruptionsAllowed"] == 0 and budget["status"]["currentHealthy"] == 1
    status, error, _ = await raw.request("POST", f"{PODS}/g2/eviction", {**eviction, "metadata": {"name": "other"}})
    assert status == 400 and error["message"] == "name in URL does not match name in Eviction object"
    await raw.request("POST", PODS, pod("free"))
    status, _, _ = await raw.request("POST", f"{PODS}/free/eviction", {**eviction, "metadata": {"name": "free"}})
    assert status == 201  # no budget selects it


def test_kubectl_debug_adds_an_ephemeral_container(admin: Kubectl) -> None:
    admin("run", "debugged", "--image=nginx", "-n", "default")
    out = admin("debug", "debugged", "-n", "default", "--image=busybox", "--container=dbg").stdout
    assert "dbg" in out or out == ""
    names = admin("get", "pod", "debugged", "-n", "default", "-o", "jsonpath={.spec.ephemeralContainers[*].name}")
    assert names.stdout == "dbg"


async def test_default_storage_and_ingress_classes_are_filled_in(raw: Raw) -> None:
    default = {"storageclass.kubernetes.io/is-default-class": "true"}
    storage = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "standard", "annotations": default},
        "provisioner": "example.com/disk",
    }
    assert (await raw.request("POST", "/apis/storage.k8s.io/v1/storageclasses", storage))[0] == 201
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    status, created, _ = await raw.request("POST", "/api/v1/namespaces/default/persistentvolumeclaims", claim)
    assert status == 201, created
    assert created["spec"]["storageClassName"] == "standard"
    ingress_class = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "IngressClass",
        "metadata": {"name": "nginx", "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}},
        "spec": {"controller": "k8s.io/ingress-nginx"},
    }
    assert (await raw.request("POST", "/apis/networking.k8s.io/v1/ingressclasses", ingress_class))[0] == 201
    ingress = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "web"},
        "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}},
    }
    status, created, _ = await raw.request("POST", "/apis/networking.k8s.io/v1/namespaces/default/ingresses", ingress)
    assert status == 201, created
    assert created["spec"]["ingressClassName"] == "nginx"
