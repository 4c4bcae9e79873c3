"""What Karmada's mutating webhook does to (Cluster)PropagationPolicies, without a webhook.

Two halves, written differently on purpose:

* :func:`admission_metadata` gives the permanent-id label and the policy
  finalizer a new policy lacks. They are **written** onto the policy once
  (the detector's policy reconcile does it): the id is the policy's identity
  that claimed templates and bindings carry, so it must be stable, and the
  finalizer must be on the stored object for deletion to wait for the release.
* :func:`defaulted_spec` gives the spec defaults the controllers rely on. They
  are **applied when reading** and never written back, so a user's
  ``kubectl apply`` owns the spec alone (no generation bumps, no fight with
  GitOps tools); the bindings the detector writes carry the defaulted values,
  which is what the scheduler reads.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from karmada.api.keys import (
    CLUSTER_PROPAGATION_POLICY_CONTROLLER_FINALIZER,
    CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL,
    PROPAGATION_POLICY_CONTROLLER_FINALIZER,
    PROPAGATION_POLICY_PERMANENT_ID_LABEL,
)

Obj = dict[str, Any]

SERVICE_IMPORT = ("multicluster.x-k8s.io/v1alpha1", "ServiceImport")
DEFAULT_GRACE_PERIOD_SECONDS = 600


def policy_id_label(cluster_wide: bool) -> str:
    return CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL if cluster_wide else PROPAGATION_POLICY_PERMANENT_ID_LABEL


def policy_finalizer(cluster_wide: bool) -> str:
    return CLUSTER_PROPAGATION_POLICY_CONTROLLER_FINALIZER if cluster_wide else PROPAGATION_POLICY_CONTROLLER_FINALIZER


def admission_metadata(
    policy: Mapping[str, Any], cluster_wide: bool, new_id: Callable[[], str] = lambda: str(uuid.uuid4())
) -> Obj | None:
    """A copy of ``policy`` with the permanent-id label and finalizer added, or None when it has both.

    A policy being deleted gets nothing (a finalizer cannot be added then).
    """
    metadata = policy.get("metadata") or {}
    if metadata.get("deletionTimestamp"):
        return None
    label, finalizer = policy_id_label(cluster_wide), policy_finalizer(cluster_wide)
    has_id = bool((metadata.get("labels") or {}).get(label))
    has_finalizer = finalizer in (metadata.get("finalizers") or [])
    if has_id and has_finalizer:
        return None
    updated = copy.deepcopy(dict(policy))
    meta = updated.setdefault("metadata", {})
    if not has_id:
        meta.setdefault("labels", {})[label] = new_id()
    if not has_finalizer:
        meta.setdefault("finalizers", []).append(finalizer)
    return updated


def _replica_scheduling_type(placement: Mapping[str, Any]) -> str:
    strategy = placement.get("replicaScheduling")
    if strategy is None:
        return "Duplicated"  # Karmada: no strategy means every cluster gets all replicas
    return str(strategy.get("replicaSchedulingType") or "Divided")  # the CRD's default


def defaulted_spec(spec: Mapping[str, Any], namespace: str | None) -> Obj:
    """A copy of a PropagationSpec with the webhook's defaults.

    ``namespace`` is the PropagationPolicy's (None for a ClusterPropagationPolicy,
    whose selectors keep an empty namespace, meaning all).
    """
    out = copy.deepcopy(dict(spec))
    selectors = out.get("resourceSelectors") or []
    if namespace:
        for selector in selectors:
            if not selector.get("namespace"):
                selector["namespace"] = namespace
    placement = out.get("placement")
    if isinstance(placement, dict):
        for constraint in placement.get("spreadConstraints") or []:
            if not constraint.get("spreadByField") and not constraint.get("spreadByLabel"):
                constraint["spreadByField"] = "cluster"
            if not constraint.get("minGroups"):
                constraint["minGroups"] = 1
        strategy = placement.get("replicaScheduling")
        divided = _replica_scheduling_type(placement) == "Divided"
        if divided and isinstance(strategy, dict) and not strategy.get("replicaDivisionPreference"):
            strategy["replicaDivisionPreference"] = "Weighted"
    if any((s.get("apiVersion"), s.get("kind")) == SERVICE_IMPORT for s in selectors):
        out["propagateDeps"] = True
    application = (out.get("failover") or {}).get("application")
    if not isinstance(application, dict):
        return out
    if application.get("purgeMode", "Gracefully") == "Gracefully" and application.get("gracePeriodSeconds") is None:
        application["gracePeriodSeconds"] = DEFAULT_GRACE_PERIOD_SECONDS
    return out


def defaulted_policy(policy: Mapping[str, Any]) -> Obj:
    """A copy of a (Cluster)PropagationPolicy object with :func:`defaulted_spec` applied."""
    out = dict(policy)
    namespace = (policy.get("metadata") or {}).get("namespace") if policy.get("kind") == "PropagationPolicy" else None
    out["spec"] = defaulted_spec(policy.get("spec") or {}, namespace)
    return out
