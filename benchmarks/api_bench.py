"""How fast the API models validate and serialise, and how long CRD generation takes.

Controllers decode every watched object through these models, so their cost
bounds how many objects per second one process can take in.
Run: ``python -m benchmarks.api_bench``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Any

from karmada.api import PropagationPolicy, ResourceBinding, Work, parse_object
from karmada.api.crdgen import generate

POLICY: dict[str, Any] = {
    "apiVersion": "policy.karmada.io/v1alpha1",
    "kind": "PropagationPolicy",
    "metadata": {"name": "nginx-propagation", "namespace": "default", "labels": {"app": "nginx"}},
    "spec": {
        "resourceSelectors": [
            {"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"},
            {"apiVersion": "v1", "kind": "Service", "name": "nginx"},
        ],
        "propagateDeps": True,
        "placement": {
            "clusterAffinity": {"labelSelector": {"matchLabels": {"env": "prod"}}},
            "spreadConstraints": [{"spreadByField": "cluster", "minGroups": 2, "maxGroups": 2}],
            "replicaScheduling": {
                "replicaSchedulingType": "Divided",
                "replicaDivisionPreference": "Weighted",
                "weightPreference": {"dynamicWeight": "AvailableReplicas"},
            },
        },
    },
}

BINDING: dict[str, Any] = {
    "apiVersion": "work.karmada.io/v1alpha2",
    "kind": "ResourceBinding",
    "metadata": {"name": "nginx-deployment", "namespace": "default"},
    "spec": {
        "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx", "uid": "u-1"},
        "replicas": 6,
        "replicaRequirements": {"resourceRequest": {"cpu": "100m", "memory": "128Mi"}},
        "clusters": [{"name": f"member{i}", "replicas": 1} for i in range(6)],
        "placement": POLICY["spec"]["placement"],
    },
    "status": {
        "aggregatedStatus": [
            {"clusterName": f"member{i}", "applied": True, "health": "Healthy", "status": {"replicas": 1}}
            for i in range(6)
        ]
    },
}

WORK: dict[str, Any] = {
    "apiVersion": "work.karmada.io/v1alpha1",
    "kind": "Work",
    "metadata": {"name": "nginx-687f7fb96f", "namespace": "karmada-es-member1"},
    "spec": {
        "workload": {
            "manifests": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "metadata": {"name": "nginx", "namespace": "default"},
                    "spec": {
                        "replicas": 1,
                        "template": {"spec": {"containers": [{"name": "n", "image": "x"}]}},
                    },
                }
            ]
        }
    },
}


def rate(fn: Callable[[], object], seconds: float = 0.5) -> float:
    """Calls per second of ``fn`` over about ``seconds``."""
    count, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        fn()
        count += 1
    return count / elapsed


def main() -> None:
    """Print one line per measurement."""
    for label, data, model in (
        ("PropagationPolicy", POLICY, PropagationPolicy),
        ("ResourceBinding (6 clusters)", BINDING, ResourceBinding),
        ("Work (1 manifest)", WORK, Work),
    ):
        parsed = model.from_dict(data)
        print(f"{label:32s} parse  {rate(partial(parse_object, data)):>10,.0f}/s")
        print(f"{label:32s} dump   {rate(parsed.to_dict):>10,.0f}/s")
    start = time.perf_counter()
    generate()
    print(f"{'CRD generation (10 kinds)':32s} {1000 * (time.perf_counter() - start):>10.1f} ms")


if __name__ == "__main__":
    main()
