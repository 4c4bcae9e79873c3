"""Per-kind behaviour of built-in resources: defaults, validation, immutable fields,
field selectors and kubectl table columns.

Workloads are stored, never reconciled: only the defaults the real API server
applies are added, so kubectl's apply diffs and tests see what they would see
against kube-apiserver.
"""

from __future__ import annotations

import base64
import binascii
import copy
import ipaddress
import re
from collections.abc import Callable
from typing import Any, ClassVar

from localkube.errors import (
    Cause,
    bad_request,
    field_forbidden,
    field_invalid,
    field_required,
    field_too_long,
    field_unsupported,
)
from localkube.meta import (
    canonical_microtime,
    canonical_time,
    check_microtime,
    check_time,
    new_uid,
    now_time,
)

Obj = dict[str, Any]

DATA_LIMIT = 1048576
_DATA_KEY = re.compile(r"[-._a-zA-Z0-9]+")

COMMON_FIELDS = ("metadata.name", "metadata.namespace")
FIELD_SELECTORS: dict[str, tuple[str, ...]] = {
    "Pod": (
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.nominatedNodeName",
    ),
    "Event": (
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
        "regarding.kind",
        "regarding.namespace",
        "regarding.name",
        "regarding.uid",
    ),
    "Secret": ("type",),
    "Namespace": ("status.phase",),
    "Node": ("spec.unschedulable",),
    "ReplicaSet": ("status.replicas",),
    "Job": ("status.successful",),
    "CertificateSigningRequest": ("spec.signerName",),
    "Service": ("spec.clusterIP", "spec.type"),
}


def field_supported(kind: str, custom_fields: tuple[str, ...] = ()) -> Callable[[str], bool]:
    """Which field selectors a kind accepts."""
    allowed = set(COMMON_FIELDS) | set(FIELD_SELECTORS.get(kind, ())) | set(custom_fields)
    return allowed.__contains__


# ---- data checks -----------------------------------------------------------


def _check_data_keys(obj: Obj, *fields: str) -> list[Cause]:
    causes: list[Cause] = []
    total = 0
    seen: set[str] = set()
    for field in fields:
        data = obj.get(field)
        if data is None:
            continue
        if not isinstance(data, dict):
            causes.append(field_invalid(field, data, "must be a map"))
            continue
        for key, value in data.items():
            if not _DATA_KEY.fullmatch(key) or len(key) > 253:
                causes.append(
                    field_invalid(
                        f"{field}",
                        key,
                        "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',"
                        "  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
                    )
                )
            if key in seen:
                causes.append(field_invalid(f"{field}", key, "duplicate of key present in data"))
            seen.add(key)
            total += len(str(value))
    if total > DATA_LIMIT:
        causes.append(field_too_long("data", DATA_LIMIT))
    return causes


def _immutable(old: Obj, new: Obj, path: tuple[str, ...], label: str) -> Cause | None:
    def get(o: Obj) -> Any:
        node: Any = o
        for part in path:
            node = node.get(part) if isinstance(node, dict) else None
        return node

    if get(old) != get(new):
        return field_invalid(label, get(new), "field is immutable")
    return None


def _validate_with_fixed_selector(strategy: Strategy, obj: Obj, old: Obj) -> list[Cause]:
    """validate_update of workloads: their ``spec.selector`` is immutable."""
    causes = strategy.validate(obj)
    change = _immutable(old, obj, ("spec", "selector"), "spec.selector")
    if change:
        causes.append(change)
    return causes


# ---- strategies -------------------------------------------------------------


class Strategy:
    """Default behaviour: no defaults, no extra validation, Name/Created At columns."""

    def prepare_create(self, obj: Obj, context: Context) -> None:
        """Defaults and server-set fields on create."""

    def prepare_update(self, obj: Obj, old: Obj, context: Context) -> None:
        """Server-owned fields restored on update."""

    def validate(self, obj: Obj) -> list[Cause]:
        return []

    def validate_update(self, obj: Obj, old: Obj) -> list[Cause]:
        return self.validate(obj)


class Context:
    """What strategies may need from the server: requester identity, service IP allocator."""

    def __init__(
        self,
        user: str = "",
        groups: list[str] | None = None,
        uid: str = "",
        extra: dict[str, Any] | None = None,
        allocate_ip: Callable[[str | None], str] | None = None,
    ) -> None:
        self.user = user
        self.groups = groups or []
        self.uid = uid
        self.extra = extra or {}
        self.allocate_ip = allocate_ip


class NamespaceStrategy(Strategy):
    def prepare_create(self, obj: Obj, context: Context) -> None:
        obj.setdefault("spec", {})["finalizers"] = ["kubernetes"]
        obj["status"] = {"phase": "Active"}
        obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = obj["metadata"]["name"]

    def prepare_update(self, obj: Obj, old: Obj, context: Context) -> None:
        obj["spec"] = copy.deepcopy(old.get("spec", {}))
        obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = obj["metadata"]["name"]


class ConfigMapStrategy(Strategy):
    def validate(self, obj: Obj) -> list[Cause]:
        causes = _check_data_keys(obj, "data", "binaryData")
        for key, value in (obj.get("data") or {}).items():
            if not isinstance(value, str):
                causes.append(field_invalid(f"data[{key}]", value, "must be a string"))
        return causes

    def validate_update(self, obj: Obj, old: Obj) -> list[Cause]:
        causes = self.validate(obj)
        if old.get("immutable"):
            for field in ("data", "binaryData", "immutable"):
                if obj.get(field) != old.get(field):
                    causes.append(field_forbidden(field, "field is immutable when `immutable` is set"))
        return causes


def _base64_error_offset(value: str) -> int:
    """Where Go's decoder stops: the first character outside the alphabet (line breaks
    are skipped), else the end of the last complete group."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="
    for index, char in enumerate(value):
        if char not in alphabet and char not in "\r\n":
            return index
    complete = len(value.replace("\r", "").replace("\n", "")) // 4 * 4
    return min(complete, len(value))


class SecretStrategy(Strategy):
    REQUIRED_KEYS: ClassVar[dict[str, tuple[str, ...]]] = {
        "kubernetes.io/tls": ("tls.crt", "tls.key"),
        "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    }

    def _normalise(self, obj: Obj) -> None:
        data = obj.get("data") or {}
        if not isinstance(data, dict):
            raise bad_request('Secret in version "v1" cannot be handled as a Secret: data must be a map')
        for key, value in data.items():
            if value is None:
                continue
            # Go's decoder skips line breaks; the bytes are stored, so a read gives them
            # back in canonical base64
            text = str(value).replace("\r", "").replace("\n", "")
            try:
                data[key] = base64.b64encode(base64.b64decode(text, validate=True)).decode()
            except (binascii.Error, ValueError):
                raise bad_request(
                    'Secret in version "v1" cannot be handled as a Secret: '
                    f"illegal base64 data at input byte {_base64_error_offset(str(value))} (key {key})"
                ) from None
        string_data = obj.pop("stringData", None)
        if isinstance(string_data, dict):
            for key, value in string_data.items():
                data[key] = base64.b64encode(str(value).encode()).decode()
            obj["data"] = data
        obj.setdefault("type", "Opaque")

    def prepare_create(self, obj: Obj, context: Context) -> None:
        self._normalise(obj)

    def prepare_update(self, obj: Obj, old: Obj, context: Context) -> None:
        self._normalise(obj)

    def validate(self, obj: Obj) -> list[Cause]:
        causes = _check_data_keys(obj, "data")
        kind = obj.get("type", "Opaque")
        for key in self.REQUIRED_KEYS.get(kind, ()):
            if key not in (obj.get("data") or {}):
                causes.append(field_required(f"data[{key}]"))
        if kind == "kubernetes.io/service-account-token" and not (obj["metadata"].get("annotations") or {}).get(
            "kubernetes.io/service-account.name"
        ):
            causes.append(field_required("metadata.annotations[kubernetes.io/service-account.name]"))
        return causes

    def validate_update(self, obj: Obj, old: Obj) -> list[Cause]:
        causes = self.validate(obj)
        if obj.get("type") != old.get("type"):
            causes.append(field_invalid("type", obj.get("type"), "field is immutable"))
        if old.get("immutable"):
            for field in ("data", "immutable"):
                if obj.get(field) != old.get(field):
                    causes.append(field_forbidden(field, "field is immutable when `immutable` is set"))
        return causes


class ServiceStrategy(Strategy):
    def prepare_create(self, obj: Obj, context: Context) -> None:
        spec = obj.setdefault("spec", {})
        kind = spec.setdefault("type", "ClusterIP")
        spec.setdefault("sessionAffinity", "None")
        if kind != "ExternalName":
            spec.setdefault("ipFamilies", ["IPv4"])
            spec.setdefault("ipFamilyPolicy", "SingleStack")
            spec.setdefault("internalTrafficPolicy", "Cluster")
            if spec.get("clusterIP") != "None" and context.allocate_ip is not None:
                spec["clusterIP"] = context.allocate_ip(spec.get("clusterIP") or None)
                spec["clusterIPs"] = [spec["clusterIP"]]
            elif spec.get("clusterIP") == "None":
                spec["clusterIPs"] = ["None"]
        for port in spec.get("ports") or []:
            if isinstance(port, dict):
                port.setdefault("protocol", "TCP")
                port.setdefault("targetPort", port.get("port"))
        if kind in ("NodePort", "LoadBalancer"):
            spec.setdefault("externalTrafficPolicy", "Cluster")
        obj["status"] = {"loadBalancer": {}}

    def prepare_update(self, obj: Obj, old: Obj, context: Context) -> None:
        spec = obj.setdefault("spec", {})
        old_spec = old.get("spec") or {}
        for field in (
            "clusterIP",
            "clusterIPs",
            "ipFamilies",
            "ipFamilyPolicy",
            "internalTrafficPolicy",
            "sessionAffinity",
        ):
            if field not in spec and field in old_spec:
                spec[field] = copy.deepcopy(old_spec[field])
        spec.setdefault("type", old_spec.get("type", "ClusterIP"))
        for port in spec.get("ports") or []:
            if isinstance(port, dict):
                port.setdefault("protocol", "TCP")
                port.setdefault("targetPort", port.get("port"))

    def validate(self, obj: Obj) -> list[Cause]:
        spec = obj.get("spec") or {}
        causes = []
        kind = spec.get("type", "ClusterIP")
        if kind not in ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName"):
            causes.append(
                field_unsupported("spec.type", kind, ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"])
            )
        ports = spec.get("ports") or []
        if kind != "ExternalName" and not ports and spec.get("clusterIP") != "None":
            causes.append(field_required("spec.ports"))
        if len(ports) > 1:
            names = [p.get("name") for p in ports if isinstance(p, dict)]
            for index, name in enumerate(names):
                if not name:
                    causes.append(field_required(f"spec.ports[{index}].name"))
        return causes

    def validate_update(self, obj: Obj, old: Obj) -> list[Cause]:
        causes = self.validate(obj)
        old_ip = (old.get("spec") or {}).get("clusterIP")
        new_ip = (obj.get("spec") or {}).get("clusterIP")
        if old_ip and new_ip != old_ip:
            causes.append(field_invalid("spec.clusterIP", new_ip, "field is immutable"))
        return causes


def _decode_times(kind: str, obj: Obj, times: tuple[str, ...], micro_times: tuple[str, ...]) -> None:
    """Parse time fields the way the Go decoder does: reject what it cannot
    parse (400) and store the canonical UTC form of the rest."""
    for fields, check, canonical in (
        (times, check_time, canonical_time),
        (micro_times, check_microtime, canonical_microtime),
    ):
        for path in fields:
            *parents, leaf = path.split(".")
            holder: Any = obj
            for parent in parents:
                holder = holder.get(parent) if isinstance(holder, dict) else None
            if not isinstance(holder, dict) or holder.get(leaf) is None:
                continue
            problem = check(holder[leaf])
            if problem:
                raise bad_request(f'{kind} in version "v1" cannot be handled as a {kind}: {problem}')
            holder[leaf] = canonical(holder[leaf])


class LeaseStrategy(Strategy):
    def prepare_create(self, obj: Obj, context: Context) -> None:
        _decode_times("Lease", obj, (), ("spec.acquireTime", "spec.renewTime"))

    def prepare_update(self, obj: Obj, old: Obj, context: Context) -> None:
        self.prepare_create(obj, context)

    def validate(self, obj: Obj) -> list[Cause]:
        duration = (obj.get("spec") or {}).get("leaseDurationSeconds")
        if duration is not None and (not isinstance(duration, int) or duration <= 0):
            return [field_invalid("spec.leaseDurationSeconds", duration, "must be greater than 0")]
        return []


class EventStrategy(Strategy):
    def prepare_create(self, obj: Obj, context: Context) -> None:
        _decode_times("Event", obj, ("firstTimestamp", "lastTimestamp"), ("eventTime", "series.lastObservedTime"))

    def prepare_update(self, obj: Obj, old: Obj, context: Context) -> None:
        self.prepare_create(obj, context)

    def validate(self, obj: Obj) -> list[Cause]:
        involved = obj.get("involvedObject") or obj.get("regarding") or {}
        namespace = obj["metadata"].get("namespace", "")
        if involved.get("namespace") and namespace and involved["namespace"] != namespace:
            return [field_invalid("involvedObject.namespace", involved["namespace"], "does not match event.namespace")]
        return []


def _pod_defaults(spec: Obj) -> None:
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("securityContext", {})
    for field in ("containers", "initContainers"):
        for container in spec.get(field) or []:
            if not isinstance(container, dict):
                continue
            container.setdefault("terminationMessagePath", "/dev/termination-log")
            container.setdefault("terminationMessagePolicy", "File")
            image = str(container.get("image", ""))
            tail = image.rsplit("/", 1)[-1]
            untagged = ":" not in tail and "@" not in tail
            container.setdefault(
                "imagePullPolicy", "Always" if untagged or tail.endswith(":latest") else "IfNotPresent"
            )
            container.setdefault("resources", {})
            for port in container.get("ports") or []:
                if isinstance(port, dict):
                    port.setdefault("protocol", "TCP")


class PodStrategy(Strategy):
    def prepare_create(self, obj: Obj, context: Context) -> None:
        spec = obj.setdefault("spec", {})
        _pod_defaults(spec)
        spec.setdefault("serviceAccountName", "default")
        spec.setdefault("serviceAccount", spec["serviceAccountName"])
        spec.setdefault("enableServiceLinks", True)
        spec.setdefault("priority", 0)
        spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
        obj["status"] = {"phase": "Pending", "qosClass": "BestEffort"}

    def validate(self, obj: Obj) -> list[Cause]:
        if not (obj.get("spec") or {}).get("containers"):
            return [field_required("spec.containers")]
        return []


def _template_spec(obj: Obj) -> Obj | None:
    template = (obj.get("spec") or {}).get("template")
    if isinstance(template, dict):
        spec: Obj = template.setdefault("spec", {})
        return spec
    return None


class WorkloadStrategy(Strategy):
    """Deployment, ReplicaSet, StatefulSet, DaemonSet: defaults and the selector rules."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def prepare_create(self, obj: Obj, context: Context) -> None:
        self._defaults(obj)

    def prepare_update(self, obj: Obj, old: Obj, context: Context) -> None:
        self._defaults(obj)

    def _defaults(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        if self.kind in ("Deployment", "ReplicaSet", "StatefulSet"):
            spec.setdefault("replicas", 1)
        if self.kind == "Deployment":
            spec.setdefault(
                "strategy",
                {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
            )
            spec.setdefault("revisionHistoryLimit", 10)
            spec.setdefault("progressDeadlineSeconds", 600)
        if self.kind == "StatefulSet":
            spec.setdefault("podManagementPolicy", "OrderedReady")
            spec.setdefault("updateStrategy", {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
            spec.setdefault("revisionHistoryLimit", 10)
            spec.setdefault("persistentVolumeClaimRetentionPolicy", {"whenDeleted": "Retain", "whenScaled": "Retain"})
        if self.kind == "DaemonSet":
            spec.setdefault(
                "updateStrategy",
                {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
            )
            spec.setdefault("revisionHistoryLimit", 10)
        pod = _template_spec(obj)
        if pod is not None:
            _pod_defaults(pod)
            template_meta = spec["template"].setdefault("metadata", {})
            template_meta.setdefault("creationTimestamp", None)

    def validate(self, obj: Obj) -> list[Cause]:
        spec = obj.get("spec") or {}
        causes = []
        selector = spec.get("selector")
        if not isinstance(selector, dict) or not (selector.get("matchLabels") or selector.get("matchExpressions")):
            causes.append(field_required("spec.selector"))
        else:
            labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
            for key, value in (selector.get("matchLabels") or {}).items():
                if labels.get(key) != value:
                    causes.append(
                        field_invalid(
                            "spec.template.metadata.labels",
                            labels,
                            "`selector` does not match template `labels`",
                        )
                    )
                    break
        replicas = spec.get("replicas")
        if replicas is not None and (not isinstance(replicas, int) or replicas < 0):
            causes.append(field_invalid("spec.replicas", replicas, "must be greater than or equal to 0"))
        if not (_template_spec(copy.deepcopy(obj)) or {}).get("containers"):
            causes.append(field_required("spec.template.spec.containers"))
        return causes

    validate_update = _validate_with_fixed_selector


class JobStrategy(Strategy):
    def prepare_create(self, obj: Obj, context: Context) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("parallelism", 1)
        spec.setdefault("completions", 1)
        spec.setdefault("backoffLimit", 6)
        spec.setdefault("completionMode", "NonIndexed")
        spec.setdefault("suspend", False)
        spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
        uid = obj["metadata"]["uid"]
        name = obj["metadata"]["name"]
        if not spec.get("manualSelector"):
            spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
            labels = spec.setdefault("template", {}).setdefault("metadata", {}).setdefault("labels", {})
            labels.update(
                {
                    "batch.kubernetes.io/controller-uid": uid,
                    "batch.kubernetes.io/job-name": name,
                    "controller-uid": uid,
                    "job-name": name,
                }
            )
        pod = _template_spec(obj)
        if pod is not None:
            _pod_defaults(pod)
            pod.setdefault("restartPolicy", "Never")

    def validate(self, obj: Obj) -> list[Cause]:
        pod = (((obj.get("spec") or {}).get("template") or {}).get("spec")) or {}
        policy = pod.get("restartPolicy")
        if policy not in ("Never", "OnFailure"):
            return [field_unsupported("spec.template.spec.restartPolicy", policy, ["OnFailure", "Never"])]
        return []

    validate_update = _validate_with_fixed_selector


class CronJobStrategy(Strategy):
    def prepare_create(self, obj: Obj, context: Context) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("concurrencyPolicy", "Allow")
        spec.setdefault("suspend", False)
        spec.setdefault("successfulJobsHistoryLimit", 3)
        spec.setdefault("failedJobsHistoryLimit", 1)
        pod = ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template")
        if isinstance(pod, dict):
            _pod_defaults(pod.setdefault("spec", {}))


class RBACBindingStrategy(Strategy):
    def __init__(self, cluster: bool) -> None:
        self.cluster = cluster

    def validate(self, obj: Obj) -> list[Cause]:
        causes = []
        ref = obj.get("roleRef") or {}
        if ref.get("apiGroup") != "rbac.authorization.k8s.io":
            causes.append(field_unsupported("roleRef.apiGroup", ref.get("apiGroup", ""), ["rbac.authorization.k8s.io"]))
        allowed = ["ClusterRole"] if self.cluster else ["Role", "ClusterRole"]
        if ref.get("kind") not in allowed:
            causes.append(field_unsupported("roleRef.kind", ref.get("kind", ""), allowed))
        if not ref.get("name"):
            causes.append(field_required("roleRef.name"))
        for index, subject in enumerate(obj.get("subjects") or []):
            kind = subject.get("kind")
            if kind not in ("User", "Group", "ServiceAccount"):
                causes.append(field_unsupported(f"subjects[{index}].kind", kind, ["ServiceAccount", "User", "Group"]))
            if not subject.get("name"):
                causes.append(field_required(f"subjects[{index}].name"))
            if kind == "ServiceAccount" and self.cluster and not subject.get("namespace"):
                causes.append(field_required(f"subjects[{index}].namespace"))
        return causes

    def validate_update(self, obj: Obj, old: Obj) -> list[Cause]:
        causes = self.validate(obj)
        if obj.get("roleRef") != old.get("roleRef"):
            causes.append(field_invalid("roleRef", obj.get("roleRef"), "cannot change roleRef"))
        return causes


class RoleStrategy(Strategy):
    def validate(self, obj: Obj) -> list[Cause]:
        causes = []
        for index, rule in enumerate(obj.get("rules") or []):
            if not rule.get("verbs"):
                causes.append(field_required(f"rules[{index}].verbs", "verbs must contain at least one value"))
        return causes


STRATEGIES: dict[str, Strategy] = {
    "Namespace": NamespaceStrategy(),
    "ConfigMap": ConfigMapStrategy(),
    "Secret": SecretStrategy(),
    "Service": ServiceStrategy(),
    "Lease": LeaseStrategy(),
    "Event": EventStrategy(),
    "Pod": PodStrategy(),
    "Deployment": WorkloadStrategy("Deployment"),
    "ReplicaSet": WorkloadStrategy("ReplicaSet"),
    "StatefulSet": WorkloadStrategy("StatefulSet"),
    "DaemonSet": WorkloadStrategy("DaemonSet"),
    "Job": JobStrategy(),
    "CronJob": CronJobStrategy(),
    "RoleBinding": RBACBindingStrategy(cluster=False),
    "ClusterRoleBinding": RBACBindingStrategy(cluster=True),
    "Role": RoleStrategy(),
    "ClusterRole": RoleStrategy(),
}

DEFAULT_STRATEGY = Strategy()


def strategy_for(kind: str) -> Strategy:
    """The strategy of a built-in kind (CSR and CRD strategies are registered by their modules)."""
    return STRATEGIES.get(kind, DEFAULT_STRATEGY)


def register(kind: str, strategy: Strategy) -> None:
    STRATEGIES[kind] = strategy


class ServiceIPAllocator:
    """Cluster IPs from 10.96.0.0/12; 10.96.0.1 belongs to default/kubernetes."""

    def __init__(self, cidr: str = "10.96.0.0/12") -> None:
        self.network = ipaddress.ip_network(cidr)
        self.used: set[str] = set()
        self._next = int(self.network.network_address) + 1

    def allocate(self, requested: str | None) -> str:
        if requested:
            try:
                address = ipaddress.ip_address(requested)
            except ValueError:
                raise _ip_error(requested, "not a valid IP") from None
            if address not in self.network:
                raise _ip_error(requested, f"the provided IP ({requested}) is not in the valid range")
            if requested in self.used:
                raise _ip_error(requested, "provided IP is already allocated")
            self.used.add(requested)
            return requested
        last = int(self.network.broadcast_address)
        for _ in range(last - int(self.network.network_address)):
            candidate = str(ipaddress.ip_address(self._next))
            self._next = self._next + 1 if self._next < last - 1 else int(self.network.network_address) + 1
            if candidate not in self.used:
                self.used.add(candidate)
                return candidate
        raise _ip_error("", "range is full")

    def release(self, address: str | None) -> None:
        if address:
            self.used.discard(address)


def _ip_error(value: str, detail: str) -> Exception:
    from localkube.errors import invalid

    return invalid(
        "Service",
        "",
        "",
        [field_invalid("spec.clusterIPs", [value], f"failed to allocate IP {value}: {detail}")],
    )


def age(timestamp: str | None, now: float) -> str:
    """kubectl's relative age: 45s, 8m30s, 3h12m, 2d4h."""
    if not timestamp:
        return "<unknown>"
    from localkube.meta import parse_time

    try:
        seconds = int(now - parse_time(timestamp).timestamp())
    except ValueError:
        return "<invalid>"
    if seconds < 0:
        return "<invalid>"
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        rest = seconds % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return (
            f"{minutes}m"
            if minutes < 60
            else f"{minutes // 60}h{minutes % 60}m"
            if minutes % 60
            else f"{minutes // 60}h"
        )
    hours = minutes // 60
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if days < 8:
        return f"{days}d{hours % 24}h" if hours % 24 else f"{days}d"
    if days < 365 * 2:
        return f"{days}d"
    return f"{days // 365}y{days % 365}d"


__all__ = [
    "Context",
    "ServiceIPAllocator",
    "Strategy",
    "age",
    "field_supported",
    "new_uid",
    "now_time",
    "register",
    "strategy_for",
]
