"""Objects kube-apiserver creates for itself at start: the system PriorityClasses,
one APIService per built-in group version (kube-aggregator's local ones), and
API Priority and Fairness' mandatory FlowSchemas and PriorityLevelConfigurations.

They are seeded once (an existing object is left alone) and nothing acts on them:
localkube does not schedule by priority, aggregate APIs or limit request rates.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

# kube-aggregator's group priorities (and the version priority within a group)
_GROUP_PRIORITY = {
    "": 18000,
    "apiregistration.k8s.io": 17900,
    "apps": 17800,
    "events.k8s.io": 17750,
    "authentication.k8s.io": 17700,
    "authorization.k8s.io": 17600,
    "autoscaling": 17500,
    "batch": 17400,
    "certificates.k8s.io": 17300,
    "networking.k8s.io": 17200,
    "policy": 17100,
    "rbac.authorization.k8s.io": 17000,
    "storage.k8s.io": 16800,
    "admissionregistration.k8s.io": 16700,
    "scheduling.k8s.io": 16600,
    "coordination.k8s.io": 16500,
    "apiextensions.k8s.io": 16400,
    "node.k8s.io": 16300,
    "discovery.k8s.io": 16200,
    "flowcontrol.apiserver.k8s.io": 16100,
}
_VERSION_PRIORITY = {("autoscaling", "v2"): 30}

_ALL_RESOURCES = {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "clusterScope": True, "namespaces": ["*"]}
_ALL_URLS = {"verbs": ["*"], "nonResourceURLs": ["*"]}
_AUTOUPDATE = {"apf.kubernetes.io/autoupdate-spec": "true"}


def priority_classes() -> list[Obj]:
    def pc(name: str, value: int, description: str) -> Obj:
        return {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
            "description": description,
            "preemptionPolicy": "PreemptLowerPriority",
        }

    return [
        pc(
            "system-cluster-critical",
            2000000000,
            "Used for system critical pods that must run in the cluster, "
            "but can be moved to another node if necessary.",
        ),
        pc(
            "system-node-critical",
            2000001000,
            "Used for system critical pods that must not be moved from their current node.",
        ),
    ]


def api_services(groups: list[tuple[str, list[str]]]) -> list[tuple[Obj, Obj]]:
    """``(object, status)`` for each built-in group version."""
    made = []
    for group, versions in groups:
        if group not in _GROUP_PRIORITY:
            continue
        for version in versions:
            obj = {
                "apiVersion": "apiregistration.k8s.io/v1",
                "kind": "APIService",
                "metadata": {
                    "name": f"{version}.{group}",
                    "labels": {"kube-aggregator.kubernetes.io/automanaged": "onstart"},
                },
                "spec": {
                    "group": group,
                    "version": version,
                    "groupPriorityMinimum": _GROUP_PRIORITY[group],
                    "versionPriority": _VERSION_PRIORITY.get((group, version), 15),
                },
            }
            status = {
                "conditions": [
                    {
                        "type": "Available",
                        "status": "True",
                        "reason": "Local",
                        "message": "Local APIServices are always available",
                    }
                ]
            }
            made.append((obj, status))
    return made


def flow_control() -> list[Obj]:
    """The mandatory configuration kube-apiserver keeps (exempt and catch-all)."""
    api = "flowcontrol.apiserver.k8s.io/v1"
    return [
        {
            "apiVersion": api,
            "kind": "PriorityLevelConfiguration",
            "metadata": {"name": "exempt", "annotations": _AUTOUPDATE},
            "spec": {"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}},
        },
        {
            "apiVersion": api,
            "kind": "PriorityLevelConfiguration",
            "metadata": {"name": "catch-all", "annotations": _AUTOUPDATE},
            "spec": {
                "type": "Limited",
                "limited": {"nominalConcurrencyShares": 5, "lendablePercent": 0, "limitResponse": {"type": "Reject"}},
            },
        },
        {
            "apiVersion": api,
            "kind": "FlowSchema",
            "metadata": {"name": "exempt", "annotations": _AUTOUPDATE},
            "spec": {
                "matchingPrecedence": 1,
                "priorityLevelConfiguration": {"name": "exempt"},
                "rules": [
                    {
                        "subjects": [{"kind": "Group", "group": {"name": "system:masters"}}],
                        "resourceRules": [_ALL_RESOURCES],
                        "nonResourceRules": [_ALL_URLS],
                    }
                ],
            },
        },
        {
            "apiVersion": api,
            "kind": "FlowSchema",
            "metadata": {"name": "catch-all", "annotations": _AUTOUPDATE},
            "spec": {
                "matchingPrecedence": 10000,
                "priorityLevelConfiguration": {"name": "catch-all"},
                "distinguisherMethod": {"type": "ByUser"},
                "rules": [
                    {
                        "subjects": [
                            {"kind": "Group", "group": {"name": "system:unauthenticated"}},
                            {"kind": "Group", "group": {"name": "system:authenticated"}},
                        ],
                        "resourceRules": [_ALL_RESOURCES],
                        "nonResourceRules": [_ALL_URLS],
                    }
                ],
            },
        },
    ]
