"""Status back-flow from a simulating member (localkube runs the workload
controllers): every kind the interpreter knows is reflected into the Work's
``manifestStatuses`` with its health, at once when the member object changes;
the status is not written again while nothing changes; and the API writes the
agent makes for one Deployment, from its Work to all replicas ready (one
event per change of its reflected status or health)."""

from __future__ import annotations

import asyncio
import collections
import functools
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from karmada.interpreter import health, status
from localkube.simulation import SimulationConfig
from tests.agent.flow import NS, apply, defaulted, get_work, manifest_status, ready_member, wait_condition, work
from tests.pullmode import PullMode, wait_for
from tests.servers import Kubectl, Raw, ServerThread, start_server

POD_SPEC = {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "10m"}}}]}


@pytest.fixture(scope="module")
def member1() -> Iterator[ServerThread]:
    yield from start_server(
        port=0, simulation=SimulationConfig(nodes=2, node_prefix="m", workloads=True, shutdown_seconds=0.2)
    )


def _meta(name: str) -> dict[str, Any]:
    return {"name": name, "namespace": "default"}


def _template(name: str) -> dict[str, Any]:
    return {"metadata": {"labels": {"app": name}}, "spec": POD_SPEC}


def _workload(kind: str, name: str, **spec: Any) -> dict[str, Any]:
    body = {"selector": {"matchLabels": {"app": name}}, "template": _template(name), **spec}
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": _meta(name), "spec": body}


MANIFESTS: list[tuple[dict[str, Any], str, dict[str, Any] | None]] = [
    # (manifest, resource as kubectl names it, member status to write, for kinds nothing simulates)
    (_workload("Deployment", "st-deploy", replicas=2), "deployment", None),
    (_workload("StatefulSet", "st-sts", replicas=2, serviceName="st-sts"), "statefulset", None),
    (_workload("ReplicaSet", "st-rs", replicas=2), "replicaset", None),
    (_workload("DaemonSet", "st-ds"), "daemonset", None),
    (
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": _meta("st-job"),
            "spec": {"template": {"spec": {**POD_SPEC, "restartPolicy": "Never"}}},
        },
        "job",
        None,
    ),
    (
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": _meta("st-cron"),
            "spec": {
                "schedule": "0 0 1 1 *",
                "jobTemplate": {"spec": {"template": {"spec": {**POD_SPEC, "restartPolicy": "Never"}}}},
            },
        },
        "cronjob",
        {"lastScheduleTime": "2026-01-01T00:00:00Z"},
    ),
    ({"apiVersion": "v1", "kind": "Pod", "metadata": _meta("st-pod"), "spec": POD_SPEC}, "pod", None),
    (
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": _meta("st-svc"),
            "spec": {"type": "LoadBalancer", "selector": {"app": "x"}, "ports": [{"port": 80}]},
        },
        "service",
        {"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}},
    ),
    (
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "Ingress",
            "metadata": _meta("st-ing"),
            "spec": {"defaultBackend": {"service": {"name": "st-svc", "port": {"number": 80}}}},
        },
        "ingress",
        {"loadBalancer": {"ingress": [{"hostname": "lb.example.com"}]}},
    ),
    (
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": _meta("st-pvc"),
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        },
        "pvc",
        {"phase": "Bound"},
    ),
    (
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": _meta("st-pdb"),
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "nothing"}}},
        },
        "pdb",
        {"currentHealthy": 3, "desiredHealthy": 1, "disruptionsAllowed": 2, "expectedPods": 3},
    ),
    (
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": _meta("st-hpa"),
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "st-deploy"},
                "minReplicas": 1,
                "maxReplicas": 4,
            },
        },
        "hpa",
        {"currentReplicas": 2, "desiredReplicas": 3},
    ),
]


def _expected(obj: dict[str, Any]) -> dict[str, Any]:
    """What the Work should say about a member object: Karmada's interpretation of it."""
    reflected = status.reflect_status(obj)
    entry: dict[str, Any] = {"health": "Healthy" if health.interpret_health(obj) else "Unhealthy"}
    if reflected is not None:
        entry["status"] = reflected
    return entry


def _member_object(member: Kubectl, resource: str, name: str) -> dict[str, Any]:
    return dict(json.loads(member("get", resource, name, "-o", "json").stdout))


def _reflected(pull_mode: PullMode, name: str) -> dict[str, Any] | None:
    found = manifest_status(pull_mode, name)
    if found is None:
        return None
    return {key: found[key] for key in ("status", "health") if key in found}


def _in_step(pull_mode: PullMode, member: Kubectl, resource: str, name: str) -> bool:
    return _reflected(pull_mode, name) == _expected(_member_object(member, resource, name))


def _healthy(pull_mode: PullMode, name: str) -> bool:
    return (manifest_status(pull_mode, name) or {}).get("health") == "Healthy"


def test_every_known_kind_reflects_status_and_health(pull_mode: PullMode, member1: ServerThread) -> None:
    member = ready_member(pull_mode, member1)
    for manifest, _, _ in MANIFESTS:
        apply(pull_mode, work(manifest["metadata"]["name"], defaulted(pull_mode, manifest)))
    for manifest, resource, _ in MANIFESTS:
        name = manifest["metadata"]["name"]
        wait_condition(pull_mode, name, "Applied", "True")
        identifier = wait_for(functools.partial(manifest_status, pull_mode, name))["identifier"]
        assert (identifier["kind"], identifier["name"], identifier["namespace"]) == (manifest["kind"], name, "default")
        wait_for(functools.partial(_in_step, pull_mode, member, resource, name), what=f"{name} status reflected")
    # the simulated workloads end up running, and their Works say so
    for name in ("st-deploy", "st-sts", "st-rs", "st-ds", "st-pod"):
        wait_for(functools.partial(_healthy, pull_mode, name), what=f"{name} Healthy")
    assert (manifest_status(pull_mode, "st-deploy") or {})["status"]["readyReplicas"] == 2
    job = wait_for(lambda: ((manifest_status(pull_mode, "st-job") or {}).get("status") or {}).get("succeeded"))
    assert job == 1
    # status written in the member reaches the Work from the member's watch, at once
    for manifest, resource, written in MANIFESTS:
        if written is None:
            continue
        name = manifest["metadata"]["name"]
        member("patch", resource, name, "--subresource=status", "--type=merge", "-p", json.dumps({"status": written}))
        started = time.monotonic()
        wait_for(functools.partial(_in_step, pull_mode, member, resource, name), timeout=5, what=f"{name} reflected")
        assert time.monotonic() - started < 3, f"{name}: the change took a resync, not the watch"
        assert _reflected(pull_mode, name) == _expected(_member_object(member, resource, name))
    for name in ("st-svc", "st-ing", "st-pvc", "st-pdb"):
        assert (manifest_status(pull_mode, name) or {})["health"] == "Healthy", name
    # nothing changes any more: no Work is written again
    versions = {m["metadata"]["name"]: (get_work(pull_mode, m["metadata"]["name"]) or {}) for m, _, _ in MANIFESTS}
    time.sleep(2)
    for name, before in versions.items():
        after = get_work(pull_mode, name) or {}
        assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"], name
    # the agent did all of it without loading pydantic or cryptography (its memory: benchmarks/README.md)
    maps = Path(f"/proc/{pull_mode.agents['member1'].pid}/maps").read_text()
    assert "pydantic_core" not in maps and "cryptography" not in maps


class Watch:
    """A watch read for some seconds on a thread (while the test drives kubectl)."""

    def __init__(self, raw: Raw, path: str, seconds: float) -> None:
        self.events: list[dict[str, Any]] = []
        self.thread = threading.Thread(target=self._run, args=(raw, path, seconds), daemon=True)
        self.thread.start()

    def _run(self, raw: Raw, path: str, seconds: float) -> None:
        _, self.events = asyncio.run(raw.watch(path, seconds))

    def result(self) -> list[dict[str, Any]]:
        self.thread.join()
        return self.events


def test_writes_for_one_deployment(
    pull_mode: PullMode, member1: ServerThread, capsys: pytest.CaptureFixture[str]
) -> None:
    """Counts the agent's API writes for one Deployment Work, from create to all replicas ready."""
    member = ready_member(pull_mode, member1)
    control = Raw(pull_mode.server, pull_mode.kubeconfig)
    member_raw = Raw(member1, member.kubeconfig)
    seconds = 8.0
    works = Watch(control, f"/apis/work.karmada.io/v1alpha1/namespaces/{NS}/works?watch=1", seconds)
    work_events = Watch(control, f"/api/v1/namespaces/{NS}/events?watch=1", seconds)
    template_events = Watch(control, "/api/v1/namespaces/default/events?watch=1", seconds)
    deployments = Watch(member_raw, "/apis/apps/v1/namespaces/default/deployments?watch=1", seconds)
    time.sleep(0.5)  # the watches are open
    apply(pull_mode, work("counted", defaulted(pull_mode, _workload("Deployment", "counted", replicas=3))))
    wait_for(
        lambda: (
            ((manifest_status(pull_mode, "counted") or {}).get("status") or {}).get("availableReplicas") == 3
            and (manifest_status(pull_mode, "counted") or {}).get("health") == "Healthy"
        ),
        what="all replicas ready in the Work",
    )
    work_writes = [e for e in works.result() if e["object"]["metadata"]["name"] == "counted"]
    status_writes = [e for e in work_writes if e["type"] == "MODIFIED"]
    events = [
        e
        for e in [*work_events.result(), *template_events.result()]
        if e["object"].get("involvedObject", {}).get("name") == "counted"
    ]
    member_events = [e for e in deployments.result() if e["object"]["metadata"]["name"] == "counted"]
    generations = {e["object"]["metadata"].get("generation") for e in member_events}
    status_changes = len([e for e in member_events if e["type"] == "MODIFIED"])
    member_writes = len([e for e in member_events if e["type"] == "ADDED"])
    with capsys.disabled():
        print(
            f"\nwrites for one Deployment Work: {len(status_writes)} Work status writes, {member_writes} member "
            f"writes, {len(events)} event writes ({[e['object']['reason'] for e in events]}); the member "
            f"Deployment changed {status_changes} times"
        )
    assert member_writes == 1 and generations == {1}, "one create in the member, no updates"
    # one write with Applied (and Dispatching), then one per change of the reflected status at most
    assert 1 <= len(status_writes) <= 1 + status_changes
    reasons = collections.Counter(e["object"]["reason"] for e in events)
    assert set(reasons) <= {"WorkDispatching", "SyncSucceed", "ReflectStatusSucceed", "InterpretHealthSucceed"}
    assert reasons["WorkDispatching"] <= 1 and reasons["SyncSucceed"] <= 1, "once, not per status change"
    assert reasons["ReflectStatusSucceed"] <= len(status_writes), "one per change of the reflected status"
    assert reasons["InterpretHealthSucceed"] <= 2, "Unhealthy while starting, then Healthy"


def test_deleting_the_work_removes_the_workload_and_its_pods(pull_mode: PullMode, member1: ServerThread) -> None:
    member = ready_member(pull_mode, member1)
    apply(pull_mode, work("doomed", defaulted(pull_mode, _workload("Deployment", "doomed", replicas=2))))
    wait_for(functools.partial(_healthy, pull_mode, "doomed"), what="doomed running")
    assert member("get", "pods", "-l", "app=doomed", "-o", "name").stdout.count("pod/") == 2
    pull_mode.admin("delete", "work", "doomed", "-n", NS, "--wait=false")
    wait_for(lambda: get_work(pull_mode, "doomed") is None, what="Work gone")
    assert member("get", "deploy", "doomed", check=False).returncode == 1
    # deleted in the background: the ReplicaSet and the Pods follow
    wait_for(lambda: member("get", "rs,pods", "-l", "app=doomed", "-o", "name").stdout == "", what="dependents gone")


def test_a_restarted_agent_writes_nothing_for_works_in_step(pull_mode: PullMode, member1: ServerThread) -> None:
    member = ready_member(pull_mode, member1)
    apply(pull_mode, work("steady", defaulted(pull_mode, _workload("Deployment", "steady", replicas=2))))
    wait_for(functools.partial(_healthy, pull_mode, "steady"), what="steady running")
    time.sleep(1)  # the last status change has landed
    work_version = (get_work(pull_mode, "steady") or {})["metadata"]["resourceVersion"]
    member_version = member("get", "deploy", "steady", "-o", "jsonpath={.metadata.resourceVersion}").stdout
    pull_mode.agents["member1"].stop()
    apply(pull_mode, work("meanwhile", defaulted(pull_mode, _workload("Deployment", "meanwhile", replicas=1))))
    pull_mode.start_agent(member1, "member1")
    wait_condition(pull_mode, "meanwhile", "Applied", "True", timeout=40)  # the new agent has caught up
    time.sleep(1)
    assert (get_work(pull_mode, "steady") or {})["metadata"]["resourceVersion"] == work_version
    assert member("get", "deploy", "steady", "-o", "jsonpath={.metadata.resourceVersion}").stdout == member_version
