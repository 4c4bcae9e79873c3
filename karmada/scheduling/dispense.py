"""Karmada's replica dispenser: Webster (Sainte-Laguë) apportionment.

Seats go one at a time to the party with the largest ``votes / (2·seats + 1)``.
Ties go to the party with fewer seats, then by name: ascending, or descending
when the binding's template UID hashes (FNV-1a 32) to an odd number, which
spreads tie-break luck across workloads deterministically. Being a divisor
method it is house-monotone: more seats never take one from a party.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from dataclasses import dataclass

from karmada.api.names import fnv32a


def names_descending(uid: str) -> bool:
    """Whether ties break by descending name for a template with this UID."""
    return bool(uid) and fnv32a(uid.encode("utf-8")) & 1 == 1


@dataclass
class _Party:
    name: str
    votes: int
    seats: int
    descending: bool

    def priority(self) -> float:
        # float, as Karmada computes it, so exact ties and near-ties fall the same way
        return float(self.votes) / float(2 * self.seats + 1)

    def __lt__(self, other: _Party) -> bool:
        mine, theirs = self.priority(), other.priority()
        if mine != theirs:
            return mine > theirs
        if self.seats != other.seats:
            return self.seats < other.seats
        return self.name > other.name if self.descending else self.name < other.name


def webster(
    seats: int, votes: Mapping[str, int], initial: Mapping[str, int] | None = None, uid: str = ""
) -> dict[str, int]:
    """Add ``seats`` to ``initial`` in proportion to ``votes``; returns every party's seats.

    A party only in ``initial`` has no votes and keeps its seats; the result is
    ordered by name.
    """
    descending = names_descending(uid)
    parties: dict[str, _Party] = {name: _Party(name, 0, count, descending) for name, count in (initial or {}).items()}
    for name, weight in votes.items():
        if name in parties:
            parties[name].votes = weight
        else:
            parties[name] = _Party(name, weight, 0, descending)
    if not parties:
        return {}
    heap = list(parties.values())
    heapq.heapify(heap)
    for _ in range(seats):
        party = heapq.heappop(heap)
        party.seats += 1
        heapq.heappush(heap, party)
    return {name: parties[name].seats for name in sorted(parties)}


def dispense(
    replicas: int, weights: Mapping[str, int], initial: Mapping[str, int] | None = None, uid: str = ""
) -> dict[str, int]:
    """Karmada's ``Dispenser.AllocateByWeight``: nothing moves when all weights are zero."""
    if replicas == 0 and initial:
        return dict(sorted(initial.items()))
    if sum(weights.values()) == 0:
        return dict(sorted((initial or {}).items()))
    return webster(replicas, weights, initial, uid)
