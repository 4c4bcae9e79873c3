"""A failover test bed: Karmada in pull mode (control-plane localkube, the
real ``karmada-controlplane`` with failover switched on, three simulated
members with their agents) and helpers that read what a user would read
with kubectl."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.pullmode import PullMode, wait_for
from tests.servers import Kubectl, ServerThread

MEMBERS = ("member1", "member2", "member3")
FAILOVER_FLAGS = (
    "--feature-gates=Failover=true,StatefulFailoverInjection=true",
    "--enable-no-execute-taint-eviction=true",
    "--resource-eviction-rate=10",
    "--leader-elect=false",
)


class Bed:
    def __init__(self, pull: PullMode, members: dict[str, ServerThread]) -> None:
        self.pull = pull
        self.admin = pull.admin
        self.servers = members
        self.members: dict[str, Kubectl] = {n: pull.member_admin(s, n) for n, s in members.items()}

    def apply(self, *docs: dict[str, Any]) -> None:
        self.admin("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": list(docs)}))

    def binding(self, name: str, namespace: str = "default") -> dict[str, Any]:
        result = self.admin("get", "resourcebinding", name, "-n", namespace, "-o", "json", check=False)
        return dict(json.loads(result.stdout)) if result.returncode == 0 else {}

    def targets(self, name: str) -> list[str]:
        return [c["name"] for c in (self.binding(name).get("spec") or {}).get("clusters") or []]

    def tasks(self, name: str) -> list[dict[str, Any]]:
        return list((self.binding(name).get("spec") or {}).get("gracefulEvictionTasks") or [])

    def condition(self, name: str, kind: str = "Failover") -> dict[str, Any]:
        for condition in (self.binding(name).get("status") or {}).get("conditions") or []:
            if condition["type"] == kind:
                return dict(condition)
        return {}

    def in_member(self, cluster: str, kind: str, name: str, namespace: str = "default") -> dict[str, Any] | None:
        result = self.members[cluster]("get", kind, name, "-n", namespace, "-o", "json", check=False)
        return json.loads(result.stdout) if result.returncode == 0 else None

    def placed(self, kind: str, name: str) -> list[str]:
        return [c for c in MEMBERS if self.in_member(c, kind, name) is not None]

    def ready_in(self, cluster: str, name: str) -> bool:
        found = self.in_member(cluster, "deployment", name) or {}
        status = found.get("status") or {}
        return bool(status.get("readyReplicas")) and status.get("readyReplicas") == (found.get("spec") or {}).get(
            "replicas"
        )

    def events(self, namespace: str, reason: str) -> list[str]:
        items = json.loads(self.admin("get", "events", "-n", namespace, "-o", "json").stdout)["items"]
        return [
            f"{e['involvedObject']['kind']}/{e['involvedObject']['name']}: {e['message']}"
            for e in items
            if e["reason"] == reason
        ]

    def serving(self, name: str, timeout: float = 60) -> str:
        """The one cluster the binding targets, once its Deployment is ready there."""

        def one() -> str | None:
            targets = self.targets(name)
            return targets[0] if len(targets) == 1 and self.ready_in(targets[0], name.rsplit("-", 1)[0]) else None

        return str(wait_for(one, timeout=timeout, what=f"{name} ready in one cluster"))

    def taint(self, cluster: str, taint: str) -> None:
        self.pull.plugin("taint", "clusters", cluster, taint)


def deployment(name: str, replicas: int = 2, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    template_meta: dict[str, Any] = {"labels": {"app": name}}
    if annotations:
        template_meta["annotations"] = annotations
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": template_meta,
                "spec": {"containers": [{"name": name, "image": "nginx:1.25"}]},
            },
        },
    }


def policy(
    name: str, selectors: list[dict[str, Any]], clusters: tuple[str, ...] = MEMBERS, **extra: Any
) -> dict[str, Any]:
    return {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            **extra,
            "resourceSelectors": selectors,
            "placement": {
                "clusterAffinity": {"clusterNames": list(clusters)},
                "spreadConstraints": [{"spreadByField": "cluster", "minGroups": 1, "maxGroups": 1}],
            },
        },
    }


def selector(kind: str, name: str) -> dict[str, Any]:
    return {"apiVersion": "apps/v1" if kind == "Deployment" else "v1", "kind": kind, "name": name}


def unready_in(name: str, clusters: list[str]) -> dict[str, Any]:
    """An OverridePolicy ``<name>-unready`` holding the Pods of ``name`` unready in ``clusters``."""
    return {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "OverridePolicy",
        "metadata": {"name": f"{name}-unready", "namespace": "default"},
        "spec": {
            "resourceSelectors": [selector("Deployment", name)],
            "overrideRules": [
                {
                    "targetCluster": {"clusterNames": clusters},
                    "overriders": {
                        "plaintext": [
                            {
                                "path": "/spec/template/metadata/annotations",
                                "operator": "add",
                                "value": {"simulation.localkube.io/unready": "true"},
                            }
                        ]
                    },
                }
            ],
        },
    }


def log_of(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""
