"""May this caller reach this cluster: RBAC on the control plane decides.

As the Karmada API server authorises ``clusters/proxy``: a SubjectAccessReview
of the caller for the subresource ``proxy`` of the Cluster, the verb from the
HTTP method (kube's request-info rule for a named resource's subresource).
Answers are kept for :data:`DECISION_TTL` seconds per caller, cluster and verb.
"""

from __future__ import annotations

import time

from karmada.kube import KubeClient, KubeError
from karmada.kube.resources import SUBJECT_ACCESS_REVIEWS
from karmada.tunnel.wire import Caller

DECISION_TTL = 10.0
MAX_CACHED = 4096
VERBS = {"GET": "get", "HEAD": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


class AccessUnavailable(Exception):
    """The review itself failed (the API server did not answer)."""


def verb_of(method: str) -> str:
    return VERBS.get(method.upper(), method.lower())


def forbidden_message(caller: Caller, verb: str, cluster: str) -> str:
    """kube-apiserver's wording of a refusal."""
    return (
        f'clusters.cluster.karmada.io "{cluster}" is forbidden: User "{caller.user}" cannot {verb} '
        'resource "clusters/proxy" in API group "cluster.karmada.io" at the cluster scope'
    )


class ProxyAccess:
    def __init__(self, client: KubeClient, ttl: float = DECISION_TTL) -> None:
        self.client = client
        self.ttl = ttl
        self._cache: dict[tuple[Caller, str, str], tuple[float, bool]] = {}

    async def allowed(self, caller: Caller, cluster: str, method: str) -> bool:
        verb = verb_of(method)
        key = (caller, cluster, verb)
        now = time.monotonic()
        cached = self._cache.get(key)
        if cached is not None and cached[0] > now:
            return cached[1]
        allowed = await self._review(caller, cluster, verb)
        if len(self._cache) >= MAX_CACHED:
            self._cache = {k: v for k, v in self._cache.items() if v[0] > now}
        self._cache[key] = (now + self.ttl, allowed)
        return allowed

    async def _review(self, caller: Caller, cluster: str, verb: str) -> bool:
        spec = {
            "user": caller.user,
            "groups": list(caller.groups),
            "resourceAttributes": {
                "group": "cluster.karmada.io",
                "version": "v1alpha1",
                "resource": "clusters",
                "subresource": "proxy",
                "name": cluster,
                "verb": verb,
            },
        }
        if caller.uid:
            spec["uid"] = caller.uid
        if caller.extra:
            spec["extra"] = {k: list(v) for k, v in caller.extra}
        review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}
        try:
            answer = await self.client.create(SUBJECT_ACCESS_REVIEWS, review)
        except KubeError as exc:
            raise AccessUnavailable(f"cannot review access: {exc.message}") from None
        return bool((answer.get("status") or {}).get("allowed"))
