"""What a chaos run judges, as pure functions: the objects each member should hold
(from the bindings), the audit of what they do hold, the seeded plan of faults,
and the percentiles of convergence times.

An object is named by ``(cluster, kind, namespace, name)``. The audit sorts every
difference into one of four counts (the goal of a chaos run is 0 of each):

- lost: a binding places the object on a cluster that lacks it;
- duplicated: a copy on a cluster its binding does not list (the binding still exists);
- stale: on the right cluster, but not what the binding says (the template's version
  or the cluster's replicas differ);
- orphaned: a copy Karmada propagated whose template (and so binding) is gone.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

Key = tuple[str, str, str, str]  # cluster, kind, namespace, name
Template = tuple[str, str, str]  # kind, namespace, name

FAULT_TARGETS = ("controlplane", "webhook", "agent", "member-localkube", "karmada-localkube", "partition", "clock")
MEMBER_TARGETS = ("agent", "member-localkube", "partition", "clock")
# a partition cuts an agent's connections; a clock fault steps the agent's wall clock
SPECIAL_ACTIONS = {"partition": "cut", "clock": "step"}
ACTIONS = ("kill", "stop")


@dataclass(frozen=True)
class Want:
    """What one member copy should be: the template's version, and replicas where they apply."""

    version: str
    replicas: int | None = None


@dataclass(frozen=True)
class Have:
    """What one member copy is."""

    version: str
    replicas: int | None = None


@dataclass
class Audit:
    lost: list[Key] = field(default_factory=list)
    duplicated: list[Key] = field(default_factory=list)
    stale: list[Key] = field(default_factory=list)
    orphaned: list[Key] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (self.lost or self.duplicated or self.stale or self.orphaned)

    def counts(self) -> dict[str, int]:
        return {
            "lost": len(self.lost),
            "duplicated": len(self.duplicated),
            "stale": len(self.stale),
            "orphaned": len(self.orphaned),
        }


def audit(want: dict[Key, Want], have: dict[Key, Have], templates: set[Template]) -> Audit:
    """Sort the differences between ``want`` (from the bindings) and ``have`` (the members);
    ``templates`` are the templates that exist, which tell a duplicate from an orphan."""
    result = Audit()
    for key, wanted in sorted(want.items()):
        got = have.get(key)
        if got is None:
            result.lost.append(key)
        elif got.version != wanted.version or (wanted.replicas is not None and got.replicas != wanted.replicas):
            result.stale.append(key)
    for key in sorted(have.keys() - want.keys()):
        _, kind, namespace, name = key
        (result.duplicated if (kind, namespace, name) in templates else result.orphaned).append(key)
    return result


def placed(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The clusters a binding's ``spec`` places its template on: its own, or for an attached
    binding (a dependency, ``propagateDeps``) the union of those of the bindings requiring it."""
    if spec.get("clusters"):
        return list(spec["clusters"])
    seen: dict[str, dict[str, Any]] = {}
    for requirer in spec.get("requiredBy") or []:
        for target in requirer.get("clusters") or []:
            seen.setdefault(str(target["name"]), target)
    return list(seen.values())


def wanted(bindings: list[dict[str, Any]], versions: dict[Template, str]) -> dict[Key, Want]:
    """The member copies ``bindings`` ask for. A binding whose template is not in ``versions``
    (deleted) asks for nothing; Divided placements carry per-cluster replicas, Duplicated ones
    the template's (``spec.replicas``)."""
    result: dict[Key, Want] = {}
    for binding in bindings:
        spec = binding.get("spec") or {}
        resource = spec.get("resource") or {}
        template = (str(resource.get("kind")), str(resource.get("namespace") or ""), str(resource.get("name")))
        version = versions.get(template)
        if version is None:
            continue
        divided = ((spec.get("placement") or {}).get("replicaScheduling") or {}).get(
            "replicaSchedulingType"
        ) == "Divided"
        for target in placed(spec):
            replicas: int | None = None
            if template[0] == "Deployment":
                replicas = int(target.get("replicas") or 0) if divided else int(spec.get("replicas") or 0)
            result[(str(target["name"]), *template)] = Want(version, replicas)
    return result


@dataclass(frozen=True)
class Fault:
    """One round's fault: ``target`` (one of FAULT_TARGETS, ``member`` naming which member
    where it applies), ``action`` (kill or stop; a partition is always a cut), ``hold`` seconds
    (how long a stop or a partition lasts) and ``delay`` (seconds into the round's churn)."""

    target: str
    action: str
    member: str | None
    hold: float
    delay: float


def plan(
    rounds: int,
    members: list[str],
    seed: int,
    hold: tuple[float, float],
    churn: float,
    partition: bool = True,
    clock: bool = True,
) -> list[Fault]:
    """The faults of ``rounds`` rounds, the same for the same ``seed``: a target, an action,
    a hold drawn from ``hold`` and a moment within the ``churn`` seconds of each round."""
    rng = random.Random(seed)
    left_out = {t for t, on in (("partition", partition), ("clock", clock)) if not on}
    targets = [t for t in FAULT_TARGETS if t not in left_out]
    faults = []
    for _ in range(rounds):
        target = rng.choice(targets)
        action = SPECIAL_ACTIONS.get(target) or rng.choice(ACTIONS)
        member = rng.choice(members) if target in MEMBER_TARGETS else None
        faults.append(Fault(target, action, member, round(rng.uniform(*hold), 2), round(rng.uniform(0, churn), 2)))
    return faults


def not_ready(clusters: list[dict[str, Any]]) -> list[str]:
    """The clusters whose Ready condition is not True: a run has not converged while one is,
    even if its objects look right (they may have just failed over)."""
    names = []
    for cluster in clusters:
        conditions = (cluster.get("status") or {}).get("conditions") or []
        ready: dict[str, Any] = next((c for c in conditions if c.get("type") == "Ready"), {})
        if ready.get("status") != "True":
            names.append(str((cluster.get("metadata") or {}).get("name")))
    return sorted(names)


def percentile(values: list[float], fraction: float) -> float:
    """The nearest-rank percentile (``fraction`` in [0, 1]) of ``values``; 0 for none."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * fraction // 1))
    return ordered[min(len(ordered), int(rank)) - 1]


def unbound(
    bindings: list[dict[str, Any]], versions: dict[Template, str], replicas: dict[Template, int]
) -> list[Template]:
    """The templates (in ``versions``) whose binding is missing, has no cluster, or lags the
    template's replicas (``replicas``, for kinds that have them): the audit judges members only
    against bindings, so these must be none before it means anything."""
    bound: dict[Template, dict[str, Any]] = {}
    for binding in bindings:
        resource = (binding.get("spec") or {}).get("resource") or {}
        bound[(str(resource.get("kind")), str(resource.get("namespace") or ""), str(resource.get("name")))] = binding
    result = []
    for template in sorted(versions):
        spec = (bound.get(template) or {}).get("spec") or {}
        lags = template in replicas and int(spec.get("replicas") or 0) != replicas[template]
        if not placed(spec) or lags:
            result.append(template)
    return result
