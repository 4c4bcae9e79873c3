"""Karmada's naming rules: binding, Work, policy and execution-space names.

Names must equal real Karmada's byte for byte: a Work written by our binding
controller and one written by Karmada's must collide, not coexist. The hash is
FNV-1a (32 bit) of the UTF-8 key, printed in decimal, then each digit mapped
through Kubernetes' ``rand.SafeEncodeString`` alphabet.
"""

from __future__ import annotations

import re

from karmada.api.keys import (
    DEPENDED_BY_LABEL_KEY_PREFIX,
    EXECUTION_SPACE_PREFIX,
    NAMESPACE_KARMADA_CLUSTER,
    NAMESPACE_KARMADA_SYSTEM,
)

_SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193

# A cluster name is a DNS-1123 label; 15 of its 63 characters are left for "karmada-es-".
CLUSTER_NAME_MAX_LENGTH = 48
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def fnv32a(data: bytes) -> int:
    """FNV-1a, 32 bit."""
    value = _FNV_OFFSET
    for byte in data:
        value = ((value ^ byte) * _FNV_PRIME) & 0xFFFFFFFF
    return value


def safe_encode(text: str) -> str:
    """Kubernetes' ``rand.SafeEncodeString``: no vowels, no look-alike characters."""
    return "".join(_SAFE_ALPHABET[ord(ch) % len(_SAFE_ALPHABET)] for ch in text)


def name_hash(key: str) -> str:
    """The short hash Karmada appends to generated names."""
    return safe_encode(str(fnv32a(key.encode("utf-8"))))


def _dotted(name: str) -> str:
    return name.replace(":", ".")


def binding_name(kind: str, name: str) -> str:
    """ResourceBinding/ClusterResourceBinding name of a template: ``nginx-deployment``."""
    return f"{_dotted(name)}-{kind}".lower()


def work_name(kind: str, name: str, namespace: str = "") -> str:
    """Work name of a template (the same in every execution space): ``nginx-687f7fb96f``."""
    lowered = _dotted(name).lower()
    key = f"{namespace}-{lowered}-{kind}" if namespace else f"{lowered}-{kind}"
    return f"{lowered}-{name_hash(key.lower())}"


def execution_space(cluster: str) -> str:
    """The namespace holding a cluster's Works: ``karmada-es-<cluster>``."""
    return EXECUTION_SPACE_PREFIX + cluster


def cluster_of_execution_space(namespace: str) -> str | None:
    """The cluster an execution space belongs to, or None for other namespaces."""
    if namespace.startswith(EXECUTION_SPACE_PREFIX):
        return namespace[len(EXECUTION_SPACE_PREFIX) :]
    return None


def is_reserved_namespace(namespace: str) -> bool:
    """Karmada's own namespaces, never propagated or matched by policies."""
    return namespace in (NAMESPACE_KARMADA_SYSTEM, NAMESPACE_KARMADA_CLUSTER) or namespace.startswith(
        EXECUTION_SPACE_PREFIX
    )


def binding_reference_key(namespace: str, name: str) -> str:
    """Hash identifying a binding, used in ``depended-by`` label keys."""
    return name_hash(f"{namespace}/{name}" if namespace else name)


def depended_by_label_key(namespace: str, binding: str) -> str:
    """Label key an attached binding carries for each binding that depends on it."""
    return DEPENDED_BY_LABEL_KEY_PREFIX + binding_reference_key(namespace, binding)


def gvk_string(api_version: str, kind: str) -> str:
    """Go's ``schema.GroupVersionKind.String()``: ``apps/v1, Kind=Deployment``, ``/v1, Kind=ConfigMap``."""
    group, _, version = api_version.rpartition("/")
    return f"{group}/{version}, Kind={kind}"


def policy_name(namespace: str, name: str, api_version: str, kind: str) -> str:
    """Name of the policy ``apply``/``promote`` create for one object."""
    return f"{_dotted(name)}-{name_hash(namespace + gvk_string(api_version, kind))}".lower()


def service_account_name(cluster: str) -> str:
    """Service account the agent creates in the member for the control plane: ``karmada-<cluster>``."""
    return f"karmada-{cluster}"


def impersonation_secret_name(cluster: str) -> str:
    """Control-plane Secret holding the member's impersonator token."""
    return f"{cluster}-impersonator"


def cluster_role_name(service_account: str) -> str:
    """ClusterRole(Binding) name for a member service account."""
    return f"karmada-controller-manager:{service_account}"


def validate_cluster_name(name: str) -> list[str]:
    """Why ``name`` cannot name a Cluster (empty list when it can)."""
    problems: list[str] = []
    if not name:
        return ["must not be empty"]
    if len(name) > CLUSTER_NAME_MAX_LENGTH:
        problems.append(f"must be no more than {CLUSTER_NAME_MAX_LENGTH} characters")
    if not _DNS1123_LABEL.fullmatch(name):
        problems.append(
            "must consist of lower case alphanumeric characters or '-', and must start and end with"
            " an alphanumeric character (a DNS-1123 label)"
        )
    return problems
