"""Which overrides shaped each cluster's copy, read back from the Works.

The binding controller records on every Work the rules it applied
(``policy.karmada.io/applied-(cluster-)overrides``: policy name and
overriders, see :mod:`karmada.works.applied`). This module turns each
overrider into the paths it touched and the value the Work's manifest now
holds there, and finds the rule index by comparing with the policy's
``overrideRules`` when the policy is at hand.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from karmada.api.errors import APIValidationError
from karmada.api.keys import APPLIED_CLUSTER_OVERRIDES_ANNOTATION, APPLIED_OVERRIDES_ANNOTATION
from karmada.api.override import ClusterOverridePolicy, OverridePolicy, Overriders
from karmada.overrides import PatchError
from karmada.overrides.jsonpatch import get
from karmada.works.applied import overriders_shadow

Obj = dict[str, Any]

_POD_SPEC = {"Pod": "/spec"}
_TEMPLATE_KINDS = ("ReplicaSet", "Deployment", "DaemonSet", "StatefulSet", "Job")


def _pod_spec(kind: str) -> str | None:
    if kind in _POD_SPEC:
        return _POD_SPEC[kind]
    if kind == "CronJob":
        return "/spec/jobTemplate/spec/template/spec"
    return "/spec/template/spec" if kind in _TEMPLATE_KINDS else None


def _at(manifest: Obj, path: str) -> Any:
    try:
        return get(manifest, path)
    except (PatchError, ValueError, IndexError, KeyError, TypeError):
        return None


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _containers(manifest: Obj) -> list[tuple[str, Obj]]:
    spec = _pod_spec(str(manifest.get("kind", "")))
    containers = _at(manifest, f"{spec}/containers") if spec else None
    if not isinstance(containers, list):
        return []
    return [(f"{spec}/containers/{i}", c) for i, c in enumerate(containers) if isinstance(c, dict)]


def _touched(manifest: Obj, overriders: Overriders) -> list[Obj]:
    """One entry per (overrider, path): what it did and the value now in the manifest."""
    out: list[Obj] = []

    def add(kind: str, path: str, **what: Any) -> None:
        out.append({"overrider": kind, "path": path, **what, "value": _at(manifest, path)})

    for p in overriders.plaintext or []:
        add("plaintext", p.path, operator=p.operator)
    for image in overriders.image_overrider or []:
        what = {"component": image.component, "operator": image.operator}
        if image.predicate is not None:
            add("imageOverrider", image.predicate.path, **what)
        else:
            for base, _ in _containers(manifest):
                add("imageOverrider", f"{base}/image", **what)
    for kind, field, items in (
        ("commandOverrider", "command", overriders.command_overrider or []),
        ("argsOverrider", "args", overriders.args_overrider or []),
    ):
        for item in items:
            for base, container in _containers(manifest):
                if container.get("name") == item.container_name:
                    add(kind, f"{base}/{field}", operator=item.operator)
    for kind, field, marks in (
        ("labelsOverrider", "labels", overriders.labels_overrider or []),
        ("annotationsOverrider", "annotations", overriders.annotations_overrider or []),
    ):
        for mark in marks:
            for key in sorted(mark.value or {}):
                add(kind, f"/metadata/{field}/{_escape(key)}", operator=mark.operator)
    for f in overriders.field_overrider or []:
        for op in [*(f.json_ or []), *(f.yaml or [])]:
            add("fieldOverrider", f"{f.field_path}{op.sub_path}", operator=op.operator)
    return out


def _rule_index(policy: OverridePolicy | ClusterOverridePolicy | None, shadow: Obj) -> int | None:
    if policy is None:
        return None
    for index, rule in enumerate(policy.spec.override_rules or []):
        if overriders_shadow(rule.overriders) == shadow:
            return index
    return None


def _parse(policies: Sequence[Obj], model: type[OverridePolicy] | type[ClusterOverridePolicy]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for obj in policies:
        try:
            policy = model.from_dict(obj)
        except APIValidationError:
            continue  # a policy the server kept but we cannot read: its rules go unnamed
        found[policy.metadata.name or ""] = policy
    return found


def applied_overrides(
    work: Mapping[str, Any],
    manifest: Obj,
    namespace: str = "",
    override_policies: Sequence[Obj] = (),
    cluster_override_policies: Sequence[Obj] = (),
) -> list[Obj]:
    """Every overrider a Work records as applied, cluster-wide policies first (the order
    they were applied in), with the paths it touched and their values in ``manifest``;
    ``namespace`` is the template's (OverridePolicies live there)."""
    annotations = (work.get("metadata") or {}).get("annotations") or {}
    entries: list[Obj] = []
    for key, kind, policies in (
        (
            APPLIED_CLUSTER_OVERRIDES_ANNOTATION,
            "ClusterOverridePolicy",
            _parse(cluster_override_policies, ClusterOverridePolicy),
        ),
        (APPLIED_OVERRIDES_ANNOTATION, "OverridePolicy", _parse(override_policies, OverridePolicy)),
    ):
        text = annotations.get(key)
        if not text:
            continue
        try:
            shadows = json.loads(text)
        except ValueError:
            entries.append({"policy": f"{kind} ?", "error": f"annotation {key} is not JSON"})
            continue
        for shadow in shadows if isinstance(shadows, list) else []:
            name = str(shadow.get("policyName", ""))
            raw = shadow.get("overriders") or {}
            try:
                overriders = Overriders.from_dict(raw)
            except APIValidationError as exc:
                entries.append({"policy": f"{kind} {name}", "error": str(exc)})
                continue
            policy = policies.get(name)
            label = f"{kind} {namespace}/{name}" if kind == "OverridePolicy" and namespace else f"{kind} {name}"
            rule = _rule_index(policy, raw)
            for touched in _touched(manifest, overriders):
                entries.append({"policy": label, "rule": rule, **touched})
    return entries
