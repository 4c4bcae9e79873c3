"""The admission plugins kube-apiserver enables by default, for the kinds localkube serves.

:func:`admit` is the mutating phase: on create (and DefaultTolerationSeconds
also on update), before validation, as in kube-apiserver's handler chain (on
create just before the kind's strategy, whose defaults touch no field a plugin
reads or sets). :func:`validate` is the validating phase, after the object's
validation and just before it is stored. Objects written by localkube's own
controllers and simulation pass through both, as kube-controller-manager's
writes do. Each plugin reads what it needs from the store (service accounts,
priority, runtime and storage/ingress classes, limit ranges, quotas)
synchronously, on the event loop, within the write it admits.

Served here (plugin/pkg/admission/* of kubernetes/kubernetes), in
kube-apiserver's order:

- LimitRanger (:mod:`localkube.admission_limits`): default requests and limits
  from the namespace's LimitRanges, then their min/max/ratio checks on Pods
  and PVCs; also the LimitRange object's own defaults.
- ServiceAccount: ``serviceAccountName: default``, a refused Pod (403) whose
  service account does not exist, the ``kube-api-access-<5>`` projected token
  volume mounted read-only in every container, image pull secrets from the
  account.
- Priority: ``priority`` and ``preemptionPolicy`` from the Pod's PriorityClass
  (the built-in ``system-*`` classes, any stored one, a ``globalDefault`` one,
  else 0).
- DefaultTolerationSeconds: ``not-ready`` and ``unreachable`` NoExecute
  tolerations for 300 s unless the Pod already tolerates them.
- DefaultStorageClass, DefaultIngressClass: a PVC / Ingress without a class gets
  the default one, once such classes are stored.
- RuntimeClass (:mod:`localkube.admission_runtimeclass`): the class must
  exist; its overhead and scheduling constraints are set on the Pod.
- ResourceQuota (:mod:`localkube.admission_quota`), last: refuses writes
  beyond a quota; quotas' ``status`` is kept by localkube itself.

NamespaceLifecycle is the namespace check of :mod:`localkube.api`.
TaintNodesByCondition and StorageObjectInUseProtection are not applied: they
add taints and finalizers only controllers localkube lacks would ever remove.
"""

from __future__ import annotations

import copy
from typing import Any, Protocol

from localkube import admission_limits, admission_quota, admission_runtimeclass
from localkube.errors import APIError, forbidden
from localkube.meta import generate_name
from localkube.store import Event

Obj = dict[str, Any]

TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
TOKEN_VOLUME_PREFIX = "kube-api-access-"
# serviceaccount.WarnOnlyBoundTokenExpirationSeconds: one hour plus 7 s
TOKEN_EXPIRATION_SECONDS = 3607
DEFAULT_TOLERATION_SECONDS = 300
NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
# the classes kube-apiserver creates at start
SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
PRIORITY_CLASSES = "scheduling.k8s.io/priorityclasses"
STORAGE_CLASSES = "storage.k8s.io/storageclasses"
INGRESS_CLASSES = "networking.k8s.io/ingressclasses"
DEFAULT_STORAGE_CLASS = "storageclass.kubernetes.io/is-default-class"
DEFAULT_INGRESS_CLASS = "ingressclass.kubernetes.io/is-default-class"


class Objects(Protocol):
    """The part of :class:`localkube.store.Store` admission reads."""

    def get(self, storage: str, namespace: str, name: str) -> Obj | None: ...

    def items(self, storage: str, namespace: str | None = None) -> list[Obj]: ...

    # the changes since a resourceVersion, for the quota plugin's running totals
    @property
    def rv(self) -> int: ...

    def history_since(self, storage: str, rv: int) -> list[Event] | None: ...


def admit(store: Objects, kind: str, obj: Obj, old: Obj | None) -> None:
    """Run the default mutating plugins on a create (``old`` None) or update; raises 403 on refusal."""
    if kind == "Pod":
        if old is None:
            admission_limits.default_pod(store, obj)
            _service_account(store, obj)
            _priority(store, obj)
        _default_tolerations(obj)
        if old is None:
            admission_runtimeclass.admit(store, obj)
    elif kind == "LimitRange":
        admission_limits.default_limit_range(obj)
    elif kind == "ResourceQuota":
        admission_quota.refresh_status(store, obj)
    elif kind == "PersistentVolumeClaim" and old is None:
        spec = obj.setdefault("spec", {})
        if spec.get("storageClassName") is None:
            default = _default_class(store, STORAGE_CLASSES, DEFAULT_STORAGE_CLASS)
            if default:
                spec["storageClassName"] = default
    elif kind == "Ingress" and old is None:
        spec = obj.setdefault("spec", {})
        annotations = obj["metadata"].get("annotations") or {}
        if spec.get("ingressClassName") is None and "kubernetes.io/ingress.class" not in annotations:
            default = _default_class(store, INGRESS_CLASSES, DEFAULT_INGRESS_CLASS)
            if default:
                spec["ingressClassName"] = default


def validate(store: Objects, group: str, resource: str, obj: Obj, old: Obj | None) -> None:
    """Run the default validating plugins on a create (``old`` None) or update, of any resource
    (custom ones included: ResourceQuota counts them); raises 403 on refusal."""
    if group == "" and resource in ("pods", "persistentvolumeclaims"):
        kind = "Pod" if resource == "pods" else "PersistentVolumeClaim"
        admission_limits.validate(store, kind, obj, old)
        if resource == "pods" and old is None:
            admission_runtimeclass.validate(store, obj)
    admission_quota.admit(store, group, resource, obj, old)


def _refuse(obj: Obj, message: str) -> APIError:
    name = obj["metadata"].get("name", "")
    return forbidden(f'pods "{name}" is forbidden: {message}', resource="pods", name=name)


def _service_account(store: Objects, pod: Obj) -> None:
    meta = pod["metadata"]
    spec = pod.setdefault("spec", {})
    if MIRROR_POD_ANNOTATION in (meta.get("annotations") or {}):
        if spec.get("serviceAccountName"):
            raise _refuse(pod, "a mirror pod may not reference service accounts")
        return
    if not spec.get("serviceAccountName"):
        spec["serviceAccountName"] = "default"
    name = spec["serviceAccountName"]
    namespace = meta.get("namespace", "")
    account = store.get("/serviceaccounts", namespace, name)
    if account is None:
        if name != "default":
            raise _refuse(
                pod, f'error looking up service account {namespace}/{name}: serviceaccount "{name}" not found'
            )
        # kube-apiserver waits up to a few seconds for the controller to create "default";
        # localkube's controller creates it right after the namespace, with no settings of its own
        account = {"metadata": {"name": name}}
    automount = spec.get("automountServiceAccountToken")
    if automount is None:
        automount = account.get("automountServiceAccountToken")
    if automount is None or automount:
        _mount_token(spec)
    if not spec.get("imagePullSecrets") and account.get("imagePullSecrets"):
        spec["imagePullSecrets"] = [{"name": s.get("name", "")} for s in account["imagePullSecrets"]]


def token_volume(name: str) -> Obj:
    """The projected volume of a Pod's service account token, CA bundle and namespace."""
    return {
        "name": name,
        "projected": {
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_SECONDS, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {
                    "downwardAPI": {
                        "items": [
                            {"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}
                        ]
                    }
                },
            ],
        },
    }


def _mount_token(spec: Obj) -> None:
    volumes = spec.get("volumes") or []
    existing = next(
        (v["name"] for v in volumes if isinstance(v, dict) and str(v.get("name", "")).startswith(TOKEN_VOLUME_PREFIX)),
        None,
    )
    name = existing or generate_name(TOKEN_VOLUME_PREFIX)
    mounted = False
    for field in ("initContainers", "containers"):
        for container in spec.get(field) or []:
            if not isinstance(container, dict):
                continue
            mounts = container.get("volumeMounts") or []
            if any(isinstance(m, dict) and m.get("mountPath") == TOKEN_MOUNT_PATH for m in mounts):
                continue
            container["volumeMounts"] = [*mounts, {"name": name, "readOnly": True, "mountPath": TOKEN_MOUNT_PATH}]
            mounted = True
    if mounted and existing is None:
        spec["volumes"] = [*volumes, token_volume(name)]


def _default_tolerations(pod: Obj) -> None:
    spec = pod.setdefault("spec", {})
    tolerations = spec.get("tolerations") or []

    def tolerated(key: str) -> bool:
        return any(
            isinstance(t, dict) and t.get("key", "") in (key, "") and t.get("effect", "") in ("NoExecute", "")
            for t in tolerations
        )

    added = [
        {
            "key": key,
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": DEFAULT_TOLERATION_SECONDS,
        }
        for key in (NOT_READY, UNREACHABLE)
        if not tolerated(key)
    ]
    if added:
        spec["tolerations"] = [*copy.deepcopy(tolerations), *added]


def _priority(store: Objects, pod: Obj) -> None:
    spec = pod.setdefault("spec", {})
    class_name = spec.get("priorityClassName") or ""
    policy = "PreemptLowerPriority"
    if not class_name:
        defaults = [c for c in store.items(PRIORITY_CLASSES) if c.get("globalDefault")]
        chosen = min(defaults, key=lambda c: int(c.get("value", 0)), default=None)
        value = int(chosen.get("value", 0)) if chosen else 0
        if chosen:
            class_name = chosen["metadata"]["name"]
            spec["priorityClassName"] = class_name
            policy = chosen.get("preemptionPolicy") or policy
    elif class_name in SYSTEM_PRIORITY_CLASSES and store.get(PRIORITY_CLASSES, "", class_name) is None:
        value = SYSTEM_PRIORITY_CLASSES[class_name]
    else:
        found = store.get(PRIORITY_CLASSES, "", class_name)
        if found is None:
            raise _refuse(pod, f"no PriorityClass with name {class_name} was found")
        value = int(found.get("value", 0))
        policy = found.get("preemptionPolicy") or policy
    if spec.get("priority") is not None and spec["priority"] != value:
        raise _refuse(
            pod,
            f"the integer value of priority ({spec['priority']}) must not be provided in pod spec; "
            f"priority admission controller computed {value} from the given PriorityClass name",
        )
    if spec.get("preemptionPolicy") is not None and spec["preemptionPolicy"] != policy:
        raise _refuse(
            pod,
            f"the string value of PreemptionPolicy ({spec['preemptionPolicy']}) must not be provided in pod spec; "
            f"priority admission controller computed {policy} from the given PriorityClass name",
        )
    spec["priority"] = value
    spec["preemptionPolicy"] = policy


def _default_class(store: Objects, storage: str, annotation: str) -> str | None:
    """The default class; of several, the newest (then by name), as kube-apiserver picks since v1.28."""
    defaults = [c for c in store.items(storage) if (c["metadata"].get("annotations") or {}).get(annotation) == "true"]
    if not defaults:
        return None
    newest = max(defaults, key=lambda c: (c["metadata"].get("creationTimestamp") or "", c["metadata"]["name"]))
    name: str = newest["metadata"]["name"]
    return name


__all__ = ["TOKEN_MOUNT_PATH", "admit", "token_volume", "validate"]
