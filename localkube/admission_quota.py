"""ResourceQuota: admission (plugin/pkg/admission/resourcequota) and the usage a quota's
status reports (pkg/quota/v1/evaluator/core, kube-controller-manager's quota controller).

Design. localkube has no quota controller of kube's kind, and it needs none of
kube's bookkeeping: every request runs synchronously on the event loop, so at
admission the plugin counts the namespace's stored objects of the admitted
resource afresh (:func:`used`) and adds what the write changes. That count is
exact whatever happened before (deletes, terminal pods, a namespace going
away), so admission never trusts a stale ``status.used``, and two writes can
never both take the last unit. ``status`` is derived state, refreshed by
:func:`refresh_status`: on the quota's own create and update (so ``status.hard``
is ``spec.hard`` the moment it is stored) and by localkube's controllers once
their queue is drained after changes in a namespace that has quotas (see
:mod:`localkube.controllers`), which write ``status.used`` when it differs.
Counting is incremental: per store, resource, namespace and scope set, a
running total as of a resourceVersion is kept (:class:`Tally`) and brought up
to date from the store's event history (each event carries the object before
and after), so an admission costs the changes since the last one, not a scan;
a total older than the retained history is recounted from the objects. Pods
being deleted are kept aside and evaluated at each count, since whether they
are past their grace period depends on the clock, not on a write.

As in kube: quotas are checked by name order and the first one exceeded
refuses (403, ``exceeded quota: q, requested: ..., used: ..., limited: ...``);
a Pod must state the requests and limits of every cpu/memory resource a
matching quota limits (``failed quota: q: must specify ...``); Pods are
charged on create only, Services and PVCs on create and update (type and size
can change), any other resource (``count/<resource>[.<group>]``, custom
resources included) on create. Terminal Pods (Succeeded, Failed) and Pods past
their deletion grace period count for ``count/pods`` only. A Pod's requests
include its ``overhead``.

Scopes (``spec.scopes`` and ``spec.scopeSelector``): Terminating,
NotTerminating, BestEffort, NotBestEffort, PriorityClass (In, NotIn, Exists,
DoesNotExist) and CrossNamespacePodAffinity apply to Pods; a scoped quota
matches no other resource, as kube's evaluators answer. VolumeAttributesClass
scopes match nothing here. Resource names localkube cannot evaluate are
reported as used ``0`` and refuse nothing.
"""

from __future__ import annotations

import datetime
import json
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from localkube import quantities
from localkube.admission_limits import pod_totals
from localkube.defaults import qos_class
from localkube.errors import APIError, forbidden
from localkube.quantities import Quantity, ResourceList, resource_list

if TYPE_CHECKING:
    from localkube.admission import Objects

Obj = dict[str, Any]

QUOTAS = "/resourcequotas"
ONE = Quantity(Fraction(1))
STORAGE_CLASS_SUFFIX = ".storageclass.storage.k8s.io/"
BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
# the cpu/memory names a Pod must state when a quota limits them (kube's "validationSet")
REQUIRED = ("cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory")
POD_NAMES = (
    "count/pods",
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
)
SERVICE_NAMES = ("count/services", "services", "services.loadbalancers", "services.nodeports")
PVC_NAMES = ("persistentvolumeclaims", "requests.storage")
# object counts kube also tracks under their bare resource name
LEGACY_COUNTS = ("configmaps", "secrets", "replicationcontrollers", "resourcequotas")


def count_name(group: str, resource: str) -> str:
    return f"count/{resource}.{group}" if group else f"count/{resource}"


def storage_of(group: str, resource: str) -> str:
    """The store key of a resource (core and events.k8s.io events share one)."""
    if resource == "events" and group in ("", "events.k8s.io"):
        return "events"
    return f"{group}/{resource}"


@dataclass(frozen=True)
class Evaluator:
    """What quota knows about one resource: names it tracks, usage of one object, when it charges."""

    group: str
    resource: str

    @property
    def pods(self) -> bool:
        return self.group == "" and self.resource == "pods"

    @property
    def services(self) -> bool:
        return self.group == "" and self.resource == "services"

    @property
    def claims(self) -> bool:
        return self.group == "" and self.resource == "persistentvolumeclaims"

    def handles(self, creating: bool) -> bool:
        return creating or self.services or self.claims

    def matching(self, names: list[str]) -> list[str]:
        """MatchingResources: the names of a quota this resource's objects are charged to."""
        own = count_name(self.group, self.resource)
        if self.pods:
            return [n for n in names if n in POD_NAMES or _pod_prefixed(n)]
        if self.services:
            return [n for n in names if n in SERVICE_NAMES]
        if self.claims:
            return [
                n
                for n in names
                if n == own or n in PVC_NAMES or any(n.endswith(STORAGE_CLASS_SUFFIX + r) for r in PVC_NAMES)
            ]
        legacy = self.resource if self.group == "" and self.resource in LEGACY_COUNTS else None
        return [n for n in names if n in (own, legacy)]

    def usage(self, obj: Obj, now: datetime.datetime) -> ResourceList:
        result: ResourceList = {count_name(self.group, self.resource): ONE}
        if self.pods:
            if _charged(obj, now):
                result.update(_pod_compute(obj.get("spec") or {}))
        elif self.services:
            result.update(_service_usage(obj.get("spec") or {}))
        elif self.claims:
            result.update(_claim_usage(obj))
        elif self.group == "" and self.resource in LEGACY_COUNTS:
            result[self.resource] = ONE
        return result

    def scope_matches(self, selector: Obj, obj: Obj) -> bool:
        return self.pods and _pod_in_scope(selector, obj)

    def matches(self, quota: Obj, obj: Obj) -> bool:
        """generic.Matches: the quota limits a name of this resource and every scope accepts ``obj``."""
        if not self.matching(list(hard_of(quota))):
            return False
        return all(self.scope_matches(s, obj) for s in scope_selectors(quota))


def _pod_prefixed(name: str) -> bool:
    if name.startswith(("hugepages-", "requests.hugepages-")):
        return True
    # requests.<extended resource>: a qualified name outside kubernetes.io
    rest = name.removeprefix("requests.")
    return rest != name and "/" in rest and not rest.split("/")[0].endswith("kubernetes.io")


def hard_of(quota: Obj) -> ResourceList:
    return resource_list((quota.get("spec") or {}).get("hard"))


def scope_selectors(quota: Obj) -> list[Obj]:
    spec = quota.get("spec") or {}
    selectors = [{"scopeName": s, "operator": "Exists"} for s in spec.get("scopes") or []]
    expressions = (spec.get("scopeSelector") or {}).get("matchExpressions") or []
    return selectors + [e for e in expressions if isinstance(e, dict)]


def _charged(pod: Obj, now: datetime.datetime) -> bool:
    """QuotaV1Pod: not terminal, and not past its deletion grace period."""
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return False
    meta = pod["metadata"]
    stamp, grace = meta.get("deletionTimestamp"), meta.get("deletionGracePeriodSeconds")
    if stamp and grace is not None:
        deleted = datetime.datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
        if now > deleted + datetime.timedelta(seconds=int(grace)):
            return False
    return True


def _pod_compute(spec: Obj) -> ResourceList:
    requests, limits = pod_totals(spec)
    overhead = resource_list(spec.get("overhead"))
    quantities.add(requests, overhead)
    for name, amount in overhead.items():
        if name in limits:
            limits[name] = limits[name] + amount
    return compute_usage(requests, limits)


def compute_usage(requests: ResourceList, limits: ResourceList) -> ResourceList:
    """podComputeUsageHelper: the quota names a set of requests and limits is charged to."""
    result: ResourceList = {"pods": ONE}
    for name in ("cpu", "memory", "ephemeral-storage"):
        if name in requests:
            result[name] = result[f"requests.{name}"] = requests[name]
        if name in limits:
            result[f"limits.{name}"] = limits[name]
    for name, amount in requests.items():
        if name.startswith("hugepages-"):
            result[name] = result[f"requests.{name}"] = amount
        elif "/" in name and not name.split("/")[0].endswith("kubernetes.io") and not name.startswith("requests."):
            result[f"requests.{name}"] = amount
    return result


def _service_usage(spec: Obj) -> ResourceList:
    ports = [p for p in spec.get("ports") or [] if isinstance(p, dict)]
    result: ResourceList = {"services": ONE, "services.loadbalancers": quantities.ZERO}
    result["services.nodeports"] = quantities.ZERO
    kind = spec.get("type")
    if kind == "NodePort":
        result["services.nodeports"] = Quantity(Fraction(len(ports)))
    elif kind == "LoadBalancer":
        # without allocated node ports only the ports that name one are counted
        allocating = spec.get("allocateLoadBalancerNodePorts") is not False
        counted = ports if allocating else [p for p in ports if p.get("nodePort")]
        result["services.nodeports"] = Quantity(Fraction(len(counted)))
        result["services.loadbalancers"] = ONE
    return result


def _claim_usage(claim: Obj) -> ResourceList:
    spec = claim.get("spec") or {}
    result: ResourceList = {"persistentvolumeclaims": ONE}
    annotations = claim["metadata"].get("annotations") or {}
    storage_class = annotations.get(BETA_STORAGE_CLASS) or spec.get("storageClassName") or ""
    if storage_class:
        result[f"{storage_class}{STORAGE_CLASS_SUFFIX}persistentvolumeclaims"] = ONE
    request = resource_list((spec.get("resources") or {}).get("requests")).get("storage")
    allocated = resource_list((claim.get("status") or {}).get("allocatedResources")).get("storage")
    if request is not None and allocated is not None and allocated.value > request.value:
        request = allocated
    if request is not None:
        # storage is charged in whole bytes (RoundUp(0))
        request = Quantity(Fraction(request.whole()), request.format)
        result["requests.storage"] = request
        if storage_class:
            result[f"{storage_class}{STORAGE_CLASS_SUFFIX}requests.storage"] = request
    return result


def _pod_in_scope(selector: Obj, pod: Obj) -> bool:
    spec = pod.get("spec") or {}
    scope = str(selector.get("scopeName", ""))
    if scope in ("Terminating", "NotTerminating"):
        deadline = spec.get("activeDeadlineSeconds")
        terminating: bool = isinstance(deadline, int) and deadline >= 0
        return terminating is (scope == "Terminating")
    if scope in ("BestEffort", "NotBestEffort"):
        best_effort: bool = qos_class(spec) == "BestEffort"
        return best_effort is (scope == "BestEffort")
    if scope == "PriorityClass":
        name = spec.get("priorityClassName") or ""
        operator, values = selector.get("operator"), selector.get("values") or []
        if operator == "Exists":
            return bool(name)
        if operator == "DoesNotExist":
            return not name
        if operator == "In":
            return bool(name) and name in values
        if operator == "NotIn":
            return not name or name not in values
        return False
    if scope == "CrossNamespacePodAffinity":
        return _cross_namespace_affinity(spec)
    return False


def _cross_namespace_affinity(spec: Obj) -> bool:
    affinity = spec.get("affinity") or {}
    for kind in ("podAffinity", "podAntiAffinity"):
        rules = affinity.get(kind) or {}
        terms = list(rules.get("requiredDuringSchedulingIgnoredDuringExecution") or [])
        preferred = rules.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        terms += [w.get("podAffinityTerm") or {} for w in preferred if isinstance(w, dict)]
        if any(t.get("namespaces") or t.get("namespaceSelector") is not None for t in terms if isinstance(t, dict)):
            return True
    return False


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


@dataclass
class Tally:
    """Usage of one resource's objects in one namespace under one scope set, as of ``rv``."""

    rv: int
    totals: ResourceList = field(default_factory=dict)
    # pods with a deletion grace period: charged or not depending on the clock
    timed: dict[str, Obj] = field(default_factory=dict)


# per store (weakly, so a stopped server's totals go with it): (storage, namespace, scopes) -> tally
_TALLIES: weakref.WeakKeyDictionary[Any, dict[tuple[str, str, str], Tally]] = weakref.WeakKeyDictionary()


def _timed(evaluator: Evaluator, obj: Obj) -> bool:
    meta = obj["metadata"]
    return evaluator.pods and bool(meta.get("deletionTimestamp")) and meta.get("deletionGracePeriodSeconds") is not None


def _count(tally: Tally, evaluator: Evaluator, selectors: list[Obj], obj: Obj, sign: int) -> None:
    if not all(evaluator.scope_matches(s, obj) for s in selectors):
        return
    if _timed(evaluator, obj):
        if sign > 0:
            tally.timed[obj["metadata"]["name"]] = obj
        else:
            tally.timed.pop(obj["metadata"]["name"], None)
        return
    for name, amount in evaluator.usage(obj, _now()).items():
        signed = amount if sign > 0 else Quantity(-amount.value, amount.format)
        tally.totals[name] = tally.totals[name] + signed if name in tally.totals else signed


def tally(store: Objects, evaluator: Evaluator, namespace: str, selectors: list[Obj]) -> Tally:
    """The running total of ``evaluator``'s objects in ``namespace`` matching ``selectors``, brought up to date."""
    storage = storage_of(evaluator.group, evaluator.resource)
    key = (storage, namespace, json.dumps(selectors, sort_keys=True))
    tallies = _TALLIES.setdefault(store, {})
    current = tallies.get(key)
    events = None if current is None else store.history_since(storage, current.rv)
    if current is None or events is None:
        current = tallies[key] = Tally(store.rv)
        for obj in store.items(storage, namespace):
            _count(current, evaluator, selectors, obj, +1)
        return current
    for event in events:
        if event.obj["metadata"].get("namespace") != namespace:
            continue
        if event.old is not None:
            _count(current, evaluator, selectors, event.old, -1)
        if event.type != "DELETED":
            _count(current, evaluator, selectors, event.obj, +1)
    current.rv = store.rv
    return current


def used(store: Objects, quota: Obj, evaluator: Evaluator, now: datetime.datetime | None = None) -> ResourceList:
    """What the stored objects of one resource use of a quota's names (zero where none is charged)."""
    hard = hard_of(quota)
    names = evaluator.matching(list(hard))
    total: ResourceList = {name: Quantity(Fraction(0), hard[name].format) for name in names}
    if not names:
        return total
    counted = tally(store, evaluator, quota["metadata"].get("namespace", ""), scope_selectors(quota))
    quantities.add(total, {n: counted.totals[n] for n in names if n in counted.totals})
    moment = now or _now()
    for obj in counted.timed.values():
        usage = evaluator.usage(obj, moment)
        quantities.add(total, {n: usage[n] for n in names if n in usage})
    return total


def evaluator_for_name(name: str) -> Evaluator | None:
    """The resource whose objects a quota name counts, or None when localkube cannot say."""
    for candidate in (Evaluator("", "pods"), Evaluator("", "services"), Evaluator("", "persistentvolumeclaims")):
        if candidate.matching([name]):
            return candidate
    if name in LEGACY_COUNTS:
        return Evaluator("", name)
    if name.startswith("count/"):
        resource, _, group = name.removeprefix("count/").partition(".")
        return Evaluator(group, resource) if resource else None
    return None


def status_of(store: Objects, quota: Obj) -> Obj | None:
    """The status kube's quota controller would write: ``hard`` as spec, ``used`` counted now
    (None for a quota without hard limits, whose status stays empty)."""
    hard = hard_of(quota)
    if not hard:
        return None
    usage: ResourceList = dict.fromkeys(hard, quantities.ZERO)
    moment = _now()
    for evaluator in sorted(_evaluators(hard), key=lambda e: (e.group, e.resource)):
        usage.update(used(store, quota, evaluator, moment))
    return {"hard": quantities.to_json(hard), "used": quantities.to_json({n: usage[n] for n in hard})}


def _evaluators(hard: ResourceList) -> set[Evaluator]:
    return {e for e in map(evaluator_for_name, hard) if e is not None}


def counts(quota: Obj, storage: str) -> bool:
    """Whether objects under the store key ``storage`` can change the quota's usage."""
    return any(storage_of(e.group, e.resource) == storage for e in _evaluators(hard_of(quota)))


def refresh_status(store: Objects, quota: Obj) -> None:
    """Set a quota's status in place (on its create and spec update, before it is stored)."""
    status = status_of(store, quota)
    if status is None:
        quota.pop("status", None)
    else:
        quota["status"] = status


def admit(store: Objects, group: str, resource: str, obj: Obj, old: Obj | None) -> None:
    """Refuse (403) a write that takes a matching quota above its hard limits."""
    namespace = obj["metadata"].get("namespace") or ""
    if not namespace:
        return
    quotas = store.items(QUOTAS, namespace)
    if not quotas:
        return
    evaluator = Evaluator(group, resource)
    if not evaluator.handles(old is None):
        return
    name = obj["metadata"].get("name") or obj["metadata"].get("generateName") or "Unknown"

    def refuse(message: str) -> APIError:
        qualified = f"{resource}.{group}" if group else resource
        return forbidden(f'{qualified} "{name}" is forbidden: {message}', resource=resource, group=group, name=name)

    interesting = []
    for quota in sorted(quotas, key=lambda q: str(q["metadata"]["name"])):
        if not evaluator.matches(quota, obj):
            continue
        missing = _missing(evaluator, quota, obj)
        if missing:
            raise refuse(f"failed quota: {quota['metadata']['name']}: {missing}")
        interesting.append(quota)
    if not interesting:
        return
    now = _now()
    delta = evaluator.usage(obj, now)
    negative = sorted(n for n, q in delta.items() if q.value < 0)
    if negative:
        raise refuse(f"quota usage is negative for resource(s): {','.join(negative)}")
    if old is not None:
        # quota.Subtract: what the update adds over the stored version (negative where it frees)
        for n, q in evaluator.usage(old, now).items():
            delta[n] = delta[n] - q if n in delta else Quantity(-q.value, q.format)
    if all(q.value == 0 for q in delta.values()):
        return
    for quota in interesting:
        _charge(store, evaluator, quota, delta, now, refuse)


def _charge(
    store: Objects,
    evaluator: Evaluator,
    quota: Obj,
    delta: ResourceList,
    now: datetime.datetime,
    refuse: Callable[[str], APIError],
) -> None:
    hard = hard_of(quota)
    requested = {n: q for n, q in delta.items() if n in hard}
    current = used(store, quota, evaluator, now)
    new = {n: current[n] + q if n in current else q for n, q in requested.items()}
    exceeded = sorted(n for n, q in new.items() if q.value > hard[n].value)
    if exceeded:
        raise refuse(
            f"exceeded quota: {quota['metadata']['name']}, requested: {quantities.pretty(requested, exceeded)}, "
            f"used: {quantities.pretty(current, exceeded)}, limited: {quantities.pretty(hard, exceeded)}"
        )


def _missing(evaluator: Evaluator, quota: Obj, obj: Obj) -> str:
    """podEvaluator.Constraints: which containers lack a request or limit the quota limits."""
    if not evaluator.pods:
        return ""
    required = set(evaluator.matching(list(hard_of(quota)))) & set(REQUIRED)
    if not required:
        return ""
    spec = obj.get("spec") or {}
    missing: dict[str, set[str]] = {}
    for list_field in ("containers", "initContainers"):
        for container in spec.get(list_field) or []:
            if not isinstance(container, dict):
                continue
            resources = container.get("resources") or {}
            stated = compute_usage(resource_list(resources.get("requests")), resource_list(resources.get("limits")))
            for name in required - set(stated):
                missing.setdefault(name, set()).add(str(container.get("name", "")))
    if not missing:
        return ""
    parts = [f"{name} for: {','.join(sorted(containers))}" for name, containers in sorted(missing.items())]
    return "must specify " + "; ".join(parts)


__all__ = ["QUOTAS", "Evaluator", "admit", "count_name", "counts", "refresh_status", "status_of", "storage_of", "used"]
