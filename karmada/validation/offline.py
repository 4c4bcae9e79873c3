"""``kubectl karmada validate``'s checks: the API models first, then the webhook's rules.

Each Karmada object that passes the models goes through what the API server
would do with it on create: the mutating defaults, then the validating rules
(minus those that need the server: the permanent-id label the mutating webhook
adds is present by construction). ResourceInterpreterCustomizations in the
same input count as existing ones for each other, as if applied together.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import yaml

from karmada.api.parse import DocumentCheck, check_documents
from karmada.validation.admission import Context, Request, review
from karmada.validation.mutation import mutate


def _documents(text: str) -> list[Any]:
    try:
        return [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError:
        return []


def _crd_defaults(obj: dict[str, Any]) -> dict[str, Any]:
    """The CRD schema defaults the rules rely on, which the API server fills in before admission."""
    if obj.get("kind") not in ("PropagationPolicy", "ClusterPropagationPolicy"):
        return obj
    failover = (obj.get("spec") or {}).get("failover")
    if not isinstance(failover, dict):
        return obj
    out = copy.deepcopy(obj)
    failover = out["spec"]["failover"]
    for part in ("application", "cluster"):
        if isinstance(failover.get(part), dict):
            failover[part].setdefault("purgeMode", "Gracefully")
    if isinstance(failover.get("application"), dict):
        conditions = failover["application"].setdefault("decisionConditions", {})
        if isinstance(conditions, dict):
            conditions.setdefault("tolerationSeconds", 300)
    return out


def check_with_rules(text: str) -> list[DocumentCheck]:
    """:func:`karmada.api.parse.check_documents`, with the webhook's denial added to each Karmada object's errors."""
    checks = check_documents(text)
    documents = _documents(text)
    customizations = [
        d for d in documents if isinstance(d, dict) and d.get("kind") == "ResourceInterpreterCustomization"
    ]
    context = Context(customizations=customizations, allow_no_execute_taint_policy=True, offline=True)
    results: list[DocumentCheck] = []
    for check in checks:
        if not check.karmada_kind or check.errors or check.index >= len(documents):
            results.append(check)
            continue
        obj = _crd_defaults(documents[check.index])
        namespace = str((obj.get("metadata") or {}).get("namespace") or "")
        mutated = mutate(check.kind, obj, "CREATE", namespace)
        message = review(Request(check.kind, "CREATE", mutated, namespace=namespace), context)
        results.append(dataclasses.replace(check, errors=(message,)) if message else check)
    return results
