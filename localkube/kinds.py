"""Per-kind strategies of built-in resources: what the server sets on create and
restores on update, and which field selectors a kind accepts.

The defaults come from :mod:`localkube.defaults`, admission from
:mod:`localkube.admission`, validation from :mod:`localkube.validation`
(strategies here add only the checks that need the server's state). Workloads
are stored, never reconciled: only what the real API server sets is added, so
kubectl's apply diffs and tests see what they would see against kube-apiserver.
"""

from __future__ import annotations

import base64
import binascii
import copy
import ipaddress
from collections.abc import Callable
from typing import Any

from localkube import defaults
from localkube.errors import Cause, bad_request, field_invalid
from localkube.meta import (
    canonical_microtime,
    canonical_time,
    check_microtime,
    check_time,
    new_uid,
    now_time,
)

Obj = dict[str, Any]

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


class EventStrategy(Strategy):
    def prepare_create(self, obj: Obj, context: Context) -> None:
        _decode_times("Event", obj, ("firstTimestamp", "lastTimestamp"), ("eventTime", "series.lastObservedTime"))

    def prepare_update(self, obj: Obj, old: Obj, context: Context) -> None:
        self.prepare_create(obj, context)


class PodStrategy(Strategy):
    def prepare_create(self, obj: Obj, context: Context) -> None:
        defaults.pod(obj)
        spec = obj["spec"]
        obj["status"] = {"phase": "Pending", "qosClass": defaults.qos_class(spec)}

    def prepare_update(self, obj: Obj, old: Obj, context: Context) -> None:
        defaults.pod(obj)


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
        defaults.workload(self.kind, obj.setdefault("spec", {}))


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
        defaults.pod_template(spec.get("template"))


class CronJobStrategy(Strategy):
    def prepare_create(self, obj: Obj, context: Context) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("concurrencyPolicy", "Allow")
        spec.setdefault("suspend", False)
        spec.setdefault("successfulJobsHistoryLimit", 3)
        spec.setdefault("failedJobsHistoryLimit", 1)
        job = (spec.get("jobTemplate") or {}).get("spec")
        if isinstance(job, dict):
            defaults.pod_template(job.get("template"))


class RBACStrategy(Strategy):
    def prepare_create(self, obj: Obj, context: Context) -> None:
        defaults.rbac_subjects(obj)

    def prepare_update(self, obj: Obj, old: Obj, context: Context) -> None:
        defaults.rbac_subjects(obj)


class PersistentVolumeClaimStrategy(Strategy):
    def prepare_create(self, obj: Obj, context: Context) -> None:
        defaults.persistent_volume_claim(obj)
        obj["status"] = {"phase": "Pending"}

    def prepare_update(self, obj: Obj, old: Obj, context: Context) -> None:
        defaults.persistent_volume_claim(obj)


class PersistentVolumeStrategy(Strategy):
    def prepare_create(self, obj: Obj, context: Context) -> None:
        defaults.persistent_volume(obj)
        obj["status"] = {"phase": "Pending"}

    def prepare_update(self, obj: Obj, old: Obj, context: Context) -> None:
        defaults.persistent_volume(obj)


STRATEGIES: dict[str, Strategy] = {
    "Namespace": NamespaceStrategy(),
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
    "RoleBinding": RBACStrategy(),
    "ClusterRoleBinding": RBACStrategy(),
    "PersistentVolumeClaim": PersistentVolumeClaimStrategy(),
    "PersistentVolume": PersistentVolumeStrategy(),
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
