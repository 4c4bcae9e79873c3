"""The diff kube-apiserver appends to a refused Pod update, in go-cmp's report style.

ValidatePodUpdate (kubernetes/kubernetes pkg/apis/core/validation/validation.go)
ends its Forbidden message with ``cmp.Diff(oldPod.Spec, mungedPodSpec)``: the
internal ``core.PodSpec`` printed field by field, ``-`` before the stored
value, ``+`` before the new one, two identical fields of context on each side
of a change and the rest folded into ``... // N identical fields``.

This is a rendering of the JSON objects, not of the Go structs, so it is close
but not byte-identical: field names are the JSON names capitalised (with Go's
initialisms), nested types are named only where listed below, the internal
type's moves (``hostNetwork`` and friends live in ``SecurityContext`` there)
are not made, and quantities print as their strings. go-cmp itself randomises
some of its whitespace between runs so that nobody parses it; clients match
the fixed sentence before the diff, which is exact.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]

CONTEXT = 2

# core.PodSpec's field order, by JSON name (the v1-only names after it)
POD_SPEC_ORDER = (
    "volumes",
    "initContainers",
    "containers",
    "ephemeralContainers",
    "restartPolicy",
    "terminationGracePeriodSeconds",
    "activeDeadlineSeconds",
    "dnsPolicy",
    "nodeSelector",
    "serviceAccountName",
    "automountServiceAccountToken",
    "nodeName",
    "securityContext",
    "imagePullSecrets",
    "hostname",
    "subdomain",
    "setHostnameAsFQDN",
    "affinity",
    "schedulerName",
    "tolerations",
    "hostAliases",
    "priorityClassName",
    "priority",
    "preemptionPolicy",
    "dnsConfig",
    "readinessGates",
    "runtimeClassName",
    "overhead",
    "enableServiceLinks",
    "topologySpreadConstraints",
    "os",
    "schedulingGates",
    "resourceClaims",
    "resources",
    "hostNetwork",
    "hostPID",
    "hostIPC",
    "shareProcessNamespace",
    "hostUsers",
    "serviceAccount",
)

# Go types of the fields whose values go-cmp names when it prints them whole
TYPES = {
    "volumes": "[]core.Volume",
    "initContainers": "[]core.Container",
    "containers": "[]core.Container",
    "ephemeralContainers": "[]core.EphemeralContainer",
    "nodeSelector": "map[string]string",
    "securityContext": "&core.PodSecurityContext",
    "imagePullSecrets": "[]core.LocalObjectReference",
    "affinity": "&core.Affinity",
    "tolerations": "[]core.Toleration",
    "hostAliases": "[]core.HostAlias",
    "dnsConfig": "&core.PodDNSConfig",
    "readinessGates": "[]core.PodReadinessGate",
    "topologySpreadConstraints": "[]core.TopologySpreadConstraint",
    "os": "&core.PodOS",
    "schedulingGates": "[]core.PodSchedulingGate",
    "resourceClaims": "[]core.PodResourceClaim",
    "ports": "[]core.ContainerPort",
    "env": "[]core.EnvVar",
    "volumeMounts": "[]core.VolumeMount",
    "resources": "core.ResourceRequirements",
    "limits": "core.ResourceList",
    "requests": "core.ResourceList",
    "labels": "map[string]string",
    "command": "[]string",
    "args": "[]string",
}

# scalar fields that are pointers in Go, printed as &value (nil when absent)
POINTERS = frozenset(
    {
        "terminationGracePeriodSeconds",
        "activeDeadlineSeconds",
        "automountServiceAccountToken",
        "setHostnameAsFQDN",
        "priority",
        "preemptionPolicy",
        "runtimeClassName",
        "enableServiceLinks",
        "shareProcessNamespace",
        "hostUsers",
        "tolerationSeconds",
        "privileged",
        "runAsUser",
        "runAsGroup",
        "runAsNonRoot",
        "readOnlyRootFilesystem",
        "allowPrivilegeEscalation",
        "fsGroup",
        "defaultMode",
        "optional",
    }
)

# Go's initialisms where the capitalised JSON name differs from the Go field name
GO_NAMES = {
    "dnsPolicy": "DNSPolicy",
    "dnsConfig": "DNSConfig",
    "setHostnameAsFQDN": "SetHostnameAsFQDN",
    "hostPID": "HostPID",
    "hostIPC": "HostIPC",
    "hostIP": "HostIP",
    "os": "OS",
    "tty": "TTY",
    "fsGroup": "FSGroup",
    "fsGroupChangePolicy": "FSGroupChangePolicy",
    "seLinuxOptions": "SELinuxOptions",
    "httpGet": "HTTPGet",
    "tcpSocket": "TCPSocket",
    "grpc": "GRPC",
    "iscsi": "ISCSI",
    "nfs": "NFS",
    "rbd": "RBD",
    "csi": "CSI",
    "fc": "FC",
    "gcePersistentDisk": "GCEPersistentDisk",
    "awsElasticBlockStore": "AWSElasticBlockStore",
    "apiVersion": "APIVersion",
    "uid": "UID",
}


def go_name(key: str) -> str:
    return GO_NAMES.get(key) or key[:1].upper() + key[1:]


def pod_spec_diff(old: Obj, new: Obj) -> str:
    """``cmp.Diff(old, new)`` for two pod specs, as the refusal's last lines."""
    keys = [k for k in POD_SPEC_ORDER if k in old or k in new]
    keys += [k for k in sorted({*old, *new}) if k not in POD_SPEC_ORDER]
    lines = [Line(" ", 0, "", "core.PodSpec{"), *_fields(old, new, keys, 1), Line(" ", 0, "", "}")]
    return "".join(line.text() + "\n" for line in lines)


@dataclass
class Line:
    """One line of the report: its mark (" ", "-" or "+"), tab depth, field name (or "") and value."""

    mark: str
    depth: int
    name: str
    value: str
    width: int = 0  # names of neighbouring one-line fields are padded to one width, as go-cmp aligns them

    def text(self) -> str:
        label = f"{self.name}: ".ljust(self.width) if self.name else ""
        return f"{self.mark} " + "\t" * self.depth + label + self.value


Row = tuple[bool, list[Line]]


def _missing(value: Any) -> bool:
    return value is None or value in ([], {})


def same(a: Any, b: Any) -> bool:
    """apimachinery's semantic equality on JSON: null, absent and empty collections are one."""
    if _missing(a) or _missing(b):
        return _missing(a) and _missing(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return all(same(a.get(k), b.get(k)) for k in {*a, *b})
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _fields(old: Obj, new: Obj, keys: list[str], depth: int) -> list[Line]:
    rows: list[Row] = []
    for key in keys:
        before, after = old.get(key), new.get(key)
        if same(before, after):
            rows.append((True, [Line(" ", depth, go_name(key), _value(key, before, typed=False) + ",")]))
        else:
            rows.append((False, _changed(key, go_name(key), before, after, depth)))
    return _align(_fold(rows, depth, "fields"))


def _changed(key: str, name: str, before: Any, after: Any, depth: int) -> list[Line]:
    if isinstance(before, dict) and isinstance(after, dict):
        keys = list(dict.fromkeys([*before, *after]))
        return [
            Line(" ", depth, name, TYPES.get(key, "") + "{"),
            *_fields(before, after, keys, depth + 1),
            Line(" ", depth, "", "},"),
        ]
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after) and before:
        rows: list[Row] = []
        for a, b in zip(before, after, strict=True):
            if same(a, b):
                rows.append((True, [Line(" ", depth + 1, "", _value("", a, typed=False) + ",")]))
            else:
                rows.append((False, _changed("", "", a, b, depth + 1)))
        return [
            Line(" ", depth, name, TYPES.get(key, "") + "{"),
            *_fold(rows, depth + 1, "elements"),
            Line(" ", depth, "", "},"),
        ]
    return [
        Line("-", depth, name, _value(key, before, after) + ","),
        Line("+", depth, name, _value(key, after, before) + ","),
    ]


def _fold(rows: list[Row], depth: int, noun: str) -> list[Line]:
    """Keep CONTEXT identical rows next to each change; count the others."""
    changes = [i for i, (unchanged, _) in enumerate(rows) if not unchanged]
    keep = {j for i in changes for j in range(i - CONTEXT, i + CONTEXT + 1)}
    out: list[Line] = []
    skipped = 0
    for index, (unchanged, lines) in enumerate(rows):
        if unchanged and index not in keep:
            skipped += 1
            continue
        if skipped:
            out.append(_ellipsis(depth, skipped, noun))
            skipped = 0
        out += lines
    if skipped:
        out.append(_ellipsis(depth, skipped, noun))
    return out


def _ellipsis(depth: int, count: int, noun: str) -> Line:
    return Line(" ", depth, "", f"... // {count} identical {noun if count != 1 else noun[:-1]}")


def _align(lines: list[Line]) -> list[Line]:
    """Pad the names of consecutive one-line fields at one depth to the longest of them."""
    run: list[Line] = []
    for line in [*lines, Line(" ", -1, "", "")]:
        one_line = bool(line.name) and not line.value.endswith("{")
        if one_line and (not run or run[0].depth == line.depth):
            run.append(line)
            continue
        width = max((len(item.name) + 2 for item in run), default=0)
        for item in run:
            item.width = width
        run = [line] if one_line else []
    return lines


def _value(key: str, value: Any, other: Any = None, *, typed: bool = True) -> str:
    """A value as go-cmp prints it whole (with its type's name where a change shows it)."""
    if value is None:
        if key in POINTERS or isinstance(other, (dict, list)) or key in TYPES:
            return "nil"
        if isinstance(other, str):
            return '""'
        if isinstance(other, bool):
            return "false"
        if isinstance(other, int):
            return "0"
        return "nil"
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, (int, float)):
        text = str(value)
    elif isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
    elif isinstance(value, list):
        head = TYPES.get(key, "") if typed else ""
        return head + "{" + ", ".join(_value("", v, typed=False) for v in value) + "}"
    elif isinstance(value, dict):
        head = TYPES.get(key, "") if typed else ""
        if TYPES.get(key, "").startswith("map[") or key in ("limits", "requests"):
            items = ", ".join(f"{json.dumps(k)}: {_value('', v, typed=False)}" for k, v in sorted(value.items()))
            return head + "{" + items + "}"
        items = ", ".join(f"{go_name(k)}: {_value(k, v, typed=False)}" for k, v in value.items() if not _missing(v))
        return head + "{" + items + "}"
    else:
        text = str(value)
    return "&" + text if key in POINTERS else text
