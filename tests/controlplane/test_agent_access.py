"""The agent's access objects, compared with caches before they are written: a
control plane restarted with N pull Clusters writes none of them; one someone
deleted or changed (a rule, a label, a binding's roleRef) is put back; the
approver and the cluster controller ensuring one new cluster at once write it once."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from controlplane.cluster_controller import access_drifted, agent_access
from controlplane.context import Context
from controlplane.options import Options
from karmada.kube import EventRecorder, KubeClient, from_kubeconfig
from karmada.kube.informer_factory import InformerFactory
from karmada.registration.access import (
    CHANGED,
    MISSING,
    ROLE_REF_CHANGED,
    access_drift,
    agent_rbac,
)
from localkube.metrics import parse_request_totals
from tests.programs import free_port, metric
from tests.pullmode import PullMode, wait_for
from tests.servers import ServerThread

Obj = dict[str, Any]
CLUSTERS = 20
ACCESS = ("namespaces", "clusterroles", "clusterrolebindings", "roles", "rolebindings")
WRITES = ("POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION")  # kube-apiserver's verb labels


# -- the comparison, a pure function ------------------------------------------------
def _desired(kind: str) -> Obj:
    return copy.deepcopy(next(o for o in agent_rbac("m1") if o["kind"] == kind))


def _edited(kind: str, edit: Callable[[Obj], None]) -> Obj:
    stored = _desired(kind)
    edit(stored)
    return stored


def _server_side(obj: Obj) -> None:
    """What a server and other writers add that the control plane does not own."""
    obj["metadata"].update(resourceVersion="7", uid="u", creationTimestamp="2026-01-01T00:00:00Z")
    obj["metadata"]["labels"]["someone.else/label"] = "x"
    obj["metadata"]["annotations"] = {"note": "kept"}
    for rule in obj.get("rules") or []:
        rule.setdefault("resourceNames", [])  # an empty list means what a missing one does
    for subject in obj.get("subjects") or []:
        subject["namespace"] = ""


@pytest.mark.parametrize(
    ("kind", "stored", "expected"),
    [
        ("ClusterRole", None, MISSING),
        ("ClusterRole", _desired("ClusterRole"), None),
        ("ClusterRole", _edited("ClusterRole", _server_side), None),
        ("RoleBinding", _edited("RoleBinding", _server_side), None),
        ("Namespace", _edited("Namespace", _server_side), None),
        ("ClusterRole", _edited("ClusterRole", lambda o: o["rules"][0]["verbs"].append("create")), CHANGED),
        ("Role", _edited("Role", lambda o: o["rules"].pop()), CHANGED),
        ("Role", _edited("Role", lambda o: o.pop("rules")), CHANGED),
        ("Namespace", _edited("Namespace", lambda o: o["metadata"]["labels"].popitem()), CHANGED),
        ("ClusterRole", _edited("ClusterRole", lambda o: o["metadata"].pop("labels")), CHANGED),
        ("RoleBinding", _edited("RoleBinding", lambda o: o["subjects"][0].update(name="intruder")), CHANGED),
        ("RoleBinding", _edited("RoleBinding", lambda o: o["subjects"].append(dict(o["subjects"][0]))), CHANGED),
        ("RoleBinding", _edited("RoleBinding", lambda o: o["roleRef"].update(name="admin")), ROLE_REF_CHANGED),
        ("ClusterRoleBinding", _edited("ClusterRoleBinding", lambda o: o["roleRef"].pop("apiGroup")), None),
        ("ClusterRoleBinding", _edited("ClusterRoleBinding", lambda o: o.pop("roleRef")), ROLE_REF_CHANGED),
    ],
)
def test_access_drift(kind: str, stored: Obj | None, expected: str | None) -> None:
    assert access_drift(_desired(kind), stored) == expected


def _without_kind(obj: Obj) -> Obj:
    return {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}  # as list items come


@pytest.mark.parametrize(
    ("kind", "event", "obj", "old", "expected"),
    [
        ("Role", "ADDED", _without_kind(_desired("Role")), None, []),  # a start's list, or our own write
        ("Role", "MODIFIED", _edited("Role", _server_side), _desired("Role"), []),
        ("Role", "DELETED", _desired("Role"), _desired("Role"), ["m1"]),
        ("Role", "MODIFIED", _edited("Role", lambda o: o["rules"].pop()), _desired("Role"), ["m1"]),
        ("RoleBinding", "MODIFIED", _edited("RoleBinding", lambda o: o["roleRef"].update(name="x")), None, ["m1"]),
        # the label gone: still the cluster's, by the object it replaces
        (
            "ClusterRole",
            "MODIFIED",
            _edited("ClusterRole", lambda o: o["metadata"].pop("labels")),
            _desired("ClusterRole"),
            ["m1"],
        ),
        # labelled for a cluster, but none of its access objects
        ("Role", "MODIFIED", _edited("Role", lambda o: o["metadata"].update(name="other")), None, []),
        ("Role", "DELETED", _edited("Role", lambda o: o["metadata"].pop("labels")), None, []),  # no one's
    ],
)
def test_access_events_queue_the_cluster_only_when_its_access_drifted(
    kind: str, event: str, obj: Obj, old: Obj | None, expected: list[str]
) -> None:
    assert access_drifted(kind)(event, obj, old) == expected


# -- the real control plane against one API server, restarted ------------------------------
def _pull_cluster(name: str) -> Obj:
    return {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name},
        "spec": {"syncMode": "Pull"},
    }


class Plane:
    """A control plane started and stopped by the test, its metrics on a port of its own."""

    def __init__(self, env: PullMode) -> None:
        self.env = env
        self.port = free_port()

    def start(self) -> None:
        self.env.start_controlplane(
            f"--metrics-bind-address=127.0.0.1:{self.port}",
            "--leader-elect-lease-duration=3s",
            "--leader-elect-renew-deadline=2s",
        )

    def stop(self) -> None:
        if self.env.controlplane is not None:
            self.env.controlplane.stop()
            self.env.controlplane = None

    def metric(self, series: str, **labels: str) -> float:
        """The sum of a sample of the control plane's /metrics (0 while it does not answer)."""
        return metric(self.port, series, **labels)

    def idle(self, reconciles: int) -> bool:
        """The cluster controller has done ``reconciles`` and has nothing queued."""
        done = self.metric("controller_runtime_reconcile_total", controller="cluster")
        return done >= reconciles and self.metric("workqueue_depth", name="cluster") == 0


@pytest.fixture(scope="module")
def plane(localkube: ServerThread, workdir: Path) -> Iterator[Plane]:
    env = PullMode(localkube, workdir).install()
    found = Plane(env)
    try:
        yield found
    finally:
        found.stop()


def _writes(env: PullMode) -> dict[str, int]:
    """Writes the API server counted so far, per resource of the agents' access."""
    totals = parse_request_totals(env.admin("get", "--raw", "/metrics").stdout)
    found = dict.fromkeys(ACCESS, 0)
    for (verb, _group, resource, subresource, _code), count in totals.items():
        if verb in WRITES and resource in found and not subresource:
            found[resource] += count
    return found


def _access_of(env: PullMode, cluster: str) -> list[Obj | None]:
    """The cluster's access objects as stored (None for those missing)."""
    found: list[Obj | None] = []
    for obj in agent_rbac(cluster):
        meta = obj["metadata"]
        where = ["-n", meta["namespace"]] if meta.get("namespace") else []
        got = env.admin("get", obj["kind"].lower(), meta["name"], *where, "-o", "json", "--ignore-not-found").stdout
        found.append(json.loads(got) if got.strip() else None)
    return found


def _converged(env: PullMode, cluster: str) -> bool:
    return all(access_drift(d, s) is None for d, s in zip(agent_rbac(cluster), _access_of(env, cluster), strict=True))


def test_a_restart_with_n_pull_clusters_writes_no_access(plane: Plane) -> None:
    env = plane.env
    names = [f"pull-{i}" for i in range(CLUSTERS)]
    items = [_pull_cluster(name) for name in names]
    env.admin("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    plane.start()
    wait_for(lambda: all(_converged(env, name) for name in (names[0], names[-1])), timeout=60, what="first access")
    wait_for(lambda: plane.idle(CLUSTERS), timeout=60, what="every cluster reconciled")
    plane.stop()

    before = _writes(env)
    plane.start()
    wait_for(lambda: plane.idle(CLUSTERS), timeout=60, what="every cluster reconciled after the restart")
    # one cluster more, after the restart: its access shows the restarted control plane writes
    env.admin("apply", "-f", "-", stdin=json.dumps(_pull_cluster("late")))
    wait_for(lambda: _converged(env, "late"), timeout=60, what="the late cluster's access")
    wait_for(lambda: plane.idle(CLUSTERS + 1), timeout=60, what="the late cluster reconciled")
    after = _writes(env)
    written = {resource: after[resource] - before[resource] for resource in ACCESS}
    # the late cluster's alone: its execution namespace created, then labelled, and its six grants
    assert written == {"namespaces": 2, "clusterroles": 1, "clusterrolebindings": 1, "roles": 2, "rolebindings": 2}
    assert all(_converged(env, name) for name in names)


def test_deleted_or_changed_access_is_put_back(plane: Plane) -> None:
    env = plane.env
    if env.controlplane is None:
        plane.start()
    env.admin("apply", "-f", "-", stdin=json.dumps(_pull_cluster("edited")))
    wait_for(lambda: _converged(env, "edited"), timeout=60, what="the access of cluster edited")
    prefix = "system:karmada:edited:agent"
    env.admin("delete", "rolebinding", f"{prefix}-work", "-n", "karmada-es-edited")
    role = json.loads(env.admin("get", "clusterrole", prefix, "-o", "json").stdout)
    role["rules"].append({"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]})
    env.admin("replace", "-f", "-", stdin=json.dumps(role))
    env.admin("label", "role", f"{prefix}-lease", "-n", "karmada-cluster", "karmada.io/system-")
    wait_for(lambda: _converged(env, "edited"), timeout=60, what="the access put back")
    # a binding of the agent's name to another role, made while no control plane runs: the API
    # forbids changing a roleRef, so the control plane deletes the binding and creates it again
    plane.stop()
    env.admin("delete", "clusterrolebinding", prefix)
    binding = next(o for o in agent_rbac("edited") if o["kind"] == "ClusterRoleBinding")
    binding["roleRef"]["name"] = "cluster-admin"
    env.admin("create", "-f", "-", stdin=json.dumps(binding))
    plane.start()
    wait_for(lambda: _converged(env, "edited"), timeout=60, what="the binding to the agent's role again")
    log = (env.workdir / "controlplane.log").read_text()
    assert f"ClusterRoleBinding {prefix} roleRef changed; applying" in log


async def test_two_ensures_of_one_new_cluster_at_once_write_its_access_once(plane: Plane) -> None:
    # the approver (its CSR) and the cluster controller (its Cluster) see a new cluster together
    env = plane.env
    async with KubeClient(from_kubeconfig(env.kubeconfig)) as client:
        informers = InformerFactory(client)
        context = Context(client, informers, EventRecorder(client, "test"), Options())
        access = agent_access(context)
        assert agent_access(context) is access, "one per set of caches"
        await informers.start(sync_timeout=20)
        try:
            before = _writes(env)
            await asyncio.gather(access.ensure("twice"), access.ensure("twice"), access.ensure("other"))
            after = _writes(env)
        finally:
            await informers.stop()
    written = {resource: after[resource] - before[resource] for resource in ACCESS}
    assert written == {"namespaces": 2, "clusterroles": 2, "clusterrolebindings": 2, "roles": 4, "rolebindings": 4}
    assert _converged(env, "twice") and _converged(env, "other")
