"""``as=Table`` responses for kubectl: printer columns of CRDs and the columns of built-in kinds."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any

from localkube.kinds import age
from localkube.resources import ResourceType

Obj = dict[str, Any]
Column = dict[str, Any]

_NAME = {
    "name": "Name",
    "type": "string",
    "format": "name",
    "description": "Name must be unique within a namespace.",
    "priority": 0,
}
_AGE = {"name": "Age", "type": "string", "format": "", "description": "Time since creation.", "priority": 0}


def _column(name: str, kind: str = "string", priority: int = 0, description: str = "") -> Column:
    return {"name": name, "type": kind, "format": "", "description": description, "priority": priority}


def jsonpath(obj: Any, path: str) -> list[Any]:
    """Evaluate kubectl's JSONPath subset: ``.a.b``, ``[0]``, ``[*]``, ``[?(@.k=="v")]``."""
    path = path.strip()
    if path.startswith("{") and path.endswith("}"):
        path = path[1:-1]
    tokens = re.findall(r"\.([^.\[\]]+)|\[([^\]]*)\]", path)
    nodes = [obj]
    for name, bracket in tokens:
        following: list[Any] = []
        for node in nodes:
            if name:
                if isinstance(node, dict) and name in node:
                    following.append(node[name])
                elif name == "*" and isinstance(node, dict):
                    following.extend(node.values())
            elif bracket == "*":
                if isinstance(node, list):
                    following.extend(node)
                elif isinstance(node, dict):
                    following.extend(node.values())
            elif bracket.startswith("?"):
                match = re.fullmatch(r"\?\(@\.([\w.-]+)\s*==\s*[\"']?([^\"']*)[\"']?\)", bracket)
                if match and isinstance(node, list):
                    key, wanted = match.groups()
                    for item in node:
                        value = jsonpath(item, "." + key)
                        if value and str(value[0]) == wanted:
                            following.append(item)
            elif re.fullmatch(r"-?\d+", bracket):
                if isinstance(node, list):
                    index = int(bracket)
                    if -len(node) <= index < len(node):
                        following.append(node[index])
            elif bracket.strip("'\""):
                key = bracket.strip("'\"")
                if isinstance(node, dict) and key in node:
                    following.append(node[key])
        nodes = following
    return nodes


def _cell(obj: Obj, column: Column) -> Any:
    values = jsonpath(obj, column["jsonPath"])
    if not values:
        return None
    kind = column.get("type", "string")
    if kind == "date":
        return age(values[0] if isinstance(values[0], str) else None, time.time())
    if kind in ("integer", "number", "boolean"):
        return values[0]
    if len(values) > 1:
        return ",".join(_text(v) for v in values)
    return _text(values[0])


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"))


def _custom_columns(rt: ResourceType) -> tuple[list[Column], Callable[[Obj], list[Any]]]:
    declared = rt.printer_columns or [{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]
    columns = [dict(_NAME)]
    for col in declared:
        columns.append(
            {
                "name": col["name"],
                "type": "string" if col.get("type") == "date" else col.get("type", "string"),
                "format": col.get("format", ""),
                "description": col.get("description")
                or f"Custom resource definition column (in JSONPath format): {col['jsonPath']}",
                "priority": col.get("priority", 0),
            }
        )

    def row(obj: Obj) -> list[Any]:
        return [obj["metadata"]["name"], *(_cell(obj, col) for col in declared)]

    return columns, row


def _count(value: Any) -> int:
    return len(value) if isinstance(value, (dict, list)) else 0


def _ready(obj: Obj) -> str:
    status = obj.get("status") or {}
    containers = (obj.get("spec") or {}).get("containers") or []
    ready = sum(1 for c in status.get("containerStatuses") or [] if c.get("ready"))
    return f"{ready}/{len(containers)}"


def _ports(obj: Obj) -> str:
    ports = (obj.get("spec") or {}).get("ports") or []
    text = ",".join(
        f"{p.get('port')}{':' + str(p['nodePort']) if p.get('nodePort') else ''}/{p.get('protocol', 'TCP')}"
        for p in ports
    )
    return text or "<none>"


def _csr_condition(obj: Obj) -> str:
    conditions = [c.get("type") for c in (obj.get("status") or {}).get("conditions") or []]
    if (obj.get("status") or {}).get("certificate"):
        conditions.append("Issued")
    return ",".join(conditions) or "Pending"


def _involved(obj: Obj) -> str:
    involved = obj.get("involvedObject") or {}
    return f"{str(involved.get('kind', '')).lower()}/{involved.get('name', '')}"


def _created(obj: Obj) -> str:
    return str(obj["metadata"].get("creationTimestamp", ""))


def _node_status(obj: Obj) -> str:
    ready = next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"), None)
    text = "Unknown" if ready is None else "Ready" if ready.get("status") == "True" else "NotReady"
    if (obj.get("spec") or {}).get("unschedulable"):
        text += ",SchedulingDisabled"
    return text


def _node_roles(obj: Obj) -> str:
    prefix = "node-role.kubernetes.io/"
    roles = sorted(k[len(prefix) :] for k in (obj["metadata"].get("labels") or {}) if k.startswith(prefix))
    return ",".join(r for r in roles if r) or "<none>"


def _address(obj: Obj, kind: str) -> str:
    for address in (obj.get("status") or {}).get("addresses") or []:
        if address.get("type") == kind:
            return str(address.get("address", ""))
    return "<none>"


def _status(obj: Obj, key: str, default: Any = 0) -> Any:
    return (obj.get("status") or {}).get(key, default)


def _spec(obj: Obj, key: str, default: Any = 0) -> Any:
    return (obj.get("spec") or {}).get(key, default)


def _job_status(obj: Obj) -> str:
    for condition in _status(obj, "conditions", []) or []:
        if condition.get("status") == "True" and condition.get("type") in ("Complete", "Failed", "Suspended"):
            return str(condition["type"])
    return "Running"


def _pod_status(pod: Obj) -> str:
    """The STATUS column: the reason or phase, "Terminating" once deleted and not finished (as kubectl prints it)."""
    status = pod.get("status") or {}
    phase = str(status.get("phase", ""))
    if pod["metadata"].get("deletionTimestamp"):
        if status.get("reason") == "NodeLost":
            return "Unknown"
        if phase not in ("Succeeded", "Failed"):
            return "Terminating"
    return str(status.get("reason") or phase)


_BUILTIN: dict[str, tuple[list[Column], Callable[[Obj], list[Any]]]] = {
    "Namespace": (
        [_NAME, _column("Status"), _AGE],
        lambda o: [
            o["metadata"]["name"],
            (o.get("status") or {}).get("phase", ""),
            age(_created(o), time.time()),
        ],
    ),
    "ConfigMap": (
        [_NAME, _column("Data", "integer"), _AGE],
        lambda o: [
            o["metadata"]["name"],
            _count(o.get("data")) + _count(o.get("binaryData")),
            age(_created(o), time.time()),
        ],
    ),
    "Secret": (
        [_NAME, _column("Type"), _column("Data", "integer"), _AGE],
        lambda o: [
            o["metadata"]["name"],
            o.get("type", ""),
            _count(o.get("data")),
            age(_created(o), time.time()),
        ],
    ),
    "ServiceAccount": (
        [_NAME, _column("Secrets", "integer"), _AGE],
        lambda o: [o["metadata"]["name"], _count(o.get("secrets")), age(_created(o), time.time())],
    ),
    "Service": (
        [_NAME, _column("Type"), _column("Cluster-IP"), _column("External-IP"), _column("Port(s)"), _AGE],
        lambda o: [
            o["metadata"]["name"],
            (o.get("spec") or {}).get("type", ""),
            (o.get("spec") or {}).get("clusterIP", "<none>"),
            ",".join(
                i.get("ip") or i.get("hostname", "")
                for i in ((o.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
            )
            or "<none>",
            _ports(o),
            age(_created(o), time.time()),
        ],
    ),
    "Pod": (
        [
            _NAME,
            _column("Ready"),
            _column("Status"),
            _column("Restarts", "integer"),
            _AGE,
            _column("IP", priority=1),
            _column("Node", priority=1),
            _column("Nominated Node", priority=1),
            _column("Readiness Gates", priority=1),
        ],
        lambda o: [
            o["metadata"]["name"],
            _ready(o),
            _pod_status(o),
            sum(int(c.get("restartCount", 0)) for c in (o.get("status") or {}).get("containerStatuses") or []),
            age(_created(o), time.time()),
            _status(o, "podIP", "<none>"),
            _spec(o, "nodeName", "<none>"),
            _status(o, "nominatedNodeName", "<none>"),
            "<none>",
        ],
    ),
    "Node": (
        [
            _NAME,
            _column("Status"),
            _column("Roles"),
            _AGE,
            _column("Version"),
            _column("Internal-IP", priority=1),
            _column("External-IP", priority=1),
            _column("OS-Image", priority=1),
            _column("Kernel-Version", priority=1),
            _column("Container-Runtime", priority=1),
        ],
        lambda o: [
            o["metadata"]["name"],
            _node_status(o),
            _node_roles(o),
            age(_created(o), time.time()),
            (_status(o, "nodeInfo", {}) or {}).get("kubeletVersion", ""),
            _address(o, "InternalIP"),
            _address(o, "ExternalIP"),
            (_status(o, "nodeInfo", {}) or {}).get("osImage", "<unknown>") or "<unknown>",
            (_status(o, "nodeInfo", {}) or {}).get("kernelVersion", "<unknown>") or "<unknown>",
            (_status(o, "nodeInfo", {}) or {}).get("containerRuntimeVersion", "<unknown>"),
        ],
    ),
    "ReplicaSet": (
        [_NAME, _column("Desired", "integer"), _column("Current", "integer"), _column("Ready", "integer"), _AGE],
        lambda o: [
            o["metadata"]["name"],
            _spec(o, "replicas", 1),
            _status(o, "replicas"),
            _status(o, "readyReplicas"),
            age(_created(o), time.time()),
        ],
    ),
    "StatefulSet": (
        [_NAME, _column("Ready"), _AGE],
        lambda o: [
            o["metadata"]["name"],
            f"{_status(o, 'readyReplicas')}/{_spec(o, 'replicas', 1)}",
            age(_created(o), time.time()),
        ],
    ),
    "DaemonSet": (
        [
            _NAME,
            _column("Desired", "integer"),
            _column("Current", "integer"),
            _column("Ready", "integer"),
            _column("Up-to-date", "integer"),
            _column("Available", "integer"),
            _column("Node Selector"),
            _AGE,
        ],
        lambda o: [
            o["metadata"]["name"],
            _status(o, "desiredNumberScheduled"),
            _status(o, "currentNumberScheduled"),
            _status(o, "numberReady"),
            _status(o, "updatedNumberScheduled"),
            _status(o, "numberAvailable"),
            ",".join(
                f"{k}={v}" for k, v in ((_spec(o, "template", {}).get("spec") or {}).get("nodeSelector") or {}).items()
            )
            or "<none>",
            age(_created(o), time.time()),
        ],
    ),
    "Job": (
        [_NAME, _column("Status"), _column("Completions"), _column("Duration"), _AGE],
        lambda o: [
            o["metadata"]["name"],
            _job_status(o),
            f"{_status(o, 'succeeded')}/{_spec(o, 'completions', 1)}",
            age(_status(o, "startTime", "") or _created(o), time.time()),
            age(_created(o), time.time()),
        ],
    ),
    "Deployment": (
        [_NAME, _column("Ready"), _column("Up-to-date", "integer"), _column("Available", "integer"), _AGE],
        lambda o: [
            o["metadata"]["name"],
            f"{(o.get('status') or {}).get('readyReplicas', 0)}/{(o.get('spec') or {}).get('replicas', 0)}",
            (o.get("status") or {}).get("updatedReplicas", 0),
            (o.get("status") or {}).get("availableReplicas", 0),
            age(_created(o), time.time()),
        ],
    ),
    "Lease": (
        [_NAME, _column("Holder"), _AGE],
        lambda o: [
            o["metadata"]["name"],
            (o.get("spec") or {}).get("holderIdentity", ""),
            age(_created(o), time.time()),
        ],
    ),
    "CertificateSigningRequest": (
        [
            _NAME,
            _AGE,
            _column("SignerName"),
            _column("Requestor"),
            _column("RequestedDuration"),
            _column("Condition"),
        ],
        lambda o: [
            o["metadata"]["name"],
            age(_created(o), time.time()),
            (o.get("spec") or {}).get("signerName", ""),
            (o.get("spec") or {}).get("username", ""),
            f"{(o.get('spec') or {}).get('expirationSeconds')}s"
            if (o.get("spec") or {}).get("expirationSeconds")
            else "<none>",
            _csr_condition(o),
        ],
    ),
    "Event": (
        [_column("Last Seen"), _column("Type"), _column("Reason"), _column("Object"), _column("Message")],
        lambda o: [
            age(o.get("lastTimestamp") or o.get("eventTime") or _created(o), time.time()),
            o.get("type", ""),
            o.get("reason", ""),
            _involved(o),
            o.get("message", ""),
        ],
    ),
}

_DEFAULT = (
    [_NAME, {"name": "Created At", "type": "date", "format": "", "description": "", "priority": 0}],
    lambda o: [o["metadata"]["name"], _created(o)],
)


def columns_for(rt: ResourceType) -> tuple[list[Column], Callable[[Obj], list[Any]]]:
    """Column definitions and the row function of a resource type."""
    if rt.custom:
        return _custom_columns(rt)
    return _BUILTIN.get(rt.kind, _DEFAULT)


def partial_metadata(obj: Obj) -> Obj:
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": obj.get("metadata", {}),
    }


def table(rt: ResourceType, objects: list[Obj], include: str, list_meta: Obj, *, with_columns: bool = True) -> Obj:
    """A ``meta.k8s.io/v1`` Table of ``objects``."""
    columns, row = columns_for(rt)
    rows = []
    for obj in objects:
        entry: Obj = {"cells": row(obj)}
        if include == "Object":
            entry["object"] = obj
        elif include != "None":
            entry["object"] = partial_metadata(obj)
        rows.append(entry)
    result: Obj = {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_meta}
    if with_columns:
        result["columnDefinitions"] = columns
    result["rows"] = rows
    return result
