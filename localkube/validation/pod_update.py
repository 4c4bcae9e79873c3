"""A Pod's spec is immutable on update, except for a few fields (kubernetes/kubernetes
pkg/apis/core/validation/validation.go: ValidatePodUpdate, ValidateContainerUpdates,
validateOnlyAddedTolerations, validateOnlyDeletedSchedulingGates,
validateNodeSelectorMutation, validateNodeAffinityMutation).

What may change through a plain update (PUT, PATCH, apply) of ``pods``:

- ``spec.containers[*].image`` and ``spec.initContainers[*].image`` (not the
  number of containers);
- ``spec.activeDeadlineSeconds``: set, or lowered; never raised or removed;
- ``spec.tolerations``: new ones added; an existing one may change only its
  ``tolerationSeconds``;
- ``spec.terminationGracePeriodSeconds``: only to 1, and only from a negative value;
- ``spec.schedulingGates``: only removed; while a Pod is gated its
  ``nodeSelector`` may gain entries and its required node affinity may gain
  expressions inside its existing terms.

Everything else, ``spec.nodeName`` included (the scheduler sets it once through
``pods/binding``), is refused with one Forbidden error on ``spec`` that lists
those fields and ends with a diff (:mod:`localkube.validation.pod_spec_diff`).
The status, binding and ephemeralcontainers subresources have their own rules
and do not come here.

Equality is apimachinery's ``Semantic.DeepEqual`` read on JSON: null, absent
and empty lists or maps are one value. A ``false``, ``0`` or ``""`` written
where the stored object has nothing is a change here although Go, decoding
into a non-pointer field, would see none; clients that send back what they
read never meet the difference.
"""

from __future__ import annotations

from typing import Any

from localkube.errors import Cause, GoLiteral, field_forbidden, field_invalid, field_required
from localkube.validation.fields import go_map, list_at, obj_at
from localkube.validation.pod_spec_diff import pod_spec_diff, same
from localkube.validation.pods import MAX_INT32, validate_pod

Obj = dict[str, Any]

UPDATABLE_FIELDS = (
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
)
FORBIDDEN = "pod updates may not change fields other than " + ",".join(UPDATABLE_FIELDS)
TOLERATION_CHANGED = "existing toleration can not be modified except its tolerationSeconds"
TOLERATION_FIELDS = ("key", "operator", "value", "effect")
NODE_AFFINITY = "spec.affinity.nodeAffinity"
TERMS = f"{NODE_AFFINITY}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"


def validate_pod_update(obj: Obj, old: Obj) -> list[Cause]:
    """ValidatePodUpdate's spec rules, after the new Pod's own validation."""
    causes = validate_pod(obj)
    spec, old_spec = obj_at(obj.get("spec")), obj_at(old.get("spec"))
    for field in ("containers", "initContainers"):
        found, stop = _container_updates(list_at(spec.get(field)), list_at(old_spec.get(field)), f"spec.{field}")
        causes += found
        if stop:
            return _unique(causes)
    found, stop = _deadline(spec.get("activeDeadlineSeconds"), old_spec.get("activeDeadlineSeconds"))
    causes += found
    if stop:
        return _unique(causes)
    causes += _only_added_tolerations(list_at(spec.get("tolerations")), list_at(old_spec.get("tolerations")))
    causes += _only_deleted_gates(list_at(spec.get("schedulingGates")), list_at(old_spec.get("schedulingGates")))
    if same(spec, old_spec):
        return _unique(causes)
    munged = _munge(spec, old_spec)
    if list_at(old_spec.get("schedulingGates")):
        causes += _gated_mutations(munged, old_spec)
    if not same(munged, old_spec):
        causes.append(field_forbidden("spec", FORBIDDEN + "\n" + pod_spec_diff(old_spec, munged)))
    return _unique(causes)


def _unique(causes: list[Cause]) -> list[Cause]:
    """kube folds identical errors into one (ErrorList.ToAggregate): the image check runs twice."""
    seen: set[tuple[str, str | None]] = set()
    out = []
    for cause in causes:
        key = (cause.message, cause.field)
        if key not in seen:
            seen.add(key)
            out.append(cause)
    return out


def _container_updates(new: list[Any], old: list[Any], path: str) -> tuple[list[Cause], bool]:
    if len(new) != len(old):
        return [field_forbidden(path, "pod updates may not add or remove containers")], True
    causes = []
    for index, raw in enumerate(new):
        image = obj_at(raw).get("image")
        text = image if isinstance(image, str) else ""
        if not text:
            causes.append(field_required(f"{path}[{index}].image"))
        if text.strip() != text:
            causes.append(field_invalid(f"{path}[{index}].image", text, "must not have leading or trailing whitespace"))
    return causes, False


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _deadline(new: Any, old: Any) -> tuple[list[Cause], bool]:
    """Set from nothing, or lowered; a value out of range or raised ends the update checks there."""
    path = "spec.activeDeadlineSeconds"
    if _is_int(new):
        if new < 0 or new > MAX_INT32:
            return [field_invalid(path, new, f"must be between 0 and {MAX_INT32}, inclusive")], True
        if _is_int(old) and old < new:
            return [field_invalid(path, new, "must be less than or equal to previous value")], True
    elif new is None and old is not None:
        # a nil *int64 prints as the string "null" in apimachinery's field errors
        return [field_invalid(path, "null", "must not update from a positive integer to nil value")], False
    return [], False


def _toleration_identity(toleration: Any) -> tuple[str, ...]:
    item = obj_at(toleration)
    return tuple(str(item.get(f) or "") for f in TOLERATION_FIELDS)


def _only_added_tolerations(new: list[Any], old: list[Any]) -> list[Cause]:
    """Every stored toleration is still there; only its tolerationSeconds may differ."""
    present = {_toleration_identity(t) for t in new}
    for toleration in old:
        if _toleration_identity(toleration) not in present:
            return [field_forbidden("spec.tolerations", TOLERATION_CHANGED)]
    return []


def _only_deleted_gates(new: list[Any], old: list[Any]) -> list[Cause]:
    old_names = {obj_at(g).get("name") for g in old}
    causes = []
    # kube walks a map of name to index here, in Go's random order (index order here); as in
    # that map, the last index of a repeated name is the one reported
    last = {obj_at(g).get("name"): i for i, g in enumerate(new)}
    for name, index in sorted(last.items(), key=lambda item: item[1]):
        if name not in old_names:
            causes.append(
                field_forbidden(
                    f"spec.schedulingGates[{index}].name",
                    f"only deletion is allowed, but found new scheduling gate '{name}'",
                )
            )
    return causes


def _munge(spec: Obj, old_spec: Obj) -> Obj:
    """The new spec with the updatable fields taken from the stored one."""
    munged = dict(spec)
    for field in ("containers", "initContainers"):
        containers = list_at(spec.get(field))
        old_containers = list_at(old_spec.get(field))
        if containers:
            munged[field] = [
                _with(obj_at(c), "image", obj_at(old_containers[i]).get("image")) for i, c in enumerate(containers)
            ]
    for field in ("activeDeadlineSeconds", "schedulingGates", "tolerations"):
        munged = _with(munged, field, old_spec.get(field))
    grace, old_grace = spec.get("terminationGracePeriodSeconds"), old_spec.get("terminationGracePeriodSeconds")
    if isinstance(old_grace, int) and old_grace < 0 and _is_int(grace) and grace == 1:
        munged["terminationGracePeriodSeconds"] = old_grace
    return munged


def _with(obj: Obj, key: str, value: Any) -> Obj:
    out = dict(obj)
    if value is None:
        out.pop(key, None)
    else:
        out[key] = value
    return out


def _gated_mutations(munged: Obj, old_spec: Obj) -> list[Cause]:
    """A gated Pod may narrow where it runs: additions to nodeSelector and to its required node affinity.

    ``munged`` is brought back to the stored values so the final comparison sees only other changes.
    """
    causes: list[Cause] = []
    selector, old_selector = obj_at(munged.get("nodeSelector")), obj_at(old_spec.get("nodeSelector"))
    if not same(selector, old_selector):
        if any(selector.get(k) != v for k, v in old_selector.items()):
            causes.append(
                field_invalid(
                    "spec.nodeSelector",
                    go_map(selector),
                    "only additions to spec.nodeSelector are allowed (no mutations or deletions)",
                )
            )
        if old_spec.get("nodeSelector") is None:
            munged.pop("nodeSelector", None)
        else:
            munged["nodeSelector"] = old_spec["nodeSelector"]
    affinity, old_affinity = munged.get("affinity"), old_spec.get("affinity")
    node_affinity = obj_at(affinity).get("nodeAffinity")
    old_node_affinity = obj_at(old_affinity).get("nodeAffinity")
    if not same(node_affinity, old_node_affinity):
        causes += _node_affinity_mutation(obj_at(node_affinity), obj_at(old_node_affinity))
        rest = {k: v for k, v in obj_at(affinity).items() if k != "nodeAffinity"}
        if old_node_affinity is not None:
            munged["affinity"] = {**rest, "nodeAffinity": old_node_affinity}
        elif old_affinity is None and all(same(v, None) for v in rest.values()):
            munged.pop("affinity", None)
        else:
            munged["affinity"] = rest
    return causes


def _node_affinity_mutation(new: Obj, old: Obj) -> list[Cause]:
    required = old.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is None:
        return []  # nothing was required: anything may be set
    old_terms = list_at(obj_at(required).get("nodeSelectorTerms"))
    new_terms = list_at(obj_at(new.get("requiredDuringSchedulingIgnoredDuringExecution")).get("nodeSelectorTerms"))
    if old_terms and len(old_terms) != len(new_terms):
        return [
            field_invalid(
                TERMS, go_terms(new_terms), "no additions/deletions to non-empty NodeSelectorTerms list are allowed"
            )
        ]
    causes = []
    for index, old_term in enumerate(old_terms):
        if not _only_additions(obj_at(new_terms[index]), obj_at(old_term)):
            causes.append(
                field_invalid(
                    f"{TERMS}[{index}]",
                    go_term(obj_at(new_terms[index])),
                    "only additions are allowed (no mutations or deletions)",
                )
            )
    return causes


def _only_additions(new: Obj, old: Obj) -> bool:
    for field in ("matchExpressions", "matchFields"):
        before, after = list_at(old.get(field)), list_at(new.get(field))
        if len(before) > len(after) or not all(same(a, b) for a, b in zip(before, after, strict=False)):
            return False
    return True


def _go_requirements(items: list[Any]) -> str:
    if not items:
        return "[]core.NodeSelectorRequirement(nil)"
    parts = []
    for raw in items:
        item = obj_at(raw)
        values = list_at(item.get("values"))
        shown = "[]string{" + ", ".join(f'"{v}"' for v in values) + "}" if values else "[]string(nil)"
        parts.append(
            f'core.NodeSelectorRequirement{{Key:"{item.get("key", "")}", '
            f'Operator:"{item.get("operator", "")}", Values:{shown}}}'
        )
    return "[]core.NodeSelectorRequirement{" + ", ".join(parts) + "}"


def go_term(term: Obj) -> GoLiteral:
    """A core.NodeSelectorTerm as Go's %#v prints it in an Invalid value."""
    return GoLiteral(
        "core.NodeSelectorTerm{MatchExpressions:"
        + _go_requirements(list_at(term.get("matchExpressions")))
        + ", MatchFields:"
        + _go_requirements(list_at(term.get("matchFields")))
        + "}"
    )


def go_terms(terms: list[Any]) -> GoLiteral:
    if not terms:
        return GoLiteral("[]core.NodeSelectorTerm(nil)")
    return GoLiteral("[]core.NodeSelectorTerm{" + ", ".join(str(go_term(obj_at(t))) for t in terms) + "}")
