"""Approving agent certificates (Karmada's ``agentcsrapproving``, stricter).

For each pending CSR that is an agent's (signer kube-apiserver-client, O
``system:karmada:agents``, CN ``system:karmada:agent:<cluster>``, no SANs,
client usages), a SubjectAccessReview asks whether the requester may
``create certificatesigningrequests/selfclusteragent`` (an agent renewing its
own certificate) or ``.../clusteragent`` (a bootstrap token registering).

- Renewal: approved while the cluster is registered; denied once it is gone.
- Registration: a cluster name nobody holds is granted to the requester: the
  control plane itself creates the Cluster (annotated with who registered
  it), the execution namespace, the agent's RBAC and its heartbeat Lease,
  then approves. A name whose agent is alive (its Lease renewed within the
  grace period) is denied to every bootstrap identity, the one that
  registered it included: a leaked or shared token must not mint a second
  identity for a live member. Otherwise the same requester retrying gets the
  same answer; another identity gets a held name only once its agent has
  been seen and its Lease has expired (re-registering a dead member); a name
  whose agent never heartbeated is still being registered by its holder and
  is denied to others.
- A requester the SAR does not allow is left pending (an administrator may
  still approve by hand) and an event says why.

Bootstrap identities therefore never hold more than "create a CSR": nothing
like Karmada's rbac-generator certificate exists (karmada-io/karmada#7147).
Decisions are events on the CSR (``kubectl describe csr``) and log lines.
"""

from __future__ import annotations

import copy
import datetime
import logging
from typing import Any

from controlplane.cluster_controller import AgentAccess, agent_access
from controlplane.context import Context
from karmada.api.keys import NAMESPACE_KARMADA_CLUSTER
from karmada.kube import EventRecorder, Informer, KubeClient, KubeError
from karmada.kube.controller import Controller
from karmada.kube.resources import CLUSTERS, CSRS, LEASES, SUBJECT_ACCESS_REVIEWS
from karmada.registration.access import registered_cluster
from karmada.registration.identity import REGISTERED_BY_ANNOTATION, AgentRequest, decided, recognize
from karmada.timestamps import parse_time, utcnow

log = logging.getLogger("controlplane.agentcsr")
Obj = dict[str, Any]
SELF_MESSAGE = "Auto approving self karmada agent certificate after SubjectAccessReview."
BOOTSTRAP_MESSAGE = "Auto approving karmada agent certificate after SubjectAccessReview."


class AgentApprover:
    """Reconciles one CSR by name."""

    def __init__(
        self,
        client: KubeClient,
        csrs: Informer,
        recorder: EventRecorder,
        access: AgentAccess,
        grace_period: float = 40.0,
    ) -> None:
        self.client = client
        self.grace_period = grace_period
        self.csrs = csrs
        self.recorder = recorder
        self.access = access

    async def reconcile(self, name: str) -> float | None:
        csr = self.csrs.get(name)
        if csr is None or decided(csr) or csr["metadata"].get("deletionTimestamp"):
            return None
        request = recognize(csr)
        if request is None:
            return None  # not an agent's CSR: someone else's to judge
        if request.problems:
            await self._deny(csr, "InvalidClusterName", f'cluster name "{request.cluster}": {request.problems[0]}')
            return None
        if request.self_renewal and await self._allowed(csr, "selfclusteragent"):
            await self._renew(csr, request)
        elif await self._allowed(csr, "clusteragent"):
            await self._register(csr, request)
        else:
            user = (csr.get("spec") or {}).get("username", "")
            message = f'user "{user}" may not create agent certificates (subject access review denied)'
            log.info("CSR %s left pending: %s", name, message)
            await self.recorder.record(csr, "Warning", "AgentCSRNotAuthorized", message)
        return None

    async def _renew(self, csr: Obj, request: AgentRequest) -> None:
        if await self.client.get_or_none(CLUSTERS, request.cluster) is None:
            await self._deny(
                csr, "ClusterNotRegistered", f'cluster "{request.cluster}" is not registered; register it again'
            )
            return
        await self._approve(csr, SELF_MESSAGE)

    async def _register(self, csr: Obj, request: AgentRequest) -> None:
        requester = (csr.get("spec") or {}).get("username", "")
        cluster = await self.client.get_or_none(CLUSTERS, request.cluster)
        if cluster is None:
            try:
                cluster = await self.client.create(CLUSTERS, registered_cluster(request.cluster, requester))
            except KubeError as exc:
                if not exc.already_exists:
                    raise
                cluster = await self.client.get(CLUSTERS, request.cluster)
        holder = ((cluster.get("metadata") or {}).get("annotations") or {}).get(REGISTERED_BY_ANNOTATION)
        renewed = await self._last_renewal(request.cluster)
        if renewed is not None and renewed < self.grace_period:
            message = (
                f'cluster "{request.cluster}" has a live agent (its Lease was renewed {renewed:.0f}s ago); '
                "a bootstrap token cannot register it again: unregister it first, or stop its agent and "
                f"retry once its Lease is older than {self.grace_period:g}s"
            )
            await self._deny(csr, "AgentAlive", message)
            return
        if holder != requester and renewed is not None:
            # the agent was seen and is gone: its member may register again with a new token
            cluster = await self._hand_over(cluster, requester)
            holder = requester
        if holder != requester:
            message = (
                f'cluster name "{request.cluster}" is already registered'
                + (" by another identity" if holder else "")
                + "; unregister it first or choose another --cluster-name"
            )
            await self._deny(csr, "ClusterNameInUse", message)
            return
        await self.access.ensure(request.cluster)
        await self._approve(csr, BOOTSTRAP_MESSAGE)

    async def _last_renewal(self, cluster: str) -> float | None:
        """Seconds since the cluster's agent last renewed its Lease; None when it never did."""
        lease = await self.client.get_or_none(LEASES, cluster, NAMESPACE_KARMADA_CLUSTER)
        return None if lease is None else lease_age(lease, utcnow())

    async def _hand_over(self, cluster: Obj, requester: str) -> Obj:
        updated = copy.deepcopy(cluster)
        updated["metadata"].setdefault("annotations", {})[REGISTERED_BY_ANNOTATION] = requester
        stored: Obj = await self.client.update(CLUSTERS, updated)
        log.info(
            "cluster %s re-registered by %s after its agent's Lease expired", cluster["metadata"]["name"], requester
        )
        return stored

    async def _allowed(self, csr: Obj, subresource: str) -> bool:
        spec = csr.get("spec") or {}
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": spec.get("username", ""),
                "uid": spec.get("uid", ""),
                "groups": spec.get("groups") or [],
                "extra": spec.get("extra") or {},
                "resourceAttributes": {
                    "group": "certificates.k8s.io",
                    "resource": "certificatesigningrequests",
                    "subresource": subresource,
                    "verb": "create",
                    "version": "*",
                },
            },
        }
        result = await self.client.create(SUBJECT_ACCESS_REVIEWS, review)
        return bool((result.get("status") or {}).get("allowed"))

    async def _approve(self, csr: Obj, message: str) -> None:
        await self._decide(csr, "Approved", "AutoApproved", message)
        log.info("approved CSR %s (%s)", csr["metadata"]["name"], message)

    async def _deny(self, csr: Obj, reason: str, message: str) -> None:
        await self._decide(csr, "Denied", reason, message)
        log.info("denied CSR %s: %s", csr["metadata"]["name"], message)
        await self.recorder.record(csr, "Warning", reason, message)

    async def _decide(self, csr: Obj, kind: str, reason: str, message: str) -> None:
        fresh = await self.client.get(CSRS, csr["metadata"]["name"])
        if decided(fresh):
            return
        updated = copy.deepcopy(fresh)
        conditions = updated.setdefault("status", {}).setdefault("conditions", [])
        conditions.append({"type": kind, "status": "True", "reason": reason, "message": message})
        await self.client.update(CSRS, updated, subresource="approval")


def setup(context: Context) -> list[Controller[str]]:
    """Approves (or denies, with the reason) agents' CSRs."""
    csrs = context.informers.informer(CSRS)
    approver = AgentApprover(
        context.client, csrs, context.recorder, agent_access(context), context.options.cluster_monitor_grace_period
    )
    approving: Controller[str] = Controller("agentcsrapproving", approver.reconcile)
    approving.watches(csrs, lambda kind, obj, old: [obj["metadata"]["name"]])
    return [approving]


def lease_age(lease: Obj, now: datetime.datetime) -> float | None:
    """Seconds since the Lease was last renewed, on the API server's clock where it says: the
    ``managedFields`` time of the entry owning ``spec.renewTime`` (the server stamps it when the
    renewing manager changes the field), else the Lease's ``renewTime``, which is the agent's
    clock (an agent whose clock runs behind would look gone while it runs). Other managers'
    entries (an administrator's label) do not count. None when it was never renewed."""
    renew_time = (lease.get("spec") or {}).get("renewTime")
    if not renew_time:
        return None
    written = None
    for entry in (lease.get("metadata") or {}).get("managedFields") or []:
        owned = ((entry.get("fieldsV1") or {}).get("f:spec") or {}) if isinstance(entry, dict) else {}
        if not isinstance(owned, dict) or "f:renewTime" not in owned or not entry.get("time"):
            continue
        try:
            stamp = parse_time(str(entry["time"]))
        except ValueError:
            continue
        written = stamp if written is None or stamp > written else written
    if written is None:
        try:
            written = parse_time(str(renew_time))
        except ValueError:
            return None
    return max(0.0, (now - written).total_seconds())
