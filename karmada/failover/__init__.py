"""Failover as pure functions: ClusterTaintPolicy matching, NoExecute taint
eviction timing, graceful eviction tasks (creation and removal rules),
application failure detection and state preservation, and the safety check
that an eviction leaves the workload somewhere.

No I/O: the controllers in ``controlplane`` read caches, call these, and write
the results (``taint_manager``, ``cluster_taint_policy``, ``graceful_eviction``,
``application_failover``).
"""

from karmada.failover.application import detect_failures, unhealthy_clusters
from karmada.failover.conditions import (
    APPLICATION_FAILOVER_HOLDS,
    CONDITION_FAILOVER,
    CONDITION_GRACEFUL_EVICTION,
    REASON_CLUSTER_NOT_TAINTED,
    REASON_EVICTED,
    REASON_EVICTION_PENDING,
    REASON_NO_CLUSTER_FIT,
    REASON_UNHEALTHY_NO_CLUSTER_FIT,
    TAINT_MANAGER_HOLDS,
    failover_condition_changes,
)
from karmada.failover.eviction import (
    EvictionTask,
    evict_cluster,
    eviction_delay,
    matching_tolerations,
    no_execute_taints,
    purge_mode_for_cluster_failover,
    replacement_problem,
)
from karmada.failover.state import StateError, jsonpath_value, preserved_label_state
from karmada.failover.taint_policies import condition_matches, policy_taints, taints_message
from karmada.failover.tasks import TaskAssessment, assess_tasks, next_retry

__all__ = [
    "APPLICATION_FAILOVER_HOLDS",
    "CONDITION_FAILOVER",
    "CONDITION_GRACEFUL_EVICTION",
    "REASON_CLUSTER_NOT_TAINTED",
    "REASON_EVICTED",
    "REASON_EVICTION_PENDING",
    "REASON_NO_CLUSTER_FIT",
    "REASON_UNHEALTHY_NO_CLUSTER_FIT",
    "TAINT_MANAGER_HOLDS",
    "EvictionTask",
    "StateError",
    "TaskAssessment",
    "assess_tasks",
    "condition_matches",
    "detect_failures",
    "evict_cluster",
    "eviction_delay",
    "failover_condition_changes",
    "jsonpath_value",
    "matching_tolerations",
    "next_retry",
    "no_execute_taints",
    "policy_taints",
    "preserved_label_state",
    "purge_mode_for_cluster_failover",
    "replacement_problem",
    "taints_message",
    "unhealthy_clusters",
]
