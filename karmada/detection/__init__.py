"""The resource detector's pure rules beyond matching (:mod:`karmada.matching`):
the webhook's policy defaults, claim metadata, the binding a claimed template
gets, which updates matter, and preemption."""

from karmada.detection.admission import (
    admission_metadata,
    defaulted_policy,
    defaulted_spec,
    policy_finalizer,
    policy_id_label,
)
from karmada.detection.bindings import (
    DIFFERENT_OWNER_MESSAGE,
    binding_id_label,
    binding_kind,
    desired_binding,
    merged_binding,
    owned_by_other,
)
from karmada.detection.changes import changed_by_karmada, specification_changed
from karmada.detection.claims import claim_ids, with_claim, without_claim
from karmada.detection.preemption import deprioritized_preemptors, may_preempt

__all__ = [
    "DIFFERENT_OWNER_MESSAGE",
    "admission_metadata",
    "binding_id_label",
    "binding_kind",
    "changed_by_karmada",
    "claim_ids",
    "defaulted_policy",
    "defaulted_spec",
    "deprioritized_preemptors",
    "desired_binding",
    "may_preempt",
    "merged_binding",
    "owned_by_other",
    "policy_finalizer",
    "policy_id_label",
    "specification_changed",
    "with_claim",
    "without_claim",
]
