"""RuntimeClass admission, as kube-apiserver v1.32 applies it to Pods.

Mirrors kubernetes/kubernetes plugin/pkg/admission/runtimeclass/admission_test.go
(TestSetOverhead, TestSetScheduling, TestValidate, TestAdmit) and
pkg/util/tolerations/tolerations_test.go (TestMergeTolerations).
"""

from __future__ import annotations

import itertools
from typing import Any

from localkube.admission_runtimeclass import merge_tolerations
from tests.servers import Raw

Obj = dict[str, Any]
PODS = "/api/v1/namespaces/default/pods"
CLASSES = "/apis/node.k8s.io/v1/runtimeclasses"
DEFAULT_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
]
_names = itertools.count()


async def runtime_class(raw: Raw, **fields: Any) -> str:
    name = f"rc-{next(_names)}"
    status, body, _ = await raw.request("POST", CLASSES, {"metadata": {"name": name}, "handler": "runsc", **fields})
    assert status == 201, body
    return name


async def create_pod(raw: Raw, name: str, **spec: Any) -> tuple[int, Obj]:
    body = {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}], **spec}}
    status, answer, _ = await raw.request("POST", PODS, body)
    return status, answer


async def test_missing_runtime_class_is_refused(raw: Raw) -> None:
    status, body = await create_pod(raw, "lost", runtimeClassName="nowhere")
    assert status == 403, body
    assert body["message"] == 'pods "lost" is forbidden: pod rejected: RuntimeClass "nowhere" not found'
    assert body["reason"] == "Forbidden" and body["details"] == {"name": "lost", "kind": "pods"}


async def test_overhead_and_scheduling_are_set_on_the_pod(raw: Raw) -> None:
    name = await runtime_class(
        raw,
        overhead={"podFixed": {"cpu": "250m", "memory": "120Mi"}},
        scheduling={
            "nodeSelector": {"sandbox": "gvisor"},
            "tolerations": [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}],
        },
    )
    status, pod = await create_pod(raw, "sandboxed", runtimeClassName=name, nodeSelector={"disk": "ssd"})
    assert status == 201, pod
    spec = pod["spec"]
    assert spec["overhead"] == {"cpu": "250m", "memory": "120Mi"}
    assert spec["nodeSelector"] == {"disk": "ssd", "sandbox": "gvisor"}
    assert spec["tolerations"] == [
        *DEFAULT_TOLERATIONS,
        {"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"},
    ]
    # the same overhead stated by the client is accepted
    status, pod = await create_pod(
        raw,
        "stated",
        runtimeClassName=name,
        overhead={"cpu": "0.25", "memory": "120Mi"},
        nodeSelector={"sandbox": "gvisor"},
    )
    assert status == 201, pod


async def test_conflicting_overhead_is_refused(raw: Raw) -> None:
    name = await runtime_class(raw, overhead={"podFixed": {"cpu": "250m"}})
    status, body = await create_pod(raw, "greedy", runtimeClassName=name, overhead={"cpu": "100m"})
    assert status == 403, body
    assert body["message"] == (
        "pods \"greedy\" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
    )


async def test_overhead_without_class_overhead_is_refused(raw: Raw) -> None:
    plain = await runtime_class(raw)
    for name, extra in (("classless", {}), ("plain-class", {"runtimeClassName": plain})):
        status, body = await create_pod(raw, name, overhead={"cpu": "100m"}, **extra)
        assert status == 403, body
        assert body["message"] == (
            f'pods "{name}" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass '
            "defined Overhead"
        )


async def test_node_selector_conflict_is_refused(raw: Raw) -> None:
    name = await runtime_class(raw, scheduling={"nodeSelector": {"sandbox": "gvisor"}})
    status, body = await create_pod(raw, "clash", runtimeClassName=name, nodeSelector={"sandbox": "kata"})
    assert status == 403, body
    assert body["message"] == (
        'pods "clash" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = gvisor; '
        "pod.spec.nodeSelector[sandbox] = kata"
    )


async def test_class_without_scheduling_changes_nothing_else(raw: Raw) -> None:
    name = await runtime_class(raw)
    status, pod = await create_pod(raw, "simple", runtimeClassName=name)
    assert status == 201, pod
    assert "overhead" not in pod["spec"] and "nodeSelector" not in pod["spec"]
    assert pod["spec"]["tolerations"] == DEFAULT_TOLERATIONS


def test_merge_tolerations_keeps_the_broadest() -> None:
    exists_all = {"operator": "Exists"}
    key_equal = {"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}
    key_exists = {"key": "k", "operator": "Exists", "effect": "NoSchedule"}
    short = {"key": "t", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10}
    long = {"key": "t", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}
    assert merge_tolerations([key_equal], [key_exists]) == [key_exists]
    assert merge_tolerations([key_exists], [key_equal]) == [key_exists]
    assert merge_tolerations([short], [long]) == [long]
    assert merge_tolerations([key_equal, short], [exists_all]) == [exists_all]
    assert merge_tolerations([key_equal], [key_equal]) == [key_equal]
    other = {"key": "other", "operator": "Exists"}
    assert merge_tolerations([key_equal], [other]) == [key_equal, other]
