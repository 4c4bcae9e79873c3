"""LimitRanger (plugin/pkg/admission/limitranger), and the LimitRange object's own defaults.

Mutating half, on Pod create: each LimitRange of the Pod's namespace fills the
``defaultRequest`` and ``default`` (limit) of its ``Container`` items into every
container and init container that lacks them, and records what it set in the
``kubernetes.io/limit-ranger`` annotation.

Validating half, after object validation, on Pod create and PVC create and
update (kube skips Pod updates: containers' resources are immutable there):
``min``, ``max`` and ``maxLimitRequestRatio`` per Container, per Pod (its
containers summed, init containers as a maximum) and ``min``/``max`` storage
requests per PersistentVolumeClaim. The first LimitRange with a violation
refuses the object with 403 and all of that range's messages (Go's aggregate
error: one message alone, several as ``[a, b]``, duplicates once). Resource
names are visited in sorted order where kube ranges over a Go map.

Values are compared in thousandths rounded up (whole units above
resource.MaxMilliValue), as requestLimitEnforcedValues does.

The LimitRange defaults (SetDefaults_LimitRangeItem) are applied on its create
and update: a Container item's missing ``default`` comes from ``max``, its
missing ``defaultRequest`` from ``default``, then from ``min``.

Everything runs synchronously on the event loop inside the write it admits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from localkube import quantities
from localkube.errors import forbidden
from localkube.quantities import MAX_MILLI_VALUE, Quantity, ResourceList, resource_list

if TYPE_CHECKING:
    from localkube.admission import Objects

Obj = dict[str, Any]

ANNOTATION = "kubernetes.io/limit-ranger"
LIMIT_RANGES = "/limitranges"
CONTAINER = "Container"
POD = "Pod"
PVC = "PersistentVolumeClaim"


def default_limit_range(obj: Obj) -> None:
    """SetDefaults_LimitRangeItem on every item of a LimitRange."""
    for item in (obj.get("spec") or {}).get("limits") or []:
        if not isinstance(item, dict) or item.get("type") != CONTAINER:
            continue
        default = dict(item.get("default") or {})
        request = dict(item.get("defaultRequest") or {})
        for source, target in ((item.get("max"), default), (default, request), (item.get("min"), request)):
            for name, value in (source or {}).items() if isinstance(source, dict) else ():
                target.setdefault(name, value)
        if default:
            item["default"] = default
        if request:
            item["defaultRequest"] = request


def _ranges(store: Objects, obj: Obj) -> list[Obj]:
    return store.items(LIMIT_RANGES, obj["metadata"].get("namespace", ""))


def _limits(limit_range: Obj) -> list[Obj]:
    return [i for i in (limit_range.get("spec") or {}).get("limits") or [] if isinstance(i, dict)]


def _containers(spec: Obj) -> list[tuple[str, Obj]]:
    return [
        (prefix, c)
        for field, prefix in (("containers", "container"), ("initContainers", "init container"))
        for c in spec.get(field) or []
        if isinstance(c, dict)
    ]


def default_pod(store: Objects, pod: Obj) -> None:
    """The mutating half: default requests and limits from every LimitRange of the namespace."""
    spec = pod.get("spec") or {}
    for limit_range in _ranges(store, pod):
        requests: Obj = {}
        limits: Obj = {}
        for item in _limits(limit_range):
            if item.get("type") == CONTAINER:
                requests.update(item.get("defaultRequest") or {})
                limits.update(item.get("default") or {})
        notes: list[str] = []
        for prefix, container in _containers(spec):
            resources = container.get("resources")
            if not isinstance(resources, dict):
                resources = container["resources"] = {}
            set_requests = _fill(resources, "requests", requests)
            set_limits = _fill(resources, "limits", limits)
            name = container.get("name", "")
            if set_requests:
                notes.append(f"{', '.join(set_requests)} request for {prefix} {name}")
            if set_limits:
                notes.append(f"{', '.join(set_limits)} limit for {prefix} {name}")
        if notes:
            annotations = pod["metadata"].get("annotations")
            if not isinstance(annotations, dict):
                annotations = pod["metadata"]["annotations"] = {}
            annotations[ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)


def _fill(resources: Obj, field: str, defaults: Obj) -> list[str]:
    if not defaults:
        return []
    current = resources.get(field)
    if not isinstance(current, dict):
        current = {}
    added = sorted(name for name in defaults if name not in current)
    if added:
        resources[field] = {**current, **{name: defaults[name] for name in added}}
    return added


def validate(store: Objects, kind: str, obj: Obj, old: Obj | None) -> None:
    """The validating half: 403 for the first LimitRange the Pod or PVC violates."""
    if kind not in (POD, PVC) or (kind == POD and old is not None):
        return
    if old is not None and old["metadata"].get("deletionTimestamp"):
        return
    for limit_range in _ranges(store, obj):
        problems = _pod_problems(limit_range, obj) if kind == POD else _claim_problems(limit_range, obj)
        if problems:
            resource = "pods" if kind == POD else "persistentvolumeclaims"
            name = obj["metadata"].get("name") or obj["metadata"].get("generateName") or "Unknown"
            raise forbidden(f'{resource} "{name}" is forbidden: {aggregate(problems)}', resource=resource, name=name)


def aggregate(messages: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message as it is, several deduplicated in brackets."""
    if len(messages) == 1:
        return messages[0]
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def _resources(container: Obj) -> tuple[ResourceList, ResourceList]:
    resources = container.get("resources") or {}
    return resource_list(resources.get("requests")), resource_list(resources.get("limits"))


def _pod_problems(limit_range: Obj, pod: Obj) -> list[str]:
    spec = pod.get("spec") or {}
    problems: list[str] = []
    for item in _limits(limit_range):
        kind = item.get("type")
        if kind == CONTAINER:
            for _, container in _containers(spec):
                requests, limits = _resources(container)
                problems += _check(item, kind, requests, limits)
        elif kind == POD:
            problems += _check(item, kind, *pod_totals(spec))
    return problems


def _claim_problems(limit_range: Obj, claim: Obj) -> list[str]:
    requests = resource_list(((claim.get("spec") or {}).get("resources") or {}).get("requests"))
    problems: list[str] = []
    for item in _limits(limit_range):
        if item.get("type") != PVC:
            continue
        for name, enforced in sorted(resource_list(item.get("min")).items()):
            problems += _minimum(PVC, name, enforced, requests, {})
        for name, enforced in sorted(resource_list(item.get("max")).items()):
            request = requests.get(name)
            req, _, want = _values(request, None, enforced)
            if request is None:
                problems.append(f"maximum {name} usage per {PVC} is {enforced}.  No request is specified")
            elif req > want:
                problems.append(f"maximum {name} usage per {PVC} is {enforced}, but request is {request}")
    return problems


def pod_totals(spec: Obj) -> tuple[ResourceList, ResourceList]:
    """The Pod's requests and limits: containers and sidecars summed, other init containers as a maximum."""
    totals: list[ResourceList] = []
    for index in (0, 1):
        total: ResourceList = {}
        for container in spec.get("containers") or []:
            if isinstance(container, dict):
                quantities.add(total, _resources(container)[index])
        sidecars: ResourceList = {}
        init: ResourceList = {}
        for container in spec.get("initContainers") or []:
            if not isinstance(container, dict):
                continue
            own = _resources(container)[index]
            if container.get("restartPolicy") == "Always":
                quantities.add(total, own)
                quantities.add(sidecars, own)
                effective = dict(sidecars)
            else:
                effective = dict(own)
                quantities.add(effective, sidecars)
            quantities.maximum(init, effective)
        quantities.maximum(total, init)
        totals.append(total)
    return totals[0], totals[1]


def _values(request: Quantity | None, limit: Quantity | None, enforced: Quantity) -> tuple[int, int, int]:
    """requestLimitEnforcedValues: thousandths when none of the three overflows them, else units."""
    req = request or quantities.ZERO
    lim = limit or quantities.ZERO
    if max(req.whole(), lim.whole(), enforced.whole()) <= MAX_MILLI_VALUE:
        return req.milli(), lim.milli(), enforced.milli()
    return req.whole(), lim.whole(), enforced.whole()


def _minimum(kind: str, name: str, enforced: Quantity, requests: ResourceList, limits: ResourceList) -> list[str]:
    request, limit = requests.get(name), limits.get(name)
    req, lim, want = _values(request, limit, enforced)
    if request is None:
        return [f"minimum {name} usage per {kind} is {enforced}.  No request is specified"]
    if req < want:
        return [f"minimum {name} usage per {kind} is {enforced}, but request is {request}"]
    if limit is not None and lim < want:
        return [f"minimum {name} usage per {kind} is {enforced}, but limit is {limit}"]
    return []


def _maximum(kind: str, name: str, enforced: Quantity, requests: ResourceList, limits: ResourceList) -> list[str]:
    request, limit = requests.get(name), limits.get(name)
    req, lim, want = _values(request, limit, enforced)
    if limit is None:
        return [f"maximum {name} usage per {kind} is {enforced}.  No limit is specified"]
    if lim > want:
        return [f"maximum {name} usage per {kind} is {enforced}, but limit is {limit}"]
    if request is not None and req > want:
        return [f"maximum {name} usage per {kind} is {enforced}, but request is {request}"]
    return []


def _ratio(kind: str, name: str, enforced: Quantity, requests: ResourceList, limits: ResourceList) -> list[str]:
    request, limit = requests.get(name), limits.get(name)
    req, lim, _ = _values(request, limit, enforced)
    if request is None or req == 0:
        return [
            f"{name} max limit to request ratio per {kind} is {enforced}, but no request is specified or request is 0"
        ]
    if limit is None or lim == 0:
        return [f"{name} max limit to request ratio per {kind} is {enforced}, but no limit is specified or limit is 0"]
    observed = lim / req
    shown = observed
    allowed = float(enforced.whole())
    if enforced.whole() <= MAX_MILLI_VALUE:
        observed, allowed = observed * 1000, float(enforced.milli())
    if observed > allowed:
        return [f"{name} max limit to request ratio per {kind} is {enforced}, but provided ratio is {shown:f}"]
    return []


def _check(item: Obj, kind: str, requests: ResourceList, limits: ResourceList) -> list[str]:
    problems: list[str] = []
    for field, check in (("min", _minimum), ("max", _maximum), ("maxLimitRequestRatio", _ratio)):
        for name, enforced in sorted(resource_list(item.get(field)).items()):
            problems += check(kind, name, enforced, requests, limits)
    return problems


__all__ = ["ANNOTATION", "aggregate", "default_limit_range", "default_pod", "pod_totals", "validate"]
