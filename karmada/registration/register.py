"""``register``: join a member cluster to a control plane in pull mode.

Run with the member cluster's credentials. The sequence follows Karmada's
register, minus its rbac-generator certificate (the control plane creates
the agent's RBAC itself when it approves the agent's CSR):

1. check the cluster name and that no agent is installed in the member;
2. discover the control plane (cluster-info, JWS, CA pin);
3. with the bootstrap token, request the agent's client certificate
   (``system:karmada:agent:<cluster>`` in ``system:karmada:agents``) and wait
   for the control plane to approve it and the signer to issue it;
4. in the member: namespace, kubeconfig Secret, RBAC, service account and the
   agent Deployment; then wait for its rollout.

Refusals (bad name, existing agent, untrusted control plane, denied CSR)
happen before anything is created in the member; if a member step fails,
what this run created there is deleted again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from karmada.kube import ClusterConfig, Credentials, KubeClient, KubeError, ResourceMapper
from karmada.kube.kubeconfig import build_kubeconfig
from karmada.kube.objects import apply_object, delete_object, wait_until
from karmada.kube.resources import CSRS, DEPLOYMENTS, NAMESPACES, SECRETS, SERVICEACCOUNTS
from karmada.pki import BootstrapToken, client_csr, key_pem, new_ec_key, random_suffix
from karmada.registration.discovery import ControlPlaneInfo, discover
from karmada.registration.identity import (
    AGENTS_GROUP,
    CertificateRefused,
    agent_csr,
    agent_user,
    validate_agent_cluster_name,
    wait_for_certificate,
)
from karmada.registration.member import (
    AGENT_NAME,
    AGENT_SERVICE_ACCOUNT,
    KUBECONFIG_SECRET,
    AgentSettings,
    member_objects,
)

log = logging.getLogger("karmada.registration")
Obj = dict[str, Any]
FIELD_MANAGER = "kubectl-karmada"
CONTROL_PLANE_CLUSTER = "karmada-apiserver"


class RegistrationError(Exception):
    """Registration was refused or failed; the message says why and what to do."""


@dataclass
class RegisterOptions:
    """Everything ``register`` needs besides the member cluster's client."""

    endpoint: str
    token: BootstrapToken
    ca_hashes: list[str]
    settings: AgentSettings
    unsafe_skip_ca_verification: bool = False
    discovery_timeout: float = 300.0
    discovery_interval: float = 5.0
    signature_grace: float = 10.0
    cert_expiration_seconds: int = 31536000
    csr_timeout: float = 300.0
    csr_interval: float = 1.0  # between reads of the CSR while it waits for approval
    rollout_timeout: float = 120.0
    dry_run: bool = False


async def preflight(member: KubeClient, namespace: str) -> list[str]:
    """Why an agent cannot be installed here (it already is), one line each."""
    problems = []
    checks = [(SECRETS, KUBECONFIG_SECRET), (SERVICEACCOUNTS, AGENT_SERVICE_ACCOUNT), (DEPLOYMENTS, AGENT_NAME)]
    if await member.get_or_none(NAMESPACES, namespace) is None:
        return []
    for resource, name in checks:
        if await member.get_or_none(resource, name, namespace) is not None:
            problems.append(f"{resource.kind} {namespace}/{name} already exists")
    return problems


async def request_certificate(
    control_plane: ControlPlaneInfo,
    token: BootstrapToken,
    cluster: str,
    options: RegisterOptions,
    progress: Callable[[str], None] = lambda line: None,
) -> tuple[bytes, bytes]:
    """The agent's client certificate and key, through a CSR approved by the control plane."""
    key = new_ec_key()
    request = client_csr(key, agent_user(cluster), [AGENTS_GROUP])
    name = f"{cluster}-{random_suffix()}"
    body = agent_csr(name, request, options.cert_expiration_seconds)
    bootstrap = ClusterConfig(
        server=control_plane.server, ca_pem=control_plane.ca_pem, credentials=Credentials(token=token.value)
    )
    async with KubeClient(bootstrap) as client:
        try:
            await client.create(CSRS, body)
        except KubeError as exc:
            raise RegistrationError(f"the control plane refused the certificate request: {exc.message}") from None
        progress(f"[certificate] waiting for the control plane to approve and sign certificate request {name}")
        certificate = await _wait_for_certificate(client, name, options.csr_timeout, options.csr_interval)
    return certificate, key_pem(key)


async def _wait_for_certificate(client: KubeClient, name: str, timeout: float, interval: float) -> bytes:
    try:
        return await wait_for_certificate(client, name, timeout, interval)
    except CertificateRefused as exc:
        raise RegistrationError(
            f"the control plane denied the agent's certificate request {name}: {exc.reason}"
        ) from None
    except TimeoutError:
        raise RegistrationError(
            f"the agent's certificate request {name} was not approved within {timeout:g}s: "
            "is karmada-controlplane running (with the agentcsrapproving controller)?"
        ) from None


def agent_kubeconfig(control_plane: ControlPlaneInfo, cluster: str, cert_pem: bytes, key: bytes) -> Obj:
    """The kubeconfig the agent uses to reach the control plane."""
    return build_kubeconfig(
        cluster=CONTROL_PLANE_CLUSTER,
        server=control_plane.server,
        ca_pem=control_plane.ca_pem,
        user=cluster,
        cert_pem=cert_pem,
        key_pem=key,
    )


async def register(
    member: KubeClient,
    options: RegisterOptions,
    say: Callable[[str], None],
    progress: Callable[[str], None] | None = None,
) -> list[Obj]:
    """Register the member; returns the member objects created (or, with dry_run, that would be).
    ``say`` reports each step done, ``progress`` (default: ``say``) what a step is waiting for."""
    progress = progress or say
    settings = options.settings
    cluster = settings.cluster_name
    problems = validate_agent_cluster_name(cluster)
    if problems:
        raise RegistrationError(f'invalid cluster name "{cluster}": {problems[0]}')
    existing = await preflight(member, settings.namespace)
    if existing:
        raise RegistrationError(
            "an agent is already installed in this cluster ("
            + "; ".join(existing)
            + "); run `kubectl karmada unregister` first"
        )
    if options.dry_run:
        placeholder = build_kubeconfig(cluster=CONTROL_PLANE_CLUSTER, server="", ca_pem=None, user=cluster)
        return member_objects(settings, placeholder)
    say(f"[discovery] fetching and verifying cluster-info from {options.endpoint}")
    control_plane = await discover(
        options.endpoint,
        options.token,
        options.ca_hashes,
        unsafe_skip_ca_verification=options.unsafe_skip_ca_verification,
        timeout=options.discovery_timeout,
        interval=options.discovery_interval,
        signature_grace=options.signature_grace,
        progress=progress,
    )
    say(f"[discovery] control plane {control_plane.server} verified")
    say("[certificate] requesting the agent's client certificate")
    cert_pem, key = await request_certificate(control_plane, options.token, cluster, options, progress)
    say("[certificate] approved and issued")
    objects = member_objects(settings, agent_kubeconfig(control_plane, cluster, cert_pem, key))
    await _install(member, objects, say)
    if options.rollout_timeout > 0:
        await _wait_for_rollout(member, settings.namespace, options.rollout_timeout)
    say(f"cluster({cluster}) is joined successfully")
    return objects


async def _install(member: KubeClient, objects: list[Obj], say: Callable[[str], None]) -> None:
    mapper = ResourceMapper(member)
    created: list[Obj] = []
    namespace_existed = await member.get_or_none(NAMESPACES, objects[0]["metadata"]["name"]) is not None
    try:
        for obj in objects:
            await apply_object(member, mapper, obj, FIELD_MANAGER)
            if not (obj["kind"] == "Namespace" and namespace_existed):
                created.append(obj)
            say(f"[member] {obj['kind'].lower()}/{obj['metadata']['name']} created")
    except (KubeError, LookupError):
        for obj in reversed(created):
            try:
                await delete_object(member, mapper, obj)
            except KubeError as exc:
                log.warning("cleanup of %s/%s failed: %s", obj["kind"], obj["metadata"]["name"], exc.message)
        raise


async def _wait_for_rollout(member: KubeClient, namespace: str, timeout: float) -> None:
    async def rolled_out() -> bool:
        deployment = await member.get_or_none(DEPLOYMENTS, AGENT_NAME, namespace)
        if deployment is None:
            return False
        spec, status = deployment.get("spec") or {}, deployment.get("status") or {}
        wanted = spec.get("replicas", 1)
        return bool(
            status.get("observedGeneration", 0) >= deployment["metadata"].get("generation", 0)
            and status.get("updatedReplicas", 0) == wanted
            and status.get("availableReplicas", 0) == wanted
        )

    try:
        await wait_until(rolled_out, timeout, interval=1.0, what=f"deployment {namespace}/{AGENT_NAME} to roll out")
    except TimeoutError as exc:
        raise RegistrationError(
            f"{exc}; the agent may not be able to start in this cluster (see `kubectl -n {namespace} "
            f"describe deployment {AGENT_NAME}`)"
        ) from None
