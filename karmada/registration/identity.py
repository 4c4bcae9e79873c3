"""Who an agent is on the control plane: user ``system:karmada:agent:<cluster>``
in group ``system:karmada:agents``, proven by a client certificate issued
through a CSR; and how an approver recognizes such a CSR (Karmada's rules)."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from karmada.api.names import validate_cluster_name
from karmada.kube import KubeClient
from karmada.kube.objects import wait_until
from karmada.kube.resources import CSRS

Obj = dict[str, Any]
AGENTS_GROUP = "system:karmada:agents"
AGENT_USER_PREFIX = "system:karmada:agent:"
CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client"
AGENT_USAGES = (
    frozenset({"digital signature", "key encipherment", "client auth"}),
    frozenset({"digital signature", "client auth"}),
)
REGISTERED_BY_ANNOTATION = "agent.karmada.io/registered-by"
"""On a Cluster: the bootstrap identity whose CSR registered it (ours; Karmada has none)."""
CLUSTER_LABEL = "agent.karmada.io/cluster"
"""On per-cluster access objects: the cluster they serve (ours), so they can be found and removed."""


COMMON_NAME_MAX_BYTES = 64
"""X.509's upper bound on a common name (RFC 5280 ub-common-name)."""
AGENT_CLUSTER_NAME_MAX_LENGTH = COMMON_NAME_MAX_BYTES - len(AGENT_USER_PREFIX)
"""43: the longest cluster name whose agent user fits a certificate's common name."""


def validate_agent_cluster_name(name: str) -> list[str]:
    """Why ``name`` cannot name a pull-mode cluster: a Cluster name whose agent user
    ``system:karmada:agent:<name>`` also fits a certificate's common name."""
    problems = validate_cluster_name(name)
    if not problems and len(agent_user(name).encode()) > COMMON_NAME_MAX_BYTES:
        problems.append(
            f"must be no more than {AGENT_CLUSTER_NAME_MAX_LENGTH} characters for a pull-mode cluster "
            f'(the agent\'s certificate common name "{AGENT_USER_PREFIX}<name>" is limited to '
            f"{COMMON_NAME_MAX_BYTES} bytes)"
        )
    return problems


def agent_user(cluster: str) -> str:
    """The user name in an agent's certificate."""
    return AGENT_USER_PREFIX + cluster


def rotation_csr_name(cluster: str) -> str:
    """The one CSR an agent renews its certificate with: a fixed name (its user name), so
    its RBAC can name it instead of granting list/watch over every cluster's CSRs."""
    return agent_user(cluster)


@dataclass(frozen=True)
class AgentRequest:
    """A CSR recognized as an agent's: for which cluster, and whether the agent itself asks."""

    cluster: str
    self_renewal: bool
    problems: tuple[str, ...] = ()


def decided(csr: Obj) -> bool:
    """Whether a CSR is already approved, denied, failed or issued."""
    status = csr.get("status") or {}
    if status.get("certificate"):
        return True
    return any(
        c.get("type") in ("Approved", "Denied", "Failed") and c.get("status", "True") == "True"
        for c in status.get("conditions") or []
    )


def recognize(csr: Obj) -> AgentRequest | None:
    """The agent request in ``csr``, or None when it is not an agent CSR at all
    (wrong signer, organization, common name prefix, SANs or usages)."""
    spec = csr.get("spec") or {}
    if spec.get("signerName") != CLIENT_SIGNER:
        return None
    from karmada.pki.certificates import csr_subject  # cryptography: the approver's, not the agent's

    try:
        common_name, organizations, has_sans = csr_subject(base64.b64decode(spec.get("request", "")))
    except ValueError:
        return None
    if list(organizations) != [AGENTS_GROUP] or has_sans or not common_name.startswith(AGENT_USER_PREFIX):
        return None
    if frozenset(spec.get("usages") or []) not in AGENT_USAGES:
        return None
    cluster = common_name[len(AGENT_USER_PREFIX) :]
    problems = tuple(validate_agent_cluster_name(cluster))
    return AgentRequest(cluster, spec.get("username") == common_name, problems)


def agent_csr(name: str, request_pem: bytes, expiration_seconds: int) -> Obj:
    """A CertificateSigningRequest for an agent's client certificate."""
    return {
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": name, "labels": {"karmada.io/system": "true"}},
        "spec": {
            "request": base64.b64encode(request_pem).decode(),
            "signerName": CLIENT_SIGNER,
            "usages": ["digital signature", "key encipherment", "client auth"],
            "expirationSeconds": expiration_seconds,
        },
    }


def issued_certificate(csr: Obj) -> bytes | None:
    """The certificate of an issued CSR; CertificateRefused when it was denied or failed."""
    status = csr.get("status") or {}
    for condition in status.get("conditions") or []:
        if condition.get("type") in ("Denied", "Failed") and condition.get("status", "True") == "True":
            raise CertificateRefused(csr["metadata"]["name"], str(condition.get("message", "")))
    return base64.b64decode(status["certificate"]) if status.get("certificate") else None


class CertificateRefused(Exception):
    """The control plane denied (or could not sign) a CSR."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"the control plane denied the certificate request {name}: {message}")
        self.name = name
        self.reason = message


async def wait_for_certificate(client: KubeClient, name: str, timeout: float, interval: float = 1.0) -> bytes:
    """Poll a CSR until its certificate is issued; CertificateRefused when it is denied,
    TimeoutError when ``timeout`` passes first."""

    async def issued() -> bytes | None:
        return issued_certificate(await client.get(CSRS, name))

    certificate: bytes = await wait_until(issued, timeout, interval, what=f"certificate request {name} to be issued")
    return certificate
