"""What kube-controller-manager would do, driven by storage events.

One task consumes every change (``Store.subscribe_all``) and keeps an index
from owner uid to dependents, so each controller only touches the objects a
change concerns: garbage collection (background, foreground, orphan),
namespace termination (a task per terminating namespace, see
:mod:`localkube.namespace_deletion`), CRD instance cleanup, the default ServiceAccount and
``kube-root-ca.crt`` of each namespace, the client-certificate signer for
approved CSRs, the bootstrap signer (``cluster-info`` JWS signatures) and the
bootstrap token cleaner (on a timer), and the status of ResourceQuotas
(``status.used`` recounted from the store once the queue is drained after
changes in a namespace that has quotas, see :mod:`localkube.admission_quota`).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import datetime
import hashlib
import hmac
import json
import logging
from typing import TYPE_CHECKING, Any

from localkube import admission_quota
from localkube.api import ResourceAPI, WriteOptions
from localkube.auth import bootstrap_token_expiration, bootstrap_token_expired
from localkube.csr import sign_client_csr
from localkube.errors import APIError
from localkube.kinds import Context
from localkube.namespace_deletion import NamespaceDeleter
from localkube.pki import CertificateAuthority, cert_pem
from localkube.store import Event

if TYPE_CHECKING:
    from localkube.resources import ResourceType

log = logging.getLogger("localkube.controllers")

Obj = dict[str, Any]
Ref = tuple[str, str, str]  # (storage, namespace, name)

SYSTEM = Context(user="system:kube-controller-manager", groups=["system:masters"])
BOOTSTRAP_TOKEN = "bootstrap.kubernetes.io/token"
ROOT_CA_DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as"
    " the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of"
    " Kubernetes clusters."
)


def jws_signature(content: str, token_id: str, token_secret: str) -> str:
    """Detached JWS (HS256) exactly as Kubernetes' bootstrap signer writes it."""

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).decode().rstrip("=")

    header = b64(json.dumps({"alg": "HS256", "kid": token_id}, separators=(",", ":")).encode())
    payload = b64(content.encode())
    signature = b64(hmac.new(token_secret.encode(), f"{header}.{payload}".encode(), hashlib.sha256).digest())
    return f"{header}..{signature}"


def _secret(secret: Obj, key: str) -> str:
    raw = (secret.get("data") or {}).get(key)
    if raw is None:
        return ""
    try:
        return base64.b64decode(raw).decode()
    except ValueError:
        return ""


class Controllers:
    """The built-in controllers of one localkube."""

    def __init__(self, api: ResourceAPI, ca: CertificateAuthority, root_ca_pem: bytes | None = None) -> None:
        self.api = api
        self.ca = ca  # signs approved CSRs
        # what kube-root-ca.crt holds: the CA that verifies the serving certificate
        self.root_ca_pem = root_ca_pem or cert_pem(ca.cert)
        self.store = api.store
        self.registry = api.registry
        self.queue = self.store.subscribe_all()
        # set when a bootstrap token Secret changes: the token cleaner looks again
        self._tokens_changed = asyncio.Event()
        # owner uid -> dependents
        self.dependents: dict[str, set[Ref]] = {}
        # namespaces whose quotas need recounting once the queue is drained
        self._quota_dirty: set[str] = set()
        self._woken = asyncio.Event()
        self.namespaces = NamespaceDeleter(api, SYSTEM)

    def wake(self) -> None:
        self._woken.set()

    # -- plumbing -------------------------------------------------------------
    def _rt(self, storage: str) -> ResourceType | None:
        return self.registry.storage_types().get(storage)

    def _index(self, storage: str, obj: Obj, old: Obj | None, removed: bool) -> None:
        ref = (storage, obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
        if old is not None:
            for owner in old["metadata"].get("ownerReferences") or []:
                self.dependents.get(owner.get("uid", ""), set()).discard(ref)
        if not removed:
            for owner in obj["metadata"].get("ownerReferences") or []:
                self.dependents.setdefault(owner.get("uid", ""), set()).add(ref)

    def _build_index(self) -> None:
        for storage, obj in self.store.all_objects():
            self._index(storage, obj, None, False)

    def _delete(self, storage: str, namespace: str, name: str, policy: str = "Background") -> None:
        rt = self._rt(storage)
        if rt is None:
            return
        with contextlib.suppress(APIError):
            self.api.delete(rt, namespace, name, {"propagationPolicy": policy}, False)

    def _update(self, storage: str, obj: Obj, subresource: str = "") -> None:
        rt = self._rt(storage)
        if rt is None:
            return
        meta = obj["metadata"]
        with contextlib.suppress(APIError):
            self.api.update(rt, meta.get("namespace", ""), meta["name"], obj, subresource, SYSTEM, WriteOptions())

    def _remove_finalizer(self, storage: str, obj: Obj, finalizer: str) -> None:
        current = self.store.get(storage, obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
        if current is None or finalizer not in (current["metadata"].get("finalizers") or []):
            return
        updated = copy.deepcopy(current)
        updated["metadata"]["finalizers"] = [f for f in updated["metadata"]["finalizers"] if f != finalizer]
        self._update(storage, updated)

    # -- main loop -------------------------------------------------------------
    async def run(self) -> None:
        self._build_index()
        for storage, obj in list(self.store.all_objects()):
            self._react(storage, Event(int(obj["metadata"].get("resourceVersion", 0)), "ADDED", obj))
        self._recount_quotas()
        self._sign_cluster_info()
        cleaner = asyncio.create_task(self._token_cleaner())
        try:
            while True:
                storage, event = await self.queue.get()
                try:
                    self._index(storage, event.obj, event.old, event.type == "DELETED")
                    self._react(storage, event)
                except Exception:  # a controller bug must not stop the others
                    log.exception("controller failed on %s %s", storage, event.obj["metadata"].get("name"))
                if self._quota_dirty and self.queue.empty():
                    try:
                        self._recount_quotas()
                    except Exception:
                        log.exception("quota recount failed")
        finally:
            cleaner.cancel()
            await self.namespaces.close()

    async def _token_cleaner(self) -> None:
        """Delete bootstrap tokens as they expire: asleep until the earliest expiration or a
        change of a bootstrap token Secret, never polling (a fleet has a thousand of these)."""
        while True:
            self._tokens_changed.clear()
            now = datetime.datetime.now(datetime.UTC)
            earliest: datetime.datetime | None = None
            for secret in self.store.items("/secrets", "kube-system"):
                if secret.get("type") != BOOTSTRAP_TOKEN:
                    continue
                if bootstrap_token_expired(secret, now):
                    self._delete("/secrets", "kube-system", secret["metadata"]["name"])
                    continue
                when = bootstrap_token_expiration(secret)
                if when is not None and (earliest is None or when < earliest):
                    earliest = when
            timeout = None if earliest is None else max((earliest - now).total_seconds(), 0.0) + 0.05
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._tokens_changed.wait()

    def _react(self, storage: str, event: Event) -> None:
        obj = event.obj
        meta = obj["metadata"]
        if storage == "/secrets" and obj.get("type") == BOOTSTRAP_TOKEN:
            self._tokens_changed.set()
        if meta.get("namespace"):
            self._quota_touched(storage, meta["namespace"])
        if event.type == "DELETED":
            self._owner_gone(meta.get("uid", ""))
            self._dependent_gone(obj)
            if meta.get("namespace") or storage == "/namespaces":
                self.namespaces.wake(meta.get("namespace") or meta["name"])
            if storage == "/secrets":
                self._sign_cluster_info()
            return
        if meta.get("deletionTimestamp"):
            finalizers = meta.get("finalizers") or []
            if "foregroundDeletion" in finalizers:
                self._foreground(storage, obj)
            if "orphan" in finalizers:
                self._orphan(storage, obj)
            if storage == "/namespaces":
                self.namespaces.enqueue(meta["name"])
            if storage == "apiextensions.k8s.io/customresourcedefinitions":
                self._cleanup_crd(obj)
        if meta.get("ownerReferences"):
            self._check_owners(storage, obj)
        if storage == "/namespaces" and event.type == "ADDED" and not meta.get("deletionTimestamp"):
            self._namespace_defaults(meta["name"])
        if storage == "certificates.k8s.io/certificatesigningrequests":
            status = sign_client_csr(obj, self.ca)
            if status is not None:
                updated = copy.deepcopy(obj)
                updated["status"] = status
                self._update(storage, updated, "status")
        if storage == "/secrets" and obj.get("type") == "bootstrap.kubernetes.io/token":
            self._sign_cluster_info()
        if storage == "/configmaps" and meta.get("namespace") == "kube-public" and meta["name"] == "cluster-info":
            self._sign_cluster_info()

    # -- resource quota -----------------------------------------------------------
    def _quota_touched(self, storage: str, namespace: str) -> None:
        """Note a namespace whose quotas a change under ``storage`` may move; recounted once the
        queue is drained, so a burst of writes costs one recount, not one per write."""
        quotas = self.store.items(admission_quota.QUOTAS, namespace)
        if storage == admission_quota.QUOTAS or any(admission_quota.counts(q, storage) for q in quotas):
            self._quota_dirty.add(namespace)

    def _recount_quotas(self) -> None:
        """Write the status.used of every quota in the noted namespaces that changed."""
        rt = self._rt(admission_quota.QUOTAS)
        dirty, self._quota_dirty = self._quota_dirty, set()
        for namespace in sorted(dirty):
            for quota in self.store.items(admission_quota.QUOTAS, namespace):
                status = admission_quota.status_of(self.store, quota)
                if rt is not None and status is not None and quota.get("status") != status:
                    with contextlib.suppress(APIError):
                        self.api.write_internal(rt, {**copy.deepcopy(quota), "status": status}, quota, "status")

    # -- garbage collector ------------------------------------------------------
    def _owner_alive(self, owner: Obj, namespace: str) -> bool:
        rt = self.registry.by_kind(owner.get("apiVersion", ""), owner.get("kind", ""))
        if rt is None:
            return False
        found = self.store.get(rt.storage_key, namespace if rt.namespaced else "", owner.get("name", ""))
        return found is not None and found["metadata"].get("uid") == owner.get("uid")

    def _check_owners(self, storage: str, obj: Obj) -> None:
        """Delete a dependent whose owners are all gone; drop dangling references otherwise."""
        meta = obj["metadata"]
        if meta.get("deletionTimestamp"):
            return
        owners = meta.get("ownerReferences") or []
        alive = [o for o in owners if self._owner_alive(o, meta.get("namespace", ""))]
        if len(alive) == len(owners):
            return
        if not alive:
            self._delete(storage, meta.get("namespace", ""), meta["name"], "Background")
        else:
            updated = copy.deepcopy(obj)
            updated["metadata"]["ownerReferences"] = alive
            self._update(storage, updated)

    def _owner_gone(self, uid: str) -> None:
        for storage, namespace, name in sorted(self.dependents.pop(uid, set())):
            current = self.store.get(storage, namespace, name)
            if current is not None:
                self._check_owners(storage, current)

    def _dependent_gone(self, obj: Obj) -> None:
        """A dependent left: owners waiting in foreground deletion may now finish."""
        for owner in obj["metadata"].get("ownerReferences") or []:
            rt = self.registry.by_kind(owner.get("apiVersion", ""), owner.get("kind", ""))
            if rt is None:
                continue
            found = self.store.get(
                rt.storage_key, obj["metadata"].get("namespace", "") if rt.namespaced else "", owner.get("name", "")
            )
            if (
                found is not None
                and "foregroundDeletion" in (found["metadata"].get("finalizers") or [])
                and found["metadata"].get("deletionTimestamp")
            ):
                self._foreground(rt.storage_key, found)

    def _foreground(self, storage: str, obj: Obj) -> None:
        uid = obj["metadata"].get("uid", "")
        blocking = False
        for dep_storage, namespace, name in sorted(self.dependents.get(uid, set())):
            dependent = self.store.get(dep_storage, namespace, name)
            if dependent is None:
                continue
            refs = [r for r in dependent["metadata"].get("ownerReferences") or [] if r.get("uid") == uid]
            if any(r.get("blockOwnerDeletion") for r in refs):
                blocking = True
            if not dependent["metadata"].get("deletionTimestamp"):
                self._delete(dep_storage, namespace, name, "Foreground")
        if not blocking:
            self._remove_finalizer(storage, obj, "foregroundDeletion")

    def _orphan(self, storage: str, obj: Obj) -> None:
        uid = obj["metadata"].get("uid", "")
        for dep_storage, namespace, name in sorted(self.dependents.pop(uid, set())):
            dependent = self.store.get(dep_storage, namespace, name)
            if dependent is None:
                continue
            updated = copy.deepcopy(dependent)
            refs = [r for r in updated["metadata"].get("ownerReferences") or [] if r.get("uid") != uid]
            if refs:
                updated["metadata"]["ownerReferences"] = refs
            else:
                updated["metadata"].pop("ownerReferences", None)
            self._update(dep_storage, updated)
        self._remove_finalizer(storage, obj, "orphan")

    # -- namespaces ---------------------------------------------------------------
    def _namespace_defaults(self, namespace: str) -> None:
        sa = self.registry.by_kind("v1", "ServiceAccount")
        cm = self.registry.by_kind("v1", "ConfigMap")
        assert sa is not None and cm is not None
        with contextlib.suppress(APIError):
            if self.store.get("/serviceaccounts", namespace, "default") is None:
                self.api.create(sa, namespace, {"metadata": {"name": "default"}}, SYSTEM, WriteOptions())
            if self.store.get("/configmaps", namespace, "kube-root-ca.crt") is None:
                self.api.create(
                    cm,
                    namespace,
                    {
                        "metadata": {
                            "name": "kube-root-ca.crt",
                            "annotations": {"kubernetes.io/description": ROOT_CA_DESCRIPTION},
                        },
                        "data": {"ca.crt": self.root_ca_pem.decode()},
                    },
                    SYSTEM,
                    WriteOptions(),
                )

    # -- CRDs ---------------------------------------------------------------------
    def _cleanup_crd(self, crd: Obj) -> None:
        spec = crd["spec"]
        storage = f"{spec['group']}/{spec['names']['plural']}"
        remaining = self.store.items(storage)
        for obj in remaining:
            if not obj["metadata"].get("deletionTimestamp"):
                self._delete(storage, obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
        if not self.store.items(storage):
            self._remove_finalizer(
                "apiextensions.k8s.io/customresourcedefinitions",
                crd,
                "customresourcecleanup.apiextensions.k8s.io",
            )

    # -- bootstrap signer -------------------------------------------------------------
    def _sign_cluster_info(self) -> None:
        info = self.store.get("/configmaps", "kube-public", "cluster-info")
        if info is None:
            return
        data = dict(info.get("data") or {})
        content = data.get("kubeconfig", "")
        wanted = {k: v for k, v in data.items() if not k.startswith("jws-kubeconfig-")}
        for secret in self.store.items("/secrets", "kube-system"):
            if secret.get("type") != "bootstrap.kubernetes.io/token" or secret["metadata"].get("deletionTimestamp"):
                continue
            name = secret["metadata"]["name"]
            token_id = _secret(secret, "token-id")
            token_secret = _secret(secret, "token-secret")
            if name != f"bootstrap-token-{token_id}" or not token_secret or bootstrap_token_expired(secret):
                continue
            if _secret(secret, "usage-bootstrap-signing") != "true":
                continue
            wanted[f"jws-kubeconfig-{token_id}"] = jws_signature(content, token_id, token_secret)
        if wanted != data:
            updated = copy.deepcopy(info)
            updated["data"] = wanted
            self._update("/configmaps", updated)
