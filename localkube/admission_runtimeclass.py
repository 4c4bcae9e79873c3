"""RuntimeClass admission (plugin/pkg/admission/runtimeclass), on Pod create.

Mutating half: a Pod naming a RuntimeClass that is not stored is refused
(403 ``pod rejected: RuntimeClass "x" not found``); the class's
``overhead.podFixed`` becomes ``spec.overhead`` (a different overhead already
on the Pod is refused); its ``scheduling.nodeSelector`` is merged into the
Pod's (a key the Pod sets to another value is refused) and its
``scheduling.tolerations`` are merged into the Pod's, leaving out any the Pod
already tolerates as broadly (tolerations.MergeTolerations).

Validating half, after every other mutation: the Pod's overhead must equal the
class's, and a Pod without a class overhead may have none.

Reads the class from the store synchronously within the write it admits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from localkube.errors import APIError, forbidden
from localkube.quantities import resource_list

if TYPE_CHECKING:
    from localkube.admission import Objects

Obj = dict[str, Any]

RUNTIME_CLASSES = "node.k8s.io/runtimeclasses"


def _refuse(pod: Obj, message: str) -> APIError:
    name = pod["metadata"].get("name") or pod["metadata"].get("generateName") or "Unknown"
    return forbidden(f'pods "{name}" is forbidden: {message}', resource="pods", name=name)


def _runtime_class(store: Objects, pod: Obj) -> Obj | None:
    spec = pod.get("spec") or {}
    if spec.get("runtimeClassName") is None:
        return None
    name = str(spec["runtimeClassName"])
    found = store.get(RUNTIME_CLASSES, "", name)
    if found is None:
        raise _refuse(pod, f'pod rejected: RuntimeClass "{name}" not found')
    return found


def _same_resources(a: Any, b: Any) -> bool:
    """apiequality.Semantic.DeepEqual of two ResourceLists: the same names with equal values."""
    left, right = resource_list(a), resource_list(b)
    return left.keys() == right.keys() and all(left[n].value == right[n].value for n in left)


def admit(store: Objects, pod: Obj) -> None:
    runtime_class = _runtime_class(store, pod)
    if runtime_class is None:
        return
    spec = pod.setdefault("spec", {})
    overhead = runtime_class.get("overhead")
    if isinstance(overhead, dict) and overhead.get("podFixed") is not None:
        fixed = overhead["podFixed"]
        if spec.get("overhead") is not None and not _same_resources(fixed, spec["overhead"]):
            raise _refuse(pod, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
        spec["overhead"] = dict(fixed)
    scheduling = runtime_class.get("scheduling")
    if not isinstance(scheduling, dict):
        return
    selector = scheduling.get("nodeSelector") or {}
    merged = dict(spec.get("nodeSelector") or {})
    for key, value in selector.items():
        if key in merged and merged[key] != value:
            raise _refuse(
                pod,
                f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = {value}; "
                f"pod.spec.nodeSelector[{key}] = {merged[key]}",
            )
        merged[key] = value
    if merged:
        spec["nodeSelector"] = merged
    tolerations = merge_tolerations(list(spec.get("tolerations") or []), list(scheduling.get("tolerations") or []))
    if tolerations:
        spec["tolerations"] = tolerations


def validate(store: Objects, pod: Obj) -> None:
    runtime_class = _runtime_class(store, pod)
    spec = pod.get("spec") or {}
    overhead = (runtime_class or {}).get("overhead")
    if isinstance(overhead, dict) and overhead.get("podFixed") is not None:
        if spec.get("overhead") is None or not _same_resources(overhead["podFixed"], spec["overhead"]):
            raise _refuse(pod, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
    elif spec.get("overhead") is not None:
        raise _refuse(pod, "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead")


def _covers(broad: Obj, narrow: Obj) -> bool:
    """isSuperset: ``broad`` tolerates every taint ``narrow`` does, for at least as long."""
    if broad == narrow:
        return True
    key = broad.get("key", "")
    if narrow.get("key", "") != key and (key != "" or broad.get("operator") != "Exists"):
        return False
    if narrow.get("effect", "") != broad.get("effect", "") and broad.get("effect", ""):
        return False
    if broad.get("effect") == "NoExecute" and broad.get("tolerationSeconds") is not None:
        seconds = narrow.get("tolerationSeconds")
        if seconds is None or int(seconds) > int(broad["tolerationSeconds"]):
            return False
    if broad.get("operator", "Equal") in ("Equal", ""):
        return narrow.get("operator", "Equal") in ("Equal", "") and narrow.get("value", "") == broad.get("value", "")
    return broad.get("operator") == "Exists"


def merge_tolerations(first: list[Any], second: list[Any]) -> list[Any]:
    """tolerations.MergeTolerations: both lists, in order, without a toleration another covers
    (of two equal ones the first is kept)."""
    every = [t for t in first + second if isinstance(t, dict)]
    merged: list[Obj] = []
    for index, toleration in enumerate(every):
        if any(_covers(kept, toleration) for kept in merged):
            continue
        if any(later != toleration and _covers(later, toleration) for later in every[index + 1 :]):
            continue
        merged.append(toleration)
    return merged


__all__ = ["RUNTIME_CLASSES", "admit", "merge_tolerations", "validate"]
