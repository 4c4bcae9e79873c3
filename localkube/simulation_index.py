"""What the simulation knows about stored objects without scanning them: Pods
and ReplicaSets by owner, Pods by node, the Pods waiting for a node or for
their kubelet, and a running tally of what each node's Pods request.

Every entry is derived from the object as it is stored now (``observe`` is
called with the key of each change, then reads the store), so replaying an
old event cannot undo a newer write and calling it twice changes nothing.
Readers look the objects up in the store again, so an entry that is briefly
stale (a change not yet observed) costs a skipped key, never a wrong object.

Concurrency: used only from the simulation's task on the server's event loop.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from localkube.quantities import value_of
from localkube.store import Store

Obj = dict[str, Any]
Key = tuple[str, str]  # (namespace, name)

TERMINAL = ("Succeeded", "Failed")


def requests_of(pod: Obj) -> tuple[Fraction, Fraction]:
    """cpu and memory a Pod asks for (containers summed, init containers as a maximum)."""
    spec = pod.get("spec") or {}
    total = {"cpu": Fraction(0), "memory": Fraction(0)}
    for container in spec.get("containers") or []:
        for name in total:
            amount = ((container.get("resources") or {}).get("requests") or {}).get(name)
            if amount is not None:
                total[name] += value_of(amount).value
    for container in spec.get("initContainers") or []:
        requested = (container.get("resources") or {}).get("requests") or {}
        for name, current in list(total.items()):
            if requested.get(name) is not None:
                total[name] = max(current, value_of(requested[name]).value)
    return total["cpu"], total["memory"]


def owner_uids(obj: Obj) -> tuple[str, ...]:
    return tuple(str(o.get("uid", "")) for o in obj["metadata"].get("ownerReferences") or [] if o.get("uid"))


@dataclass
class Usage:
    """What the Pods bound to one node request."""

    cpu: Fraction = Fraction(0)
    memory: Fraction = Fraction(0)
    pods: int = 0


@dataclass(frozen=True)
class _PodFacts:
    owners: tuple[str, ...]
    node: str
    charge: tuple[Fraction, Fraction] | None  # requests counted against the node
    unbound: bool  # waits for the scheduler
    starting: bool  # bound, not started by its kubelet yet
    terminating: bool


class OwnerIndex:
    """Objects of one storage key by the uid of each owner."""

    def __init__(self, store: Store, storage: str) -> None:
        self.store = store
        self.storage = storage
        self._by_owner: dict[str, set[Key]] = {}
        self._owners: dict[Key, tuple[str, ...]] = {}

    def observe(self, key: Key) -> Obj | None:
        obj = self.store.get(self.storage, *key)
        owners = owner_uids(obj) if obj is not None else ()
        old = self._owners.get(key, ())
        if owners != old:
            for uid in old:
                keys = self._by_owner.get(uid)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del self._by_owner[uid]
            for uid in owners:
                self._by_owner.setdefault(uid, set()).add(key)
        if owners:
            self._owners[key] = owners
        else:
            self._owners.pop(key, None)
        return obj

    def owned(self, uid: str) -> Iterator[Obj]:
        """The stored objects that name ``uid`` as an owner, in key order."""
        for key in sorted(self._by_owner.get(uid, ())):
            obj = self.store.get(self.storage, *key)
            if obj is not None and uid in owner_uids(obj):
                yield obj


class PodIndex(OwnerIndex):
    """Pods by owner and node, the ones waiting, and every node's usage."""

    def __init__(self, store: Store) -> None:
        super().__init__(store, "/pods")
        self.usage: dict[str, Usage] = {}
        # insertion-ordered sets: pods are considered in the order they were first seen
        self.unbound: dict[Key, None] = {}
        self.starting: dict[Key, None] = {}
        self.terminating: set[Key] = set()
        self._facts: dict[Key, _PodFacts] = {}
        # set when a Pod stops counting against its node; the scheduler resets it
        self.released = False
        self._unbound_by_owner: dict[str, int] = {}

    def observe(self, key: Key) -> Obj | None:
        pod = super().observe(key)
        old = self._facts.pop(key, None)
        if old is not None:
            self._forget(key, old)
        if pod is None:
            self.released = self.released or (old is not None and old.charge is not None)
            return None
        meta = pod["metadata"]
        spec = pod.get("spec") or {}
        node = str(spec.get("nodeName") or "")
        phase = (pod.get("status") or {}).get("phase", "Pending")
        terminating = bool(meta.get("deletionTimestamp"))
        charge = None
        if node and phase not in TERMINAL:
            # a Pod's requests do not change once it is bound: reuse the parsed amounts
            charge = old.charge if old is not None and old.node == node and old.charge else requests_of(pod)
        facts = _PodFacts(
            owners=owner_uids(pod),
            node=node,
            charge=charge,
            unbound=not node and not terminating,
            starting=bool(node) and phase == "Pending" and not terminating,
            terminating=terminating,
        )
        if old is not None and old.charge is not None and (charge is None or old.node != node):
            self.released = True
        self._remember(key, facts)
        return pod

    def _remember(self, key: Key, facts: _PodFacts) -> None:
        self._facts[key] = facts
        if facts.charge is not None:
            usage = self.usage.setdefault(facts.node, Usage())
            usage.cpu += facts.charge[0]
            usage.memory += facts.charge[1]
            usage.pods += 1
        if facts.unbound:
            self.unbound[key] = None
            for uid in facts.owners:
                self._unbound_by_owner[uid] = self._unbound_by_owner.get(uid, 0) + 1
        if facts.starting:
            self.starting[key] = None
        if facts.terminating:
            self.terminating.add(key)

    def _forget(self, key: Key, facts: _PodFacts) -> None:
        if facts.charge is not None:
            usage = self.usage[facts.node]
            usage.cpu -= facts.charge[0]
            usage.memory -= facts.charge[1]
            usage.pods -= 1
            if not usage.pods:
                del self.usage[facts.node]
        if facts.unbound:
            self.unbound.pop(key, None)
            for uid in facts.owners:
                left = self._unbound_by_owner.get(uid, 0) - 1
                if left > 0:
                    self._unbound_by_owner[uid] = left
                else:
                    self._unbound_by_owner.pop(uid, None)
        if facts.starting:
            self.starting.pop(key, None)
        if facts.terminating:
            self.terminating.discard(key)

    def waiting_of(self, uid: str) -> int:
        """How many of an owner's Pods wait for a node."""
        return self._unbound_by_owner.get(uid, 0)

    def node_of(self, key: Key) -> str:
        facts = self._facts.get(key)
        return facts.node if facts is not None else ""

    def used(self, node: str) -> Usage:
        return self.usage.get(node) or Usage()
