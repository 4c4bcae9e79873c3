"""The resource types localkube serves: built-in kinds and CRD-defined ones.

A :class:`ResourceType` says how a resource is addressed (group, version,
plural, scope), how it is discovered (short names, categories, verbs,
subresources) and how the generic REST logic treats it (status subresource,
generation, create-on-update, unconditional update, delete response).
Per-kind defaulting and validation live in :mod:`localkube.kinds`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
CREATE_ONLY = ("create",)


@dataclass
class ResourceType:
    """One served resource in one group/version."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    status: bool = False
    scale: bool = False
    extra_subresources: tuple[str, ...] = ()
    generation: bool = False
    create_on_update: bool = False
    unconditional_update: bool = True
    delete_returns_object: bool = False
    # storage shared between views of one kind (events and events.k8s.io)
    storage: str = ""
    # custom resources: the CRD's name and the version's schema and printer columns
    crd: str = ""
    schema: dict[str, Any] | None = None
    printer_columns: list[dict[str, Any]] = field(default_factory=list)
    selectable_fields: tuple[str, ...] = ()
    scale_paths: dict[str, str] = field(default_factory=dict)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def storage_key(self) -> str:
        return self.storage or f"{self.group}/{self.plural}"

    @property
    def custom(self) -> bool:
        return bool(self.crd)

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    def subresources(self) -> list[str]:
        subs = []
        if self.status:
            subs.append("status")
        if self.scale:
            subs.append("scale")
        subs.extend(self.extra_subresources)
        return subs


def _rt(group: str, version: str, kind: str, plural: str, namespaced: bool, **kw: Any) -> ResourceType:
    return ResourceType(group, version, kind, plural, namespaced, **kw)


BUILTIN: tuple[ResourceType, ...] = (
    _rt(
        "",
        "v1",
        "Namespace",
        "namespaces",
        False,
        short_names=("ns",),
        status=True,
        extra_subresources=("finalize",),
        delete_returns_object=True,
    ),
    _rt("", "v1", "ConfigMap", "configmaps", True, short_names=("cm",)),
    _rt("", "v1", "Secret", "secrets", True),
    _rt(
        "",
        "v1",
        "ServiceAccount",
        "serviceaccounts",
        True,
        short_names=("sa",),
        extra_subresources=("token",),
        delete_returns_object=True,
    ),
    _rt(
        "",
        "v1",
        "Service",
        "services",
        True,
        short_names=("svc",),
        categories=("all",),
        status=True,
        extra_subresources=("proxy",),
        create_on_update=True,
        delete_returns_object=True,
    ),
    _rt("", "v1", "Event", "events", True, short_names=("ev",), create_on_update=True, storage="events"),
    _rt(
        "",
        "v1",
        "Pod",
        "pods",
        True,
        short_names=("po",),
        categories=("all",),
        status=True,
        extra_subresources=(
            "attach",
            "binding",
            "eviction",
            "ephemeralcontainers",
            "exec",
            "log",
            "portforward",
            "proxy",
        ),
        delete_returns_object=True,
    ),
    _rt(
        "",
        "v1",
        "Node",
        "nodes",
        False,
        short_names=("no",),
        status=True,
        extra_subresources=("proxy",),
        delete_returns_object=True,
    ),
    _rt(
        "",
        "v1",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        True,
        short_names=("pvc",),
        status=True,
        delete_returns_object=True,
    ),
    _rt(
        "",
        "v1",
        "PersistentVolume",
        "persistentvolumes",
        False,
        short_names=("pv",),
        status=True,
        delete_returns_object=True,
    ),
    _rt("", "v1", "Endpoints", "endpoints", True, short_names=("ep",), create_on_update=True),
    _rt(
        "events.k8s.io",
        "v1",
        "Event",
        "events",
        True,
        short_names=("ev",),
        create_on_update=True,
        storage="events",
    ),
    _rt(
        "coordination.k8s.io",
        "v1",
        "Lease",
        "leases",
        True,
        create_on_update=True,
        unconditional_update=False,
    ),
    _rt(
        "certificates.k8s.io",
        "v1",
        "CertificateSigningRequest",
        "certificatesigningrequests",
        False,
        short_names=("csr",),
        status=True,
        extra_subresources=("approval",),
    ),
    _rt("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", False, create_on_update=True),
    _rt(
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRoleBinding",
        "clusterrolebindings",
        False,
        create_on_update=True,
    ),
    _rt("rbac.authorization.k8s.io", "v1", "Role", "roles", True, create_on_update=True),
    _rt("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", True, create_on_update=True),
    _rt(
        "apps",
        "v1",
        "Deployment",
        "deployments",
        True,
        short_names=("deploy",),
        categories=("all",),
        status=True,
        scale=True,
        generation=True,
    ),
    _rt(
        "apps",
        "v1",
        "StatefulSet",
        "statefulsets",
        True,
        short_names=("sts",),
        categories=("all",),
        status=True,
        scale=True,
        generation=True,
    ),
    _rt(
        "apps",
        "v1",
        "DaemonSet",
        "daemonsets",
        True,
        short_names=("ds",),
        categories=("all",),
        status=True,
        generation=True,
    ),
    _rt(
        "apps",
        "v1",
        "ReplicaSet",
        "replicasets",
        True,
        short_names=("rs",),
        categories=("all",),
        status=True,
        scale=True,
        generation=True,
    ),
    _rt("batch", "v1", "Job", "jobs", True, categories=("all",), status=True, generation=True),
    _rt(
        "batch",
        "v1",
        "CronJob",
        "cronjobs",
        True,
        short_names=("cj",),
        categories=("all",),
        status=True,
        generation=True,
    ),
    _rt(
        "networking.k8s.io",
        "v1",
        "Ingress",
        "ingresses",
        True,
        short_names=("ing",),
        status=True,
        generation=True,
    ),
    _rt(
        "policy",
        "v1",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        True,
        short_names=("pdb",),
        status=True,
        generation=True,
    ),
    _rt(
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        False,
        short_names=("crd", "crds"),
        categories=("api-extensions",),
        status=True,
        generation=True,
        unconditional_update=False,
    ),
    _rt("authentication.k8s.io", "v1", "TokenReview", "tokenreviews", False, verbs=CREATE_ONLY),
    _rt("authentication.k8s.io", "v1", "SelfSubjectReview", "selfsubjectreviews", False, verbs=CREATE_ONLY),
    _rt("authorization.k8s.io", "v1", "SubjectAccessReview", "subjectaccessreviews", False, verbs=CREATE_ONLY),
    _rt(
        "authorization.k8s.io",
        "v1",
        "SelfSubjectAccessReview",
        "selfsubjectaccessreviews",
        False,
        verbs=CREATE_ONLY,
    ),
    _rt(
        "authorization.k8s.io",
        "v1",
        "SelfSubjectRulesReview",
        "selfsubjectrulesreviews",
        False,
        verbs=CREATE_ONLY,
    ),
    _rt(
        "authorization.k8s.io",
        "v1",
        "LocalSubjectAccessReview",
        "localsubjectaccessreviews",
        True,
        verbs=CREATE_ONLY,
    ),
)

# Served with schema-level handling (pruning, defaults where noted in their
# modules) and no controller behind them, as the README lists.
BUILTIN += (
    _rt("", "v1", "LimitRange", "limitranges", True, short_names=("limits",)),
    _rt("", "v1", "ResourceQuota", "resourcequotas", True, short_names=("quota",), status=True),
    _rt("", "v1", "PodTemplate", "podtemplates", True),
    _rt(
        "",
        "v1",
        "ReplicationController",
        "replicationcontrollers",
        True,
        short_names=("rc",),
        categories=("all",),
        status=True,
        scale=True,
        generation=True,
    ),
    _rt("", "v1", "Binding", "bindings", True, verbs=CREATE_ONLY),
    _rt("apps", "v1", "ControllerRevision", "controllerrevisions", True),
    # v2 first: it is the stored version; v1 is a converted view of the same objects
    _rt(
        "autoscaling",
        "v2",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        True,
        short_names=("hpa",),
        categories=("all",),
        status=True,
    ),
    _rt(
        "autoscaling",
        "v1",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        True,
        short_names=("hpa",),
        categories=("all",),
        status=True,
    ),
    _rt("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", True),
    _rt("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", True, short_names=("netpol",), generation=True),
    _rt("networking.k8s.io", "v1", "IngressClass", "ingressclasses", False),
    _rt("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", False, short_names=("pc",)),
    _rt("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", False),
    _rt("storage.k8s.io", "v1", "StorageClass", "storageclasses", False, short_names=("sc",)),
    _rt("storage.k8s.io", "v1", "CSIDriver", "csidrivers", False),
    _rt("storage.k8s.io", "v1", "CSINode", "csinodes", False),
    _rt("storage.k8s.io", "v1", "CSIStorageCapacity", "csistoragecapacities", True),
    _rt("storage.k8s.io", "v1", "VolumeAttachment", "volumeattachments", False, status=True),
    _rt(
        "admissionregistration.k8s.io",
        "v1",
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
        False,
        categories=("api-extensions",),
        generation=True,
    ),
    _rt(
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
        False,
        categories=("api-extensions",),
        generation=True,
    ),
    _rt(
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingAdmissionPolicy",
        "validatingadmissionpolicies",
        False,
        categories=("api-extensions",),
        status=True,
        generation=True,
    ),
    _rt(
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingAdmissionPolicyBinding",
        "validatingadmissionpolicybindings",
        False,
        categories=("api-extensions",),
        generation=True,
    ),
    _rt(
        "apiregistration.k8s.io",
        "v1",
        "APIService",
        "apiservices",
        False,
        categories=("api-extensions",),
        status=True,
    ),
    _rt("flowcontrol.apiserver.k8s.io", "v1", "FlowSchema", "flowschemas", False, status=True, generation=True),
    _rt(
        "flowcontrol.apiserver.k8s.io",
        "v1",
        "PriorityLevelConfiguration",
        "prioritylevelconfigurations",
        False,
        status=True,
        generation=True,
    ),
)

REVIEW_KINDS = frozenset(rt.kind for rt in BUILTIN if rt.verbs == CREATE_ONLY and rt.kind != "Binding")

# Discovery order: the built-in groups first, in kube-apiserver's order (its APIService priorities).
BUILTIN_GROUP_ORDER = (
    "",
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "flowcontrol.apiserver.k8s.io",
)


def version_priority(version: str) -> tuple[int, int, int]:
    """Kube-aware version order key (higher sorts first): GA > beta > alpha, higher number first."""
    import re

    match = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if not match:
        return (-1, 0, 0)
    major = int(match.group(1))
    stage = {"alpha": 0, "beta": 1, None: 2}[match.group(2)]
    minor = int(match.group(3) or 0)
    return (stage, major, minor)


class Registry:
    """All served resources, built-in and custom, indexed for routing and discovery."""

    def __init__(self) -> None:
        self._by_path: dict[tuple[str, str, str], ResourceType] = {}
        self._custom: dict[str, list[ResourceType]] = {}
        self.generation = 0  # bumped whenever the served set changes (caches key on it)
        for rt in BUILTIN:
            self._by_path[(rt.group, rt.version, rt.plural)] = rt

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._by_path.get((group, version, plural))

    def by_kind(self, api_version: str, kind: str) -> ResourceType | None:
        for rt in self._by_path.values():
            if rt.api_version == api_version and rt.kind == kind:
                return rt
        return None

    def all(self) -> list[ResourceType]:
        return list(self._by_path.values())

    def storage_types(self) -> dict[str, ResourceType]:
        """One resource type per storage key (the first version served)."""
        result: dict[str, ResourceType] = {}
        for rt in self._by_path.values():
            result.setdefault(rt.storage_key, rt)
        return result

    def set_custom(self, crd_name: str, types: list[ResourceType]) -> None:
        """Serve (or stop serving, with an empty list) the versions of one CRD."""
        self.generation += 1
        for old in self._custom.pop(crd_name, []):
            self._by_path.pop((old.group, old.version, old.plural), None)
        if types:
            self._custom[crd_name] = types
            for rt in types:
                self._by_path[(rt.group, rt.version, rt.plural)] = rt

    def groups(self) -> list[tuple[str, list[str]]]:
        """``[(group, [versions preferred first])]`` in discovery order."""
        versions: dict[str, set[str]] = {}
        for rt in self._by_path.values():
            versions.setdefault(rt.group, set()).add(rt.version)
        builtin = [g for g in BUILTIN_GROUP_ORDER if g in versions]
        custom = sorted(g for g in versions if g not in BUILTIN_GROUP_ORDER)
        return [(g, sorted(versions[g], key=version_priority, reverse=True)) for g in builtin + custom]

    def resources(self, group: str, version: str) -> list[ResourceType]:
        return sorted(
            (rt for rt in self._by_path.values() if rt.group == group and rt.version == version),
            key=lambda rt: rt.plural,
        )
