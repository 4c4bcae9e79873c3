"""The simulation's indexes follow the stored state exactly: observing a change
twice, or late, never double-counts a node's usage or loses a Pod."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from localkube.quantities import value_of
from localkube.simulation_index import OwnerIndex, PodIndex
from localkube.store import Store


def _pod(name: str, node: str = "", cpu: str = "250m", phase: str = "Running", owner: str = "rs-1") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}]}
    if node:
        spec["nodeName"] = node
    return {
        "metadata": {"name": name, "namespace": "ns", "ownerReferences": [{"kind": "ReplicaSet", "uid": owner}]},
        "spec": spec,
        "status": {"phase": phase},
    }


def test_node_usage_is_a_running_tally_of_bound_unfinished_pods() -> None:
    store = Store()
    index = PodIndex(store)
    store.put("/pods", _pod("a"), "ADDED")
    index.observe(("ns", "a"))
    assert list(index.unbound) == [("ns", "a")] and index.waiting_of("rs-1") == 1
    store.put("/pods", _pod("a", node="n1"), "MODIFIED")
    index.observe(("ns", "a"))
    index.observe(("ns", "a"))  # a replayed event changes nothing
    store.put("/pods", _pod("b", node="n1", cpu="1"), "ADDED")
    index.observe(("ns", "b"))
    used = index.used("n1")
    assert (used.cpu, used.memory, used.pods) == (Fraction(5, 4), value_of("128Mi").value, 2)
    assert not index.unbound and index.waiting_of("rs-1") == 0
    # a finished Pod no longer counts, and says room was freed
    index.released = False
    store.put("/pods", _pod("b", node="n1", cpu="1", phase="Succeeded"), "MODIFIED")
    index.observe(("ns", "b"))
    assert index.released and index.used("n1").pods == 1
    store.delete("/pods", "ns", "a")
    index.observe(("ns", "a"))
    index.observe(("ns", "a"))
    assert index.used("n1").pods == 0 and not index.usage
    assert [p["metadata"]["name"] for p in index.owned("rs-1")] == ["b"]


def test_owners_follow_changes_and_a_stale_entry_is_skipped() -> None:
    store = Store()
    index = OwnerIndex(store, "apps/replicasets")
    rs = {"metadata": {"name": "r", "namespace": "ns", "ownerReferences": [{"kind": "Deployment", "uid": "d1"}]}}
    store.put("apps/replicasets", rs, "ADDED")
    index.observe(("ns", "r"))
    assert [o["metadata"]["name"] for o in index.owned("d1")] == ["r"]
    # adopted by another owner, not yet observed: the old owner no longer sees it
    store.put(
        "apps/replicasets", {**rs, "metadata": {**rs["metadata"], "ownerReferences": [{"uid": "d2"}]}}, "MODIFIED"
    )
    assert list(index.owned("d1")) == []
    index.observe(("ns", "r"))
    assert [o["metadata"]["name"] for o in index.owned("d2")] == ["r"]
