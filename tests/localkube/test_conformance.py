"""The ten differences from kube-apiserver v1.32 that independent Kubernetes clients found
in localkube (issue 17), each as the client saw it, over raw HTTPS. The modules named in
each test hold the full tables; each case cites the Kubernetes source it follows.
"""

from __future__ import annotations

import base64
from typing import Any

from tests.servers import Raw

NS = "/api/v1/namespaces/default"


async def test_1_json_is_exactly_application_json(raw: Raw) -> None:
    """k8s.io/apiserver pkg/endpoints/handlers/responsewriters: ``Content-Type: application/json``
    for objects and Status errors alike (test_wire_format.py)."""
    status, _, headers = await raw.request("GET", f"{NS}/configmaps/absent")
    assert status == 404 and headers["Content-Type"] == "application/json"
    status, _, headers = await raw.request("GET", f"{NS}/configmaps")
    assert status == 200 and headers["Content-Type"] == "application/json"


async def test_2_go_zero_values_are_written(raw: Raw) -> None:
    """k8s.io/api core/v1 types.go: NodeSpec and NodeSystemInfo fields without ``omitempty``
    (test_zero_values.py)."""
    status, node, _ = await raw.request("POST", "/api/v1/nodes", {"metadata": {"name": "conformance-node"}})
    assert status == 201, node
    assert node["spec"] == {}
    assert node["status"]["daemonEndpoints"] == {"kubeletEndpoint": {"Port": 0}}
    info = node["status"]["nodeInfo"]
    for field in ("machineID", "systemUUID", "bootID", "kernelVersion", "osImage", "kubeProxyVersion"):
        assert info[field] == ""


async def test_3_server_side_apply_keeps_applied_data(raw: Raw) -> None:
    """structured-merge-diff merge/update.go: an empty map then a filled one (test_server_side_apply.py)."""
    path = f"{NS}/configmaps/conformance-ssa?fieldManager=m1"
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "conformance-ssa"}}
    apply = "application/apply-patch+yaml"
    assert (await raw.request("PATCH", path, {**body, "data": {}}, content_type=apply))[0] == 201
    status, obj, _ = await raw.request("PATCH", path, {**body, "data": {"b": "2"}}, content_type=apply)
    assert status == 200 and obj["data"] == {"b": "2"}


async def test_4_bound_pods_are_deleted_gracefully(raw: Raw) -> None:
    """pkg/registry/core/pod/strategy.go CheckGracefulDelete (test_pod_deletion.py)."""
    pod = {
        "metadata": {"name": "conformance-bound"},
        "spec": {"nodeName": "somewhere", "containers": [{"name": "c", "image": "nginx"}]},
    }
    assert (await raw.request("POST", f"{NS}/pods", pod))[0] == 201
    status, deleted, _ = await raw.request("DELETE", f"{NS}/pods/conformance-bound")
    assert status == 200
    assert deleted["metadata"]["deletionTimestamp"] and deleted["metadata"]["deletionGracePeriodSeconds"] == 30
    assert (await raw.request("GET", f"{NS}/pods/conformance-bound"))[0] == 200
    assert (await raw.request("DELETE", f"{NS}/pods/conformance-bound?gracePeriodSeconds=0"))[0] == 200
    assert (await raw.request("GET", f"{NS}/pods/conformance-bound"))[0] == 404


async def test_5_admission_defaults_pods(raw: Raw) -> None:
    """plugin/pkg/admission/serviceaccount and defaulttolerationseconds (test_admission.py)."""
    pod = {"metadata": {"name": "conformance-admitted"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    status, created, _ = await raw.request("POST", f"{NS}/pods", pod)
    assert status == 201, created
    spec = created["spec"]
    assert spec["serviceAccountName"] == "default"
    keys = {(t["key"], t["effect"], t.get("tolerationSeconds")) for t in spec["tolerations"]}
    assert keys == {
        ("node.kubernetes.io/not-ready", "NoExecute", 300),
        ("node.kubernetes.io/unreachable", "NoExecute", 300),
    }
    assert any(v["name"].startswith("kube-api-access-") for v in spec["volumes"])
    mounts = spec["containers"][0]["volumeMounts"]
    assert mounts[0]["mountPath"] == "/var/run/secrets/kubernetes.io/serviceaccount" and mounts[0]["readOnly"]


async def test_6_secret_base64_may_carry_line_breaks(raw: Raw) -> None:
    """Go's encoding/base64 skips CR and LF (test_wire_format.py)."""
    secret = {"metadata": {"name": "conformance-wrapped"}, "data": {"k": "aGVs\nbG8=\n"}}
    status, created, _ = await raw.request("POST", f"{NS}/secrets", secret)
    assert status == 201, created
    assert created["data"]["k"] == base64.b64encode(b"hello").decode()


async def test_7_built_in_kinds_are_validated(raw: Raw) -> None:
    """pkg/apis/core/validation/validation.go validateContainers (test_validation.py)."""
    pod = {"metadata": {"name": "conformance-invalid"}, "spec": {"containers": [{"image": "nginx"}]}}
    status, error, _ = await raw.request("POST", f"{NS}/pods", pod)
    assert status == 422
    assert "spec.containers[0].name: Required value" in error["message"]
    assert {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.containers[0].name"} in error[
        "details"
    ]["causes"]


async def test_8_a_non_numeric_resource_version_on_create_is_cleared(raw: Raw) -> None:
    """k8s.io/apiserver pkg/storage/etcd3/store.go Create (test_input_limits.py)."""
    body = {"metadata": {"name": "conformance-rv", "resourceVersion": "v1"}, "data": {"a": "1"}}
    status, created, _ = await raw.request("POST", f"{NS}/configmaps", body)
    assert status == 201, created
    assert created["metadata"]["resourceVersion"] != "v1"


async def test_9_the_default_groups_are_served(raw: Raw) -> None:
    """pkg/controlplane/apiserver: the default resource config (test_api_groups.py)."""
    for path in (
        "/apis/storage.k8s.io/v1",
        "/apis/networking.k8s.io/v1/networkpolicies",
        "/api/v1/replicationcontrollers",
        "/apis/autoscaling/v2/horizontalpodautoscalers",
        "/apis/discovery.k8s.io/v1/endpointslices",
        "/apis/scheduling.k8s.io/v1/priorityclasses",
        "/apis/node.k8s.io/v1/runtimeclasses",
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
        "/api/v1/limitranges",
        "/api/v1/resourcequotas",
        "/api/v1/podtemplates",
        "/apis/apps/v1/controllerrevisions",
    ):
        status, _, _ = await raw.request("GET", path)
        assert status == 200, path
    status, resources, _ = await raw.request("GET", "/api/v1")
    assert "pods/eviction" in {r["name"] for r in resources["resources"]}
