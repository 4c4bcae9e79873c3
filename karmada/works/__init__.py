"""Binding -> Work: the pure part of the binding controller (reference 6.1-6.3).

Which clusters a binding's Works belong in, what each Work holds (replicas
revised, overrides applied, decorated and pruned like Karmada's), and whether
the stored Work already says so. No I/O: the controller reads its caches,
calls these, and writes only what changed.
"""

from karmada.works.applied import applied_overrides_annotations, go_json, overriders_shadow
from karmada.works.direct_purge import (
    EVENT_CREATE_WORK_SUCCEED,
    EVENT_PURGE_PENDING,
    EVENT_PURGE_SUCCEED,
    PurgeProgress,
    created_message,
    pending_message,
    purge_progress,
    purged_message,
)
from karmada.works.prune import prune, remove_job_ttl
from karmada.works.render import (
    CLUSTER_RESOURCE_BINDING,
    RESOURCE_BINDING,
    RenderedWork,
    RenderError,
    Scope,
    completions_by_cluster,
    conflict_resolution,
    desired_work,
    directly_purged_clusters,
    expected_clusters,
    is_workload,
    record_managed_keys,
    render_work,
    suspend_dispatching,
    target_clusters,
    work_changed,
)
from karmada.works.selection import policy_selectors, policy_selects

# Karmada's event reasons (pkg/events) for what the binding controller does
EVENT_SYNC_WORK_SUCCEED = "SyncWorkSucceed"
EVENT_SYNC_WORK_FAILED = "SyncWorkFailed"
EVENT_CLEANUP_WORK_FAILED = "CleanupWorkFailed"
EVENT_APPLY_OVERRIDE_POLICY_SUCCEED = "ApplyOverridePolicySucceed"
EVENT_APPLY_OVERRIDE_POLICY_FAILED = "ApplyOverridePolicyFailed"

# Ours: Karmada reports a failed override only in events and logs. The binding
# carries this condition once an override has failed (False, naming the cluster,
# policy, rule and path); it turns True when every override applies again.
CONDITION_OVERRIDES_APPLIED = "OverridesApplied"
REASON_APPLY_OVERRIDE_POLICY_FAILED = "ApplyOverridePolicyFailed"
REASON_APPLY_OVERRIDE_POLICY_SUCCEED = "ApplyOverridePolicySucceed"

__all__ = [
    "CLUSTER_RESOURCE_BINDING",
    "CONDITION_OVERRIDES_APPLIED",
    "EVENT_APPLY_OVERRIDE_POLICY_FAILED",
    "EVENT_APPLY_OVERRIDE_POLICY_SUCCEED",
    "EVENT_CLEANUP_WORK_FAILED",
    "EVENT_CREATE_WORK_SUCCEED",
    "EVENT_PURGE_PENDING",
    "EVENT_PURGE_SUCCEED",
    "EVENT_SYNC_WORK_FAILED",
    "EVENT_SYNC_WORK_SUCCEED",
    "REASON_APPLY_OVERRIDE_POLICY_FAILED",
    "REASON_APPLY_OVERRIDE_POLICY_SUCCEED",
    "RESOURCE_BINDING",
    "PurgeProgress",
    "RenderError",
    "RenderedWork",
    "Scope",
    "applied_overrides_annotations",
    "completions_by_cluster",
    "conflict_resolution",
    "created_message",
    "desired_work",
    "directly_purged_clusters",
    "expected_clusters",
    "go_json",
    "is_workload",
    "overriders_shadow",
    "pending_message",
    "policy_selectors",
    "policy_selects",
    "prune",
    "purge_progress",
    "purged_message",
    "record_managed_keys",
    "remove_job_ttl",
    "render_work",
    "suspend_dispatching",
    "target_clusters",
    "work_changed",
]
