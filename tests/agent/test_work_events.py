"""The events of status reflection and replica interpretation, Karmada's:
``ReflectStatusSucceed``/``InterpretHealthSucceed`` (and their failures) on each
Work, from the agent for a Pull member and from the control plane for a Push
one (the same :mod:`karmada.members.execution`), and ``GetReplicasSucceed`` on
the template. One event per real change: resyncs every second add none."""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from karmada.api.names import work_name
from karmada.members.work_events import (
    WorkEvent,
    interpret_health_failed,
    reflect_status_failed,
    status_events,
)
from localkube.simulation import SimulationConfig
from tests.programs import free_port, metric
from tests.pullmode import PullMode, wait_for
from tests.servers import Kubectl, ServerThread, start_server

WHAT = "Deployment/default/web"
REFLECTED = WorkEvent("Normal", "ReflectStatusSucceed", "Reflect status for object(Deployment/default/web) succeed.")
HEALTHY = WorkEvent(
    "Normal", "InterpretHealthSucceed", "Interpret health of object(Deployment/default/web) as healthy."
)
UNHEALTHY = WorkEvent(
    "Normal", "InterpretHealthSucceed", "Interpret health of object(Deployment/default/web) as unhealthy."
)
REPLICAS_MESSAGE = "Get replicas of resource template successfully."
READY = {"status": {"readyReplicas": 2}, "health": "Healthy"}
STARTING = {"status": {"readyReplicas": 1}, "health": "Unhealthy"}


@pytest.mark.parametrize(
    ("previous", "entry", "reflected", "health_rule", "expected"),
    [
        (None, READY, True, True, [REFLECTED, HEALTHY]),  # the first report
        (None, STARTING, True, True, [REFLECTED, UNHEALTHY]),
        (READY, READY, True, True, []),  # a resync, a restarted agent
        (STARTING, {"status": {"readyReplicas": 2}, "health": "Unhealthy"}, True, True, [REFLECTED]),
        (STARTING, {"status": {"readyReplicas": 1}, "health": "Healthy"}, True, True, [HEALTHY]),
        (STARTING, READY, True, True, [REFLECTED, HEALTHY]),
        ({"health": "Healthy"}, {"status": {}, "health": "Healthy"}, True, True, [REFLECTED]),  # status appeared
        (None, {"health": "Healthy"}, True, True, [REFLECTED, HEALTHY]),  # a kind reflecting no status
        (None, READY, False, True, [HEALTHY]),  # reflection failed: its Warning instead
        (None, READY, True, False, [REFLECTED]),  # no health rule: healthy without an event
        (READY, {**READY, "health": "Unknown"}, True, True, []),  # health failed: its Warning instead
        ({**READY, "health": "Unknown"}, READY, True, True, [HEALTHY]),  # recovered
    ],
)
def test_status_events(
    previous: dict[str, Any] | None,
    entry: dict[str, Any],
    reflected: bool,
    health_rule: bool,
    expected: list[WorkEvent],
) -> None:
    assert status_events(WHAT, previous, entry, reflected=reflected, health_rule=health_rule) == expected


def test_failure_messages() -> None:
    assert reflect_status_failed(WHAT, "boom") == WorkEvent(
        "Warning", "ReflectStatusFailed", "Reflect status for object(Deployment/default/web) failed, err: boom."
    )
    assert interpret_health_failed(WHAT, ValueError("no")) == WorkEvent(
        "Warning", "InterpretHealthFailed", "Interpret health of object(Deployment/default/web) failed, err: no."
    )


def _simulating() -> Iterator[ServerThread]:
    yield from start_server(port=0, simulation=SimulationConfig(nodes=2, node_prefix="m", workloads=True))


@pytest.fixture(scope="module")
def member1() -> Iterator[ServerThread]:
    yield from _simulating()


@pytest.fixture(scope="module")
def member2() -> Iterator[ServerThread]:
    yield from _simulating()


class Env:
    """The control plane (Push member2 inside) and member1's agent, both resyncing every second."""

    def __init__(self, karmada: PullMode) -> None:
        self.karmada = karmada
        self.plane_port, self.agent_port = free_port(), free_port()
        self.members: list[Kubectl] = []

    def reconciles(self) -> tuple[float, float, float]:
        """The execution controllers' reconciles so far (agent, control plane) and the detector's."""
        return (
            metric(self.agent_port, "controller_runtime_reconcile_total", controller="execution"),
            metric(self.plane_port, "controller_runtime_reconcile_total", controller="execution"),
            metric(self.plane_port, "controller_runtime_reconcile_total", controller="detector"),
        )

    def await_resyncs(self, works: int) -> None:
        """Until each execution controller has reconciled ``works`` more times (its resyncs)."""
        agent, plane, _ = self.reconciles()
        wait_for(
            lambda: self.reconciles()[0] >= agent + works and self.reconciles()[1] >= plane + works,
            timeout=30,
            what=f"{works} more Work reconciles in the agent and the control plane",
        )


@pytest.fixture(scope="module")
def env(localkube: ServerThread, workdir: Path, member1: ServerThread, member2: ServerThread) -> Iterator[Env]:
    karmada = PullMode(localkube, workdir).install()
    found = Env(karmada)
    karmada.start_controlplane("--resync-period=1s", f"--metrics-bind-address=127.0.0.1:{found.plane_port}")
    try:
        karmada.register(member1, "member1")
        karmada.start_agent(
            member1, "member1", "--resync-period=1s", f"--metrics-bind-address=127.0.0.1:{found.agent_port}"
        )
        karmada.join(member2, "member2")
        for server, name in ((member1, "member1"), (member2, "member2")):
            wait_for(functools.partial(_is_ready, karmada, name), timeout=40, what=f"{name} Ready")
            found.members.append(karmada.member_admin(server, name))
        yield found
    finally:
        karmada.stop()


def events(karmada: PullMode) -> Counter[tuple[str, str, str, str, str, str]]:
    """Every recorded event, as ``kubectl get events`` lists it: (namespace, kind, name, type,
    reason, message) -> count."""
    found: Counter[tuple[str, str, str, str, str, str]] = Counter()
    for namespace in ("default", "karmada-es-member1", "karmada-es-member2"):
        listed = json.loads(karmada.admin("get", "events", "-n", namespace, "-o", "json").stdout)
        for event in listed["items"]:
            involved = event["involvedObject"]
            key = (namespace, involved["kind"], involved["name"], event["type"], event["reason"], event["message"])
            found[key] += int(event.get("count") or 1)
    return found


def manifest_status(karmada: PullMode, cluster: str) -> dict[str, Any]:
    work = karmada.admin(
        "get",
        "work",
        work_name("Deployment", "web", "default"),
        "-n",
        f"karmada-es-{cluster}",
        "-o",
        "json",
        check=False,
    )
    if work.returncode:
        return {}
    statuses = (json.loads(work.stdout).get("status") or {}).get("manifestStatuses") or [{}]
    return dict(statuses[0])


def settled(karmada: PullMode, replicas: int) -> bool:
    """Both members run all replicas of the template's generation, and their Works say so."""
    generation = json.loads(karmada.admin("get", "deploy", "web", "-o", "json").stdout)["metadata"]["generation"]
    for cluster in ("member1", "member2"):
        found = manifest_status(karmada, cluster)
        status = found.get("status") or {}
        if found.get("health") != "Healthy" or status.get("availableReplicas") != replicas:
            return False
        if status.get("resourceTemplateGeneration") != generation:
            return False
    return True


DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "10m"}}}]},
        },
    },
}
POLICY = {
    "apiVersion": "policy.karmada.io/v1alpha1",
    "kind": "PropagationPolicy",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {
        "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
        "placement": {
            "clusterAffinity": {"clusterNames": ["member1", "member2"]},
            "replicaScheduling": {"replicaSchedulingType": "Duplicated"},
        },
    },
}


def test_events_of_a_propagated_deployment_one_per_real_change(env: Env) -> None:
    karmada = env.karmada
    karmada.admin("apply", "-f", "-", stdin=yaml.safe_dump_all([POLICY, DEPLOYMENT]))
    wait_for(lambda: settled(karmada, 2), timeout=60, what="web running in both members")
    work = work_name("Deployment", "web", "default")
    replicas_event = ("default", "Deployment", "web", "Normal", "GetReplicasSucceed", REPLICAS_MESSAGE)
    wanted = [
        replicas_event,
        *(
            (f"karmada-es-{cluster}", "Work", work, event.type, event.reason, event.message)
            for cluster in ("member1", "member2")
            for event in (REFLECTED, HEALTHY)
        ),
    ]
    wait_for(lambda: all(key in events(karmada) for key in wanted), what="the events of both Works and the template")
    assert events(karmada)[replicas_event] == 1

    # a real change: the replicas, interpreted again
    karmada.admin("scale", "deploy", "web", "--replicas=3")
    wait_for(lambda: events(karmada)[replicas_event] == 2, what="GetReplicasSucceed for the new replicas")
    wait_for(lambda: settled(karmada, 3), timeout=60, what="3 replicas in both members")
    # the template reconciled again (a label), its replicas unchanged: no GetReplicasSucceed
    karmada.admin("label", "deploy", "web", "tier=front")
    wait_for(functools.partial(_binding_follows, karmada), what="the binding built from the labelled template")
    for member in env.members:
        wait_for(functools.partial(_labelled, member), what="the label in the members")

    # resyncs: every Work reconciled again and again, and nothing more recorded
    env.await_resyncs(3)
    before = events(karmada)
    env.await_resyncs(4)
    after = events(karmada)
    assert after == before, f"events added by resyncs: {after - before}"
    assert after[replicas_event] == 2


def _binding_follows(karmada: PullMode) -> bool:
    """The binding's resource reference names the template's current resourceVersion."""
    template = json.loads(karmada.admin("get", "deploy", "web", "-o", "json").stdout)
    binding = json.loads(karmada.admin("get", "rb", "web-deployment", "-o", "json").stdout)
    return bool(binding["spec"]["resource"].get("resourceVersion") == template["metadata"]["resourceVersion"])


def _is_ready(karmada: PullMode, name: str) -> bool:
    return karmada.ready(name) == "True"


def _labelled(member: Kubectl) -> bool:
    return "tier=front" in member("get", "deploy", "web", "--show-labels").stdout
