"""Karmada's well-known label and annotation keys, finalizers and namespaces.

These strings are wire contract: member objects, bindings and Works written by
real Karmada carry them, and ours must be readable by Karmada's tools (and the
other way round). Never change a value here.
"""

from __future__ import annotations

# --- Labels -----------------------------------------------------------------
PROPAGATION_POLICY_PERMANENT_ID_LABEL = "propagationpolicy.karmada.io/permanent-id"
CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL = "clusterpropagationpolicy.karmada.io/permanent-id"
RESOURCE_BINDING_PERMANENT_ID_LABEL = "resourcebinding.karmada.io/permanent-id"
CLUSTER_RESOURCE_BINDING_PERMANENT_ID_LABEL = "clusterresourcebinding.karmada.io/permanent-id"
WORK_PERMANENT_ID_LABEL = "work.karmada.io/permanent-id"
MANAGED_LABEL = "karmada.io/managed"
MANAGED_LABEL_VALUE = "true"
SYSTEM_LABEL = "karmada.io/system"
SYSTEM_LABEL_VALUE = "true"
DEPENDED_BY_LABEL_KEY_PREFIX = "resourcebinding.karmada.io/depended-by-"
BINDING_MANAGED_BY_LABEL = "binding.karmada.io/managed-by"
RESOURCE_TEMPLATE_CLAIMED_BY_LABEL = "resourcetemplate.karmada.io/claimed-by"
RETAIN_REPLICAS_LABEL = "resourcetemplate.karmada.io/retain-replicas"
RETAIN_REPLICAS_VALUE = "true"
DELETION_PROTECTION_LABEL = "resourcetemplate.karmada.io/deletion-protected"
DELETION_PROTECTION_ALWAYS = "Always"
SKIP_AUTO_PROPAGATION_LABEL = "namespace.karmada.io/skip-auto-propagation"

# --- Annotations -------------------------------------------------------------
PROPAGATION_POLICY_NAMESPACE_ANNOTATION = "propagationpolicy.karmada.io/namespace"
PROPAGATION_POLICY_NAME_ANNOTATION = "propagationpolicy.karmada.io/name"
CLUSTER_PROPAGATION_POLICY_ANNOTATION = "clusterpropagationpolicy.karmada.io/name"
APPLIED_PLACEMENT_ANNOTATION = "policy.karmada.io/applied-placement"
BINDING_DEPENDENCIES_ANNOTATION = "resourcebinding.karmada.io/dependencies"
APPLIED_OVERRIDES_ANNOTATION = "policy.karmada.io/applied-overrides"
APPLIED_CLUSTER_OVERRIDES_ANNOTATION = "policy.karmada.io/applied-cluster-overrides"
RESOURCE_BINDING_NAMESPACE_ANNOTATION = "resourcebinding.karmada.io/namespace"
RESOURCE_BINDING_NAME_ANNOTATION = "resourcebinding.karmada.io/name"
CLUSTER_RESOURCE_BINDING_ANNOTATION = "clusterresourcebinding.karmada.io/name"
WORK_NAMESPACE_ANNOTATION = "work.karmada.io/namespace"
WORK_NAME_ANNOTATION = "work.karmada.io/name"
CONFLICT_RESOLUTION_ANNOTATION = "work.karmada.io/conflict-resolution"
CONFLICT_RESOLUTION_OVERWRITE = "overwrite"
CONFLICT_RESOLUTION_ABORT = "abort"
RESOURCE_TEMPLATE_UID_ANNOTATION = "resourcetemplate.karmada.io/uid"
RESOURCE_TEMPLATE_GENERATION_ANNOTATION = "resourcetemplate.karmada.io/generation"
MANAGED_ANNOTATIONS_ANNOTATION = "resourcetemplate.karmada.io/managed-annotations"
MANAGED_LABELS_ANNOTATION = "resourcetemplate.karmada.io/managed-labels"

# --- Finalizers --------------------------------------------------------------
CLUSTER_CONTROLLER_FINALIZER = "karmada.io/cluster-controller"
EXECUTION_CONTROLLER_FINALIZER = "karmada.io/execution-controller"
BINDING_CONTROLLER_FINALIZER = "karmada.io/binding-controller"
CLUSTER_RESOURCE_BINDING_CONTROLLER_FINALIZER = "karmada.io/cluster-resource-binding-controller"
PROPAGATION_POLICY_CONTROLLER_FINALIZER = "karmada.io/propagation-policy-controller"
CLUSTER_PROPAGATION_POLICY_CONTROLLER_FINALIZER = "karmada.io/cluster-propagation-policy-controller"
BINDING_DEPENDENCIES_DISTRIBUTOR_FINALIZER = "karmada.io/binding-dependencies-distributor"

# --- Namespaces ----------------------------------------------------------------
NAMESPACE_KARMADA_SYSTEM = "karmada-system"
NAMESPACE_KARMADA_CLUSTER = "karmada-cluster"
NAMESPACE_DEFAULT = "default"
EXECUTION_SPACE_PREFIX = "karmada-es-"

# --- Cluster taints ------------------------------------------------------------
TAINT_CLUSTER_NOT_READY = "cluster.karmada.io/not-ready"
TAINT_CLUSTER_UNREACHABLE = "cluster.karmada.io/unreachable"
TAINT_CLUSTER_UNSCHEDULABLE = "cluster.karmada.io/unschedulable"

# --- Scheduler -------------------------------------------------------------------
DEFAULT_SCHEDULER_NAME = "default-scheduler"
