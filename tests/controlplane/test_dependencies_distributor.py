"""The dependencies distributor end to end: a pull-mode Karmada (control plane
and three agents as processes), workloads with ``propagateDeps: true``, and
their ConfigMaps and Secrets checked in the member clusters with the real
kubectl. Each test uses its own names, so they share one fleet."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from tests.pullmode import PullMode, wait_for
from tests.servers import Kubectl, ServerThread

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]
MEMBERS = ("member1", "member2", "member3")
TIMEOUT = 40


@pytest.fixture(scope="module")
def fleet(
    localkube: ServerThread, workdir: Path, member1: ServerThread, member2: ServerThread, member3: ServerThread
) -> Iterator[tuple[PullMode, dict[str, Kubectl]]]:
    env = PullMode(localkube, workdir).install()
    env.start_controlplane()
    try:
        servers = {"member1": member1, "member2": member2, "member3": member3}
        for name, server in servers.items():
            env.register(server, name)
            env.start_agent(server, name)
        for name in MEMBERS:
            wait_for(partial(_ready, env, name), timeout=30, what=f"{name} Ready")
        yield env, {name: env.member_admin(server, name) for name, server in servers.items()}
    finally:
        env.stop()


def _ready(env: PullMode, name: str) -> bool:
    return env.ready(name) == "True"


def _apply(env: PullMode, *objects: dict[str, Any]) -> None:
    env.admin("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objects)}))


def _deployment(name: str, configmaps: tuple[str, ...] = (), secrets: tuple[str, ...] = ()) -> dict[str, Any]:
    volumes = [{"name": f"c{i}", "configMap": {"name": c}} for i, c in enumerate(configmaps)]
    volumes += [{"name": f"s{i}", "secret": {"secretName": s}} for i, s in enumerate(secrets)]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}], "volumes": volumes},
            },
        },
    }


def _policy(name: str, kind: str, target: str, clusters: list[str], deps: bool = True, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            **({"propagateDeps": True} if deps else {}),
            "resourceSelectors": [
                {"apiVersion": "apps/v1" if kind == "Deployment" else "v1", "kind": kind, "name": target}
            ],
            "placement": {"clusterAffinity": {"clusterNames": clusters}},
            **extra,
        },
    }


def _configmap(name: str, value: str = "1") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": {"v": value},
    }


def _secret(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": "default"},
        "stringData": {"password": "do-not-log-me"},
    }


def _where(members: dict[str, Kubectl], kind: str, name: str) -> set[str]:
    found = set()
    for cluster, kubectl in members.items():
        out = kubectl("get", kind, name, "-n", "default", "--ignore-not-found", "-o", "name").stdout
        if out.strip():
            found.add(cluster)
    return found


def _await_in(members: dict[str, Kubectl], kind: str, name: str, clusters: set[str]) -> None:
    wait_for(
        lambda: _where(members, kind, name) == clusters,
        timeout=TIMEOUT,
        interval=0.5,
        what=f"{kind} {name} in exactly {sorted(clusters)} (now {sorted(_where(members, kind, name))})",
    )


def _binding(env: PullMode, name: str) -> dict[str, Any] | None:
    out = env.admin("get", "resourcebinding", name, "-n", "default", "-o", "json", "--ignore-not-found").stdout
    return json.loads(out) if out.strip() else None


def _events(env: PullMode, reason: str) -> list[dict[str, Any]]:
    out = env.admin("get", "events", "-n", "default", "--field-selector", f"reason={reason}", "-o", "json").stdout
    items: list[dict[str, Any]] = json.loads(out)["items"]
    return items


def test_late_dependency_follows_and_edits_propagate(fleet: tuple[PullMode, dict[str, Kubectl]]) -> None:
    env, members = fleet
    _apply(
        env,
        _deployment("late", ("late-cfg",), ("late-secret",)),
        _policy("late", "Deployment", "late", ["member1", "member2"]),
    )
    _await_in(members, "deployment", "late", {"member1", "member2"})
    wait_for(
        lambda: (
            "late-cfg"
            in ((_binding(env, "late-deployment") or {}).get("metadata", {}).get("annotations") or {}).get(
                "resourcebinding.karmada.io/dependencies", ""
            )
        ),
        timeout=TIMEOUT,
        what="the dependencies annotation",
    )
    binding = _binding(env, "late-deployment")
    assert binding is not None
    assert "karmada.io/binding-dependencies-distributor" in binding["metadata"]["finalizers"]
    _apply(env, _configmap("late-cfg"), _secret("late-secret"))
    _await_in(members, "configmap", "late-cfg", {"member1", "member2"})
    _await_in(members, "secret", "late-secret", {"member1", "member2"})
    attached = _binding(env, "late-cfg-configmap")
    assert attached is not None and attached["spec"]["requiredBy"][0]["name"] == "late-deployment"
    assert any(k.startswith("resourcebinding.karmada.io/depended-by-") for k in attached["metadata"]["labels"])
    # an edit of the dependency reaches the members
    _apply(env, _configmap("late-cfg", "2"))
    wait_for(
        lambda: (
            members["member1"]("get", "configmap", "late-cfg", "-n", "default", "-o", "jsonpath={.data.v}").stdout
            == "2"
        ),
        timeout=TIMEOUT,
        what="the edited ConfigMap in member1",
    )
    # a Secret's contents never reach an event
    assert not [e for e in env.admin("get", "events", "-A", "-o", "json").stdout.splitlines() if "do-not-log-me" in e]
    assert _events(env, "GetDependenciesSucceed")
    # rescheduled: the dependencies follow to member3 and leave member1
    _apply(env, _policy("late", "Deployment", "late", ["member2", "member3"]))
    _await_in(members, "deployment", "late", {"member2", "member3"})
    _await_in(members, "configmap", "late-cfg", {"member2", "member3"})
    _await_in(members, "secret", "late-secret", {"member2", "member3"})


def test_shared_dependency_goes_to_the_union_and_is_released(fleet: tuple[PullMode, dict[str, Kubectl]]) -> None:
    env, members = fleet
    _apply(
        env,
        _configmap("shared-cfg"),
        _deployment("shared-a", ("shared-cfg",)),
        _deployment("shared-b", ("shared-cfg",)),
        _policy("shared-a", "Deployment", "shared-a", ["member1"]),
        _policy("shared-b", "Deployment", "shared-b", ["member2"]),
    )
    _await_in(members, "configmap", "shared-cfg", {"member1", "member2"})
    attached = _binding(env, "shared-cfg-configmap")
    assert attached is not None
    assert sorted(s["name"] for s in attached["spec"]["requiredBy"]) == ["shared-a-deployment", "shared-b-deployment"]
    # released: shared-b no longer mounts it; it stays where shared-a needs it
    _apply(env, _deployment("shared-b"))
    _await_in(members, "configmap", "shared-cfg", {"member1"})
    attached = _binding(env, "shared-cfg-configmap")
    assert attached is not None and [s["name"] for s in attached["spec"]["requiredBy"]] == ["shared-a-deployment"]
    # the workload deleted: its snapshot goes, and with the last referrer the member copies
    env.admin("delete", "deployment", "shared-a", "-n", "default")
    _await_in(members, "configmap", "shared-cfg", set())
    wait_for(
        lambda: not (_binding(env, "shared-cfg-configmap") or {}).get("spec", {}).get("requiredBy"), what="no referrer"
    )


def test_propagate_deps_switched_off_releases(fleet: tuple[PullMode, dict[str, Kubectl]]) -> None:
    env, members = fleet
    _apply(
        env, _configmap("off-cfg"), _deployment("off", ("off-cfg",)), _policy("off", "Deployment", "off", ["member3"])
    )
    _await_in(members, "configmap", "off-cfg", {"member3"})
    _apply(env, _policy("off", "Deployment", "off", ["member3"], deps=False))
    _await_in(members, "configmap", "off-cfg", set())
    wait_for(
        lambda: (
            "karmada.io/binding-dependencies-distributor"
            not in ((_binding(env, "off-deployment") or {}).get("metadata", {}).get("finalizers") or [])
        ),
        timeout=TIMEOUT,
        what="the distributor's finalizer removed",
    )
    assert members["member3"]("get", "deployment", "off", "-n", "default", "-o", "name").stdout.strip()


def test_independent_propagation_wins(fleet: tuple[PullMode, dict[str, Kubectl]]) -> None:
    env, members = fleet
    _apply(
        env,
        _configmap("own-cfg"),
        _policy("own-cfg", "ConfigMap", "own-cfg", ["member3"], deps=False),
        _deployment("own", ("own-cfg",)),
        _policy("own", "Deployment", "own", ["member1"]),
    )
    # its own binding keeps its own placement (member3); the referrer's cluster (member1) is added
    _await_in(members, "configmap", "own-cfg", {"member1", "member3"})
    binding = _binding(env, "own-cfg-configmap")
    assert binding is not None
    assert binding["spec"]["placement"]["clusterAffinity"]["clusterNames"] == ["member3"]
    assert [c["name"] for c in binding["spec"]["clusters"]] == ["member3"]
    assert binding["metadata"]["labels"].get("propagationpolicy.karmada.io/permanent-id")
    assert [s["name"] for s in binding["spec"]["requiredBy"]] == ["own-deployment"]


def test_conflicting_policies_resolve_as_karmada(fleet: tuple[PullMode, dict[str, Kubectl]]) -> None:
    env, members = fleet
    _apply(
        env,
        _configmap("mix-cfg"),
        _deployment("mix-a", ("mix-cfg",)),
        _deployment("mix-b", ("mix-cfg",)),
        _policy("mix-a", "Deployment", "mix-a", ["member1"], conflictResolution="Overwrite"),
        _policy("mix-b", "Deployment", "mix-b", ["member2"], preserveResourcesOnDeletion=True),
    )
    _await_in(members, "configmap", "mix-cfg", {"member1", "member2"})
    wait_for(
        lambda: len((_binding(env, "mix-cfg-configmap") or {}).get("spec", {}).get("requiredBy") or []) == 2,
        what="two referrers",
    )
    attached = _binding(env, "mix-cfg-configmap")
    assert attached is not None
    assert attached["spec"]["conflictResolution"] == "Overwrite"
    assert attached["spec"]["preserveResourcesOnDeletion"] is True
    conflicts = [
        e for e in _events(env, "DependencyPolicyConflict") if e["involvedObject"]["name"] == "mix-cfg-configmap"
    ]
    assert conflicts and conflicts[0]["type"] == "Warning"
    assert "ConflictResolution conflicted (Overwrite vs Abort)" in conflicts[-1]["message"]
    assert "PreserveResourcesOnDeletion conflicted (true vs false)" in conflicts[-1]["message"]
    # preserve wins: the Works say so
    works = json.loads(env.admin("get", "works", "-n", "karmada-es-member1", "-o", "json").stdout)["items"]
    (work,) = [w for w in works if w["metadata"]["name"].startswith("mix-cfg-")]
    assert work["spec"].get("preserveResourcesOnDeletion") is True


def test_restart_writes_nothing_and_logs_no_secret(fleet: tuple[PullMode, dict[str, Kubectl]]) -> None:
    env, members = fleet
    _apply(
        env,
        _configmap("calm-cfg"),
        _secret("calm-secret"),
        _deployment("calm", ("calm-cfg",), ("calm-secret",)),
        _policy("calm", "Deployment", "calm", ["member1"]),
    )
    _await_in(members, "secret", "calm-secret", {"member1"})
    _await_in(members, "configmap", "calm-cfg", {"member1"})

    def versions() -> dict[str, str]:
        listed = json.loads(env.admin("get", "resourcebindings", "-n", "default", "-o", "json").stdout)["items"]
        return {b["metadata"]["name"]: b["metadata"]["resourceVersion"] for b in listed}

    assert env.controlplane is not None
    log = env.controlplane.output()
    assert "do-not-log-me" not in log and "ZG8tbm90LWxvZy1tZQ" not in log  # nor its base64
    before = versions()
    runs = log.count("controllers running")
    env.controlplane.stop()
    restarted = env.start_controlplane()
    # the new leader's distributor reconciles every independent binding again from fresh caches
    wait_for(
        lambda: restarted.output().count("controllers running") > runs,
        timeout=30,
        what="the restarted control plane to run its controllers",
    )
    time.sleep(3)  # what a restart would write, it writes at once
    assert versions() == before, "a restart rewrote bindings"
    assert "dependencies-distributor" in restarted.output().split("controllers running")[-1].splitlines()[0]
