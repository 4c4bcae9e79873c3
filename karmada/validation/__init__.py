"""Karmada's admission rules as pure functions: what its ``karmada-webhook``
(and, for Cluster, its aggregated API server) refuses, with the same field
paths and sentences, and what it fills in on the way.

Used by the ``karmada-webhook`` program for AdmissionReviews and by
``kubectl karmada validate`` offline.
"""

from karmada.validation.admission import (
    CUSTOMIZATION_RULES,
    VALIDATED_KINDS,
    Context,
    Request,
    review,
)
from karmada.validation.errors import FieldError, aggregate
from karmada.validation.mutation import MUTATED_KINDS, json_patch, mutate
from karmada.validation.policy import override_spec_errors, propagation_spec_errors

__all__ = [
    "CUSTOMIZATION_RULES",
    "MUTATED_KINDS",
    "VALIDATED_KINDS",
    "Context",
    "FieldError",
    "Request",
    "aggregate",
    "json_patch",
    "mutate",
    "override_spec_errors",
    "propagation_spec_errors",
    "review",
]
