"""Cost of one RBAC decision as unrelated bindings accumulate.

Run: ``python -m benchmarks.authorization_bench``. The goal: the time per
decision stays flat from 10 to 10,000 bindings that name other subjects (the
authorizer looks only at the bindings naming the request's user and groups).
"""

from __future__ import annotations

import time
from typing import Any

from localkube.auth import Attributes, default_rbac, with_authenticated
from localkube.rbac import Authorizer
from localkube.store import Store

NAMESPACES = 50
ROUNDS = 2000


def binding(index: int, subject: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": f"b{index}", "namespace": namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": subject}],
    }


def decision_time(unrelated: int) -> float:
    """Microseconds per decision for a user bound once, among ``unrelated`` other bindings."""
    store = Store()
    for storage, obj in default_rbac():
        store.put(storage, obj, "ADDED")
    for index in range(unrelated):
        store.put(
            "rbac.authorization.k8s.io/rolebindings", binding(index, f"user{index}", f"ns{index % NAMESPACES}"), "ADDED"
        )
    store.put("rbac.authorization.k8s.io/rolebindings", binding(-1, "alice", "ns0"), "ADDED")
    authorizer = Authorizer(store)
    alice = with_authenticated("alice", ["team"])
    attrs = Attributes("list", True, resource="pods", namespace="ns0")
    assert authorizer.allowed(alice, attrs)
    started = time.perf_counter()
    for _ in range(ROUNDS):
        authorizer.allowed(alice, attrs)
    return (time.perf_counter() - started) / ROUNDS * 1e6


def main() -> None:
    for unrelated in (10, 1_000, 10_000):
        print(f"authorization with {unrelated:>6} unrelated bindings: {decision_time(unrelated):7.1f} µs per decision")


if __name__ == "__main__":
    main()
