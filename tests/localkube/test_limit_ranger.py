"""LimitRanger admission and LimitRange defaults, as kube-apiserver v1.32 applies them.

Mirrors kubernetes/kubernetes plugin/pkg/admission/limitranger/admission_test.go
(TestDefaultContainerResourceRequirements, TestMergePodResourceRequirements,
TestPodLimitFunc, TestPodLimitFuncApplyDefault, TestLimitRangerIgnoresSubresource,
TestPersistentVolumeClaimLimitFunc) and pkg/apis/core/v1/defaults_test.go
(TestSetDefaultLimitRangeItem).
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

from tests.servers import Kubectl, Raw

Obj = dict[str, Any]
_names = itertools.count()


async def namespace(raw: Raw, limits: list[Obj]) -> str:
    """A fresh namespace holding one LimitRange ``lr`` with ``limits``."""
    name = f"limits-{next(_names)}"
    status, body, _ = await raw.request("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    assert status == 201, body
    if limits:
        status, body, _ = await raw.request(
            "POST", f"/api/v1/namespaces/{name}/limitranges", {"metadata": {"name": "lr"}, "spec": {"limits": limits}}
        )
        assert status == 201, body
    return name


def container(name: str, requests: Obj | None = None, limits: Obj | None = None) -> Obj:
    resources: Obj = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    return {"name": name, "image": "nginx:1.25", "resources": resources}


async def create_pod(raw: Raw, ns: str, name: str, *containers: Obj, init: list[Obj] | None = None) -> tuple[int, Obj]:
    spec: Obj = {"containers": list(containers)}
    if init:
        spec["initContainers"] = init
    status, body, _ = await raw.request(
        "POST", f"/api/v1/namespaces/{ns}/pods", {"metadata": {"name": name}, "spec": spec}
    )
    return status, body


async def test_container_defaults_fill_what_containers_lack_and_annotate(raw: Raw) -> None:
    ns = await namespace(
        raw,
        [
            {
                "type": "Container",
                "default": {"cpu": "500m", "memory": "512Mi"},
                "defaultRequest": {"cpu": "100m", "memory": "256Mi"},
            }
        ],
    )
    status, pod = await create_pod(
        raw,
        ns,
        "web",
        container("app"),
        container("side", requests={"cpu": "200m"}, limits={"cpu": "1", "memory": "1Gi"}),
        init=[container("setup", limits={"memory": "128Mi"}, requests={"memory": "64Mi"})],
    )
    assert status == 201, pod
    app, side = pod["spec"]["containers"]
    assert app["resources"] == {
        "requests": {"cpu": "100m", "memory": "256Mi"},
        "limits": {"cpu": "500m", "memory": "512Mi"},
    }
    assert side["resources"] == {
        "requests": {"cpu": "200m", "memory": "256Mi"},
        "limits": {"cpu": "1", "memory": "1Gi"},
    }
    (setup,) = pod["spec"]["initContainers"]
    assert setup["resources"] == {
        "requests": {"memory": "64Mi", "cpu": "100m"},
        "limits": {"memory": "128Mi", "cpu": "500m"},
    }
    assert pod["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app; "
        "memory request for container side; cpu request for init container setup; "
        "cpu limit for init container setup"
    )
    assert pod["status"]["qosClass"] == "Burstable"


async def test_no_limit_range_leaves_pods_alone(raw: Raw) -> None:
    ns = await namespace(raw, [])
    status, pod = await create_pod(raw, ns, "plain", container("c"))
    assert status == 201, pod
    assert pod["spec"]["containers"][0]["resources"] == {}
    assert "kubernetes.io/limit-ranger" not in (pod["metadata"].get("annotations") or {})
    assert pod["status"]["qosClass"] == "BestEffort"


async def test_limit_range_item_defaults_from_max_and_min(raw: Raw) -> None:
    ns = await namespace(
        raw,
        [
            {"type": "Container", "max": {"cpu": "2"}, "min": {"cpu": "100m", "memory": "64Mi"}},
            {"type": "Pod", "max": {"cpu": "4"}},
        ],
    )
    status, body, _ = await raw.request("GET", f"/api/v1/namespaces/{ns}/limitranges/lr")
    assert status == 200, body
    container_item, pod_item = body["spec"]["limits"]
    # default from max, defaultRequest from default, then from min
    assert container_item["default"] == {"cpu": "2"}
    assert container_item["defaultRequest"] == {"cpu": "2", "memory": "64Mi"}
    assert "default" not in pod_item and "defaultRequest" not in pod_item


async def test_container_min_max_refusals_are_aggregated(raw: Raw) -> None:
    ns = await namespace(raw, [{"type": "Container", "min": {"cpu": "100m"}, "max": {"cpu": "1"}}])
    status, body = await create_pod(raw, ns, "small", container("a", {"cpu": "50m"}, {"cpu": "2"}))
    assert status == 403, body
    assert body["reason"] == "Forbidden" and body["details"] == {"name": "small", "kind": "pods"}
    assert body["message"] == (
        'pods "small" is forbidden: [minimum cpu usage per Container is 100m, but request is 50m, '
        "maximum cpu usage per Container is 1, but limit is 2]"
    )
    # the same message for two containers is reported once, without brackets
    status, body = await create_pod(
        raw, ns, "twice", container("a", {"cpu": "50m"}, {"cpu": "500m"}), container("b", {"cpu": "0.05"})
    )
    assert status == 403, body
    assert body["message"] == 'pods "twice" is forbidden: minimum cpu usage per Container is 100m, but request is 50m'
    status, body = await create_pod(raw, ns, "fits", container("a", {"cpu": "100m"}, {"cpu": "1000m"}))
    assert status == 201, body


async def test_init_containers_are_checked_too(raw: Raw) -> None:
    ns = await namespace(raw, [{"type": "Container", "max": {"memory": "1Gi"}}])
    status, body = await create_pod(
        raw, ns, "init", container("c"), init=[container("i", {"memory": "64Mi"}, {"memory": "2Gi"})]
    )
    assert status == 403, body
    assert body["message"] == 'pods "init" is forbidden: maximum memory usage per Container is 1Gi, but limit is 2Gi'


async def test_max_limit_request_ratio(raw: Raw) -> None:
    ns = await namespace(raw, [{"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}}])
    status, body = await create_pod(raw, ns, "ratio", container("c", {"cpu": "100m"}, {"cpu": "500m"}))
    assert status == 403, body
    assert body["message"] == (
        'pods "ratio" is forbidden: cpu max limit to request ratio per Container is 2, but provided ratio is 5.000000'
    )
    status, body = await create_pod(raw, ns, "unset", container("c"))
    assert status == 403, body
    assert body["message"] == (
        'pods "unset" is forbidden: cpu max limit to request ratio per Container is 2, '
        "but no request is specified or request is 0"
    )
    status, body = await create_pod(raw, ns, "even", container("c", {"cpu": "250m"}, {"cpu": "500m"}))
    assert status == 201, body


async def test_pod_totals_sum_containers(raw: Raw) -> None:
    ns = await namespace(raw, [{"type": "Pod", "max": {"memory": "1Gi"}, "min": {"memory": "100Mi"}}])
    half = {"memory": "600Mi"}
    status, body = await create_pod(raw, ns, "big", container("a", half, half), container("b", half, half))
    assert status == 403, body
    assert body["message"] == 'pods "big" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 1200Mi'
    # an init container counts as a maximum, not a sum
    status, body = await create_pod(
        raw, ns, "init-max", container("a", half, half), init=[container("i", {"memory": "1Gi"}, {"memory": "1Gi"})]
    )
    assert status == 201, body
    status, body = await create_pod(raw, ns, "none", container("a"))
    assert status == 403, body
    assert body["message"] == (
        'pods "none" is forbidden: [minimum memory usage per Pod is 100Mi.  No request is specified, '
        "maximum memory usage per Pod is 1Gi.  No limit is specified]"
    )


async def test_pod_updates_are_not_limited(raw: Raw) -> None:
    ns = await namespace(raw, [])
    status, body = await create_pod(raw, ns, "before", container("c"))
    assert status == 201, body
    status, body, _ = await raw.request(
        "POST",
        f"/api/v1/namespaces/{ns}/limitranges",
        {"metadata": {"name": "late"}, "spec": {"limits": [{"type": "Container", "min": {"cpu": "1"}}]}},
    )
    assert status == 201, body
    status, body, _ = await raw.request(
        "PATCH",
        f"/api/v1/namespaces/{ns}/pods/before",
        {"metadata": {"labels": {"touched": "yes"}}},
        content_type="application/merge-patch+json",
    )
    assert status == 200, body
    assert body["spec"]["containers"][0]["resources"] == {}


async def test_persistent_volume_claim_storage_bounds(raw: Raw) -> None:
    ns = await namespace(raw, [{"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "5Gi"}}])

    async def claim(name: str, size: str) -> tuple[int, Obj]:
        body = {
            "metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}},
        }
        status, answer, _ = await raw.request("POST", f"/api/v1/namespaces/{ns}/persistentvolumeclaims", body)
        return status, answer

    status, body = await claim("tiny", "500Mi")
    assert status == 403, body
    assert body["message"] == (
        'persistentvolumeclaims "tiny" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, '
        "but request is 500Mi"
    )
    assert body["details"] == {"name": "tiny", "kind": "persistentvolumeclaims"}
    status, body = await claim("huge", "10Gi")
    assert status == 403, body
    assert body["message"] == (
        'persistentvolumeclaims "huge" is forbidden: maximum storage usage per PersistentVolumeClaim is 5Gi, '
        "but request is 10Gi"
    )
    status, body = await claim("right", "2Gi")
    assert status == 201, body


async def test_invalid_pod_is_invalid_before_it_is_limited(raw: Raw) -> None:
    ns = await namespace(raw, [{"type": "Container", "min": {"cpu": "1"}}])
    status, body = await create_pod(raw, ns, "bad", {"name": "c", "resources": {"requests": {"cpu": "10m"}}})
    assert status == 422, body  # no image: validation answers before the validating plugins


async def test_limit_range_validation(raw: Raw) -> None:
    ns = await namespace(raw, [])
    path = f"/api/v1/namespaces/{ns}/limitranges"
    inverted = {"type": "Container", "min": {"cpu": "200m"}, "max": {"cpu": "100m"}}
    status, body, _ = await raw.request("POST", path, {"metadata": {"name": "bad"}, "spec": {"limits": [inverted]}})
    assert status == 422, body
    # the defaults (from max) are in place before validation, so they are reported too
    assert body["message"] == (
        'LimitRange "bad" is invalid: ['
        'spec.limits[0].min[cpu]: Invalid value: "200m": min value 200m is greater than max value 100m, '
        'spec.limits[0].defaultRequest[cpu]: Invalid value: "100m": min value 200m is greater than default request '
        "value 100m, "
        'spec.limits[0].default[cpu]: Invalid value: "200m": min value 200m is greater than default value 100m]'
    )
    pod_defaults = {"type": "Pod", "default": {"cpu": "1"}}
    claim_without_storage = {"type": "PersistentVolumeClaim", "max": {"cpu": "1"}}
    ratio = {"type": "Container", "maxLimitRequestRatio": {"memory": "500m"}}
    status, body, _ = await raw.request(
        "POST",
        path,
        {"metadata": {"name": "worse"}, "spec": {"limits": [pod_defaults, claim_without_storage, ratio, ratio]}},
    )
    assert status == 422, body
    assert [(c["field"], c["message"]) for c in body["details"]["causes"]] == [
        ("spec.limits[0].default", "Forbidden: may not be specified when `type` is 'Pod'"),
        (
            "spec.limits[1].limits",
            "Required value: either minimum or maximum storage value is required, but neither was provided",
        ),
        ("spec.limits[2].maxLimitRequestRatio[memory]", 'Invalid value: "500m": ratio 500m is less than 1'),
        ("spec.limits[3].type", 'Duplicate value: "Container"'),
        ("spec.limits[3].maxLimitRequestRatio[memory]", 'Invalid value: "500m": ratio 500m is less than 1'),
    ]


def test_kubectl_sees_limit_range_defaults(admin: Kubectl, raw: Raw) -> None:
    ns = asyncio.run(namespace(raw, []))
    manifest = {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "defaults"},
        "spec": {"limits": [{"type": "Container", "max": {"memory": "1Gi"}, "defaultRequest": {"cpu": "50m"}}]},
    }
    admin("create", "-n", ns, "-f", "-", stdin=json.dumps(manifest))
    described = [line.split() for line in admin("describe", "limitrange", "defaults", "-n", ns).stdout.splitlines()]
    # Type, Resource, Min, Max, Default Request, Default Limit, Max Limit/Request Ratio
    assert ["Container", "memory", "-", "1Gi", "1Gi", "1Gi", "-"] in described
    assert ["Container", "cpu", "-", "-", "50m", "-", "-"] in described
    admin("run", "web", "--image=nginx:1.25", "-n", ns)
    resources = json.loads(
        admin("get", "pod", "web", "-n", ns, "-o", "jsonpath={.spec.containers[0].resources}").stdout
    )
    assert resources == {"requests": {"cpu": "50m", "memory": "1Gi"}, "limits": {"memory": "1Gi"}}
    annotation = admin("get", "pod", "web", "-n", ns, "-o", "jsonpath={.metadata.annotations}").stdout
    assert json.loads(annotation)["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu, memory request for container web; memory limit for container web"
    )
