"""Binding status from Work status: which clusters reported what, and whether
every Work of a binding is applied (Karmada's ``helper.AggregateResourceBindingWorkStatus``).

Pure functions over JSON objects (no I/O, no clock: callers pass ``now``), so
the binding-status controller only reads caches, calls these and writes what
changed.
"""

from karmada.aggregation.status import (
    FULLY_APPLIED,
    FULLY_APPLIED_FAILED_MESSAGE,
    FULLY_APPLIED_FAILED_REASON,
    FULLY_APPLIED_SUCCESS_MESSAGE,
    FULLY_APPLIED_SUCCESS_REASON,
    ManifestNotFound,
    aggregated_items,
    binding_status,
    fully_applied_condition,
    newly_failed,
    target_clusters,
)

__all__ = [
    "FULLY_APPLIED",
    "FULLY_APPLIED_FAILED_MESSAGE",
    "FULLY_APPLIED_FAILED_REASON",
    "FULLY_APPLIED_SUCCESS_MESSAGE",
    "FULLY_APPLIED_SUCCESS_REASON",
    "ManifestNotFound",
    "aggregated_items",
    "binding_status",
    "fully_applied_condition",
    "newly_failed",
    "target_clusters",
]
