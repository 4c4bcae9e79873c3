"""Resources by apiVersion and kind, resolved through the server's discovery documents."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from karmada.kube.client import KubeClient


@dataclass(frozen=True)
class Resource:
    """A served resource: where it lives and what it is called."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


def split_api_version(api_version: str) -> tuple[str, str]:
    """``apps/v1`` -> ("apps", "v1"); ``v1`` -> ("", "v1")."""
    group, _, version = api_version.rpartition("/")
    return group, version


# Well-known resources, so common calls need no discovery round trip.
NAMESPACES = Resource("", "v1", "namespaces", "Namespace", False)
CONFIGMAPS = Resource("", "v1", "configmaps", "ConfigMap", True)
SECRETS = Resource("", "v1", "secrets", "Secret", True)
SERVICEACCOUNTS = Resource("", "v1", "serviceaccounts", "ServiceAccount", True)
EVENTS = Resource("", "v1", "events", "Event", True)
NODES = Resource("", "v1", "nodes", "Node", False)
PODS = Resource("", "v1", "pods", "Pod", True)
LEASES = Resource("coordination.k8s.io", "v1", "leases", "Lease", True)
CSRS = Resource("certificates.k8s.io", "v1", "certificatesigningrequests", "CertificateSigningRequest", False)
CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False)
CLUSTER_ROLES = Resource("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False)
CLUSTER_ROLE_BINDINGS = Resource("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False)
ROLES = Resource("rbac.authorization.k8s.io", "v1", "roles", "Role", True)
ROLE_BINDINGS = Resource("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True)
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment", True)
TOKEN_REVIEWS = Resource("authentication.k8s.io", "v1", "tokenreviews", "TokenReview", False)
SUBJECT_ACCESS_REVIEWS = Resource("authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview", False)
CLUSTERS = Resource("cluster.karmada.io", "v1alpha1", "clusters", "Cluster", False)
RESOURCE_INTERPRETER_CUSTOMIZATIONS = Resource(
    "config.karmada.io", "v1alpha1", "resourceinterpretercustomizations", "ResourceInterpreterCustomization", False
)
RESOURCE_INTERPRETER_WEBHOOK_CONFIGURATIONS = Resource(
    "config.karmada.io",
    "v1alpha1",
    "resourceinterpreterwebhookconfigurations",
    "ResourceInterpreterWebhookConfiguration",
    False,
)
WORKS = Resource("work.karmada.io", "v1alpha1", "works", "Work", True)
RESOURCE_BINDINGS = Resource("work.karmada.io", "v1alpha2", "resourcebindings", "ResourceBinding", True)
CLUSTER_RESOURCE_BINDINGS = Resource(
    "work.karmada.io", "v1alpha2", "clusterresourcebindings", "ClusterResourceBinding", False
)


class UnknownKind(LookupError):
    """The server does not serve this apiVersion/kind."""


class ResourceMapper:
    """apiVersion + kind -> :class:`Resource`, from discovery, cached per group/version.

    A miss refreshes that group/version once (a CRD may have just been
    established), so new kinds resolve without restarting.
    """

    def __init__(self, client: KubeClient) -> None:
        self.client = client
        self._cache: dict[str, dict[str, Resource]] = {}

    async def _load(self, api_version: str) -> dict[str, Resource]:
        from karmada.kube.client import KubeError

        group, version = split_api_version(api_version)
        path = f"/api/{version}" if not group else f"/apis/{group}/{version}"
        try:
            document: dict[str, Any] = await self.client.raw_get(path)
        except KubeError as exc:
            if exc.not_found:
                return {}
            raise
        kinds: dict[str, Resource] = {}
        for entry in document.get("resources") or []:
            if "/" in entry.get("name", ""):
                continue
            kinds[entry["kind"]] = Resource(group, version, entry["name"], entry["kind"], bool(entry.get("namespaced")))
        self._cache[api_version] = kinds
        return kinds

    async def resource_for(self, api_version: str, kind: str) -> Resource:
        kinds = self._cache.get(api_version)
        if kinds is None or kind not in kinds:
            kinds = await self._load(api_version)
        if kind not in kinds:
            raise UnknownKind(f"the server does not serve {kind} in {api_version}")
        return kinds[kind]
