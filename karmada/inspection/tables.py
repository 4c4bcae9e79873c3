"""One table of objects from several clusters, as ``kubectl karmada get`` prints it.

Rows come from each member's own ``as=Table`` response (so the columns are
kubectl's for that type, computed by the member's API server), from the
control plane's (CLUSTER ``Karmada``), or, for a member the plugin cannot
reach (pull mode), from the Works in its execution space: the manifest the
control plane sent, with the status the agent reported in
``manifestStatuses`` and the Work's age. Those rows get columns computed here
for the common kinds (the server printers' names), filled by column name into
the members' columns when both kinds of rows meet in one table.

As karmadactl: CLUSTER follows the first column, ADOPTION (``Y`` when the
member object carries ``karmada.io/managed=true``, ``N`` otherwise, ``-`` on
the control plane) comes last and is a wide-only column for Pods. Added
here: SOURCE (``member``, ``work-status`` or ``karmada``) in ``-o wide`` and
whenever a row was read from a Work status, so a reader knows which rows
are reports rather than reads.
"""

from __future__ import annotations

import copy
import datetime
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from karmada.api.keys import MANAGED_LABEL, MANAGED_LABEL_VALUE
from karmada.api.names import cluster_of_execution_space
from karmada.inspection.selectors import Requirement, selector_matches
from karmada.timestamps import parse_time

Obj = dict[str, Any]

CACHE_SOURCE_ANNOTATION = "resource.karmada.io/cached-from-cluster"
"""Karmada's annotation (karmada-search) naming the member an object was read from."""
SOURCE_ANNOTATION = "inspection.karmada-py.io/source"
"""Ours: how the object was read, ``member`` or ``work-status``."""

KARMADA = "Karmada"
MEMBER = "member"
WORK_STATUS = "work-status"
CONTROL_PLANE = "karmada"


@dataclass
class MemberTable:
    """One cluster's ``meta.k8s.io/v1`` Table of the requested objects."""

    cluster: str
    source: str  # MEMBER, WORK_STATUS or CONTROL_PLANE
    table: Obj


@dataclass
class Row:
    """One printed row: its cells (after CLUSTER and ADOPTION are added) and what sorts it."""

    namespace: str
    name: str
    cluster: str
    cells: list[str] = field(default_factory=list)


def human_duration(seconds: float) -> str:
    """apimachinery's ``duration.HumanDuration``: ``45s``, ``3m20s``, ``2h``, ``5d``."""
    seconds = int(max(seconds, 0))
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        return f"{minutes}m{seconds % 60}s" if seconds % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 192:
        return f"{hours // 24}d{hours % 24}h" if hours % 24 else f"{hours // 24}d"
    days = hours // 24
    if days < 365 * 2:
        return f"{days}d"
    if days < 365 * 8:
        return f"{days // 365}y{days % 365}d" if days % 365 else f"{days // 365}y"
    return f"{days // 365}y"


def _age(obj: Obj, now: datetime.datetime) -> str:
    created = (obj.get("metadata") or {}).get("creationTimestamp")
    if not created:
        return "<unknown>"
    return human_duration((now - parse_time(str(created))).total_seconds())


def _cell(value: Any) -> str:
    if value is None:
        return "<none>"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# -- rows read from Work status ---------------------------------------------------------------


def objects_from_works(
    works: Sequence[Obj],
    group: str,
    kind: str,
    *,
    namespace: str | None,
    name: str | None,
    selector: list[Requirement],
) -> list[Obj]:
    """The manifests of ``group``/``kind`` in ``works`` (one cluster's execution space), each with
    the status its agent reported, the Work's creation time, and annotations naming the cluster
    and the source. ``namespace`` None means every namespace."""
    found: list[Obj] = []
    for work in works:
        meta = work.get("metadata") or {}
        cluster = cluster_of_execution_space(str(meta.get("namespace", "")))
        if cluster is None:
            continue
        statuses = {
            (s.get("identifier") or {}).get("ordinal"): s
            for s in (work.get("status") or {}).get("manifestStatuses") or []
        }
        manifests = ((work.get("spec") or {}).get("workload") or {}).get("manifests") or []
        for ordinal, manifest in enumerate(manifests):
            api_version = str(manifest.get("apiVersion", ""))
            if manifest.get("kind") != kind or api_version.rpartition("/")[0] != group:
                continue
            manifest_meta = manifest.get("metadata") or {}
            if namespace is not None and manifest_meta.get("namespace", "") not in (namespace, ""):
                continue
            if name is not None and manifest_meta.get("name") != name:
                continue
            if not selector_matches(selector, manifest_meta.get("labels")):
                continue
            obj = copy.deepcopy(manifest)
            obj_meta = obj.setdefault("metadata", {})
            if meta.get("creationTimestamp"):
                obj_meta["creationTimestamp"] = meta["creationTimestamp"]
            annotations = obj_meta.setdefault("annotations", {})
            annotations[CACHE_SOURCE_ANNOTATION] = cluster
            annotations[SOURCE_ANNOTATION] = WORK_STATUS
            reported = statuses.get(ordinal)
            if reported is not None and "status" in reported:
                obj["status"] = copy.deepcopy(reported["status"])
            else:
                obj.pop("status", None)
            found.append(obj)
    return found


def _containers(obj: Obj) -> list[Obj]:
    template = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
    return list(template.get("containers") or (obj.get("spec") or {}).get("containers") or [])


def _wide_containers(obj: Obj) -> list[str]:
    containers = _containers(obj)
    return [",".join(c.get("name", "") for c in containers), ",".join(c.get("image", "") for c in containers)]


def _selector(obj: Obj) -> str:
    match = ((obj.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    return ",".join(f"{k}={v}" for k, v in sorted(match.items())) or "<none>"


def _deployment(obj: Obj) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    desired = spec.get("replicas", 1)
    return [
        f"{status.get('readyReplicas', 0)}/{desired}",
        status.get("updatedReplicas", 0),
        status.get("availableReplicas", 0),
    ]


def _statefulset(obj: Obj) -> list[Any]:
    status = obj.get("status") or {}
    return [f"{status.get('readyReplicas', 0)}/{(obj.get('spec') or {}).get('replicas', 1)}"]


def _replicaset(obj: Obj) -> list[Any]:
    status = obj.get("status") or {}
    return [(obj.get("spec") or {}).get("replicas", 1), status.get("replicas", 0), status.get("readyReplicas", 0)]


def _daemonset(obj: Obj) -> list[Any]:
    status = obj.get("status") or {}
    node_selector = (((obj.get("spec") or {}).get("template") or {}).get("spec") or {}).get("nodeSelector") or {}
    return [
        status.get("desiredNumberScheduled", 0),
        status.get("currentNumberScheduled", 0),
        status.get("numberReady", 0),
        status.get("updatedNumberScheduled", 0),
        status.get("numberAvailable", 0),
        ",".join(f"{k}={v}" for k, v in sorted(node_selector.items())) or "<none>",
    ]


def _service(obj: Obj) -> list[Any]:
    spec = obj.get("spec") or {}
    ports = ",".join(
        f"{p.get('port')}{':' + str(p['nodePort']) if p.get('nodePort') else ''}/{p.get('protocol', 'TCP')}"
        for p in spec.get("ports") or []
    )
    return [spec.get("type", "ClusterIP"), spec.get("clusterIP") or "<unknown>", "<none>", ports or "<none>"]


def _configmap(obj: Obj) -> list[Any]:
    return [len(obj.get("data") or {}) + len(obj.get("binaryData") or {})]


def _secret(obj: Obj) -> list[Any]:
    return [obj.get("type", "Opaque"), len(obj.get("data") or {}) + len(obj.get("stringData") or {})]


def _job(obj: Obj) -> list[Any]:
    status = obj.get("status") or {}
    return [f"{status.get('succeeded', 0)}/{(obj.get('spec') or {}).get('completions', 1)}"]


# kind -> (column names after NAME and before AGE, their cells, wide columns, their cells)
_PRINTERS: dict[str, tuple[list[str], Any, list[str], Any]] = {
    "Deployment": (
        ["Ready", "Up-to-date", "Available"],
        _deployment,
        ["Containers", "Images", "Selector"],
        lambda o: [*_wide_containers(o), _selector(o)],
    ),
    "StatefulSet": (["Ready"], _statefulset, ["Containers", "Images"], _wide_containers),
    "ReplicaSet": (
        ["Desired", "Current", "Ready"],
        _replicaset,
        ["Containers", "Images", "Selector"],
        lambda o: [*_wide_containers(o), _selector(o)],
    ),
    "DaemonSet": (
        ["Desired", "Current", "Ready", "Up-to-date", "Available", "Node Selector"],
        _daemonset,
        ["Containers", "Images", "Selector"],
        lambda o: [*_wide_containers(o), _selector(o)],
    ),
    "Service": (
        ["Type", "Cluster-IP", "External-IP", "Port(s)"],
        _service,
        ["Selector"],
        lambda o: [
            ",".join(f"{k}={v}" for k, v in sorted(((o.get("spec") or {}).get("selector") or {}).items())) or "<none>"
        ],
    ),
    "ConfigMap": (["Data"], _configmap, [], lambda o: []),
    "Secret": (["Type", "Data"], _secret, [], lambda o: []),
    "Job": (["Completions"], _job, ["Containers", "Images"], _wide_containers),
}


def _column(name: str, priority: int = 0) -> Obj:
    return {"name": name, "type": "string", "format": "", "description": "", "priority": priority}


def work_table(objects: Sequence[Obj], kind: str, now: datetime.datetime) -> Obj:
    """A Table of objects read from Work status, with the server printers' column names."""
    columns, cells, wide, wide_cells = _PRINTERS.get(kind, ([], lambda o: [], [], lambda o: []))
    definitions = [_column("Name"), *(_column(c) for c in columns), _column("Age"), *(_column(c, 1) for c in wide)]
    rows = [
        {
            "cells": [obj["metadata"].get("name", ""), *cells(obj), _age(obj, now), *wide_cells(obj)],
            "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj["metadata"]},
        }
        for obj in objects
    ]
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "columnDefinitions": definitions, "rows": rows}


# -- merging ----------------------------------------------------------------------------------


def _definitions(tables: Sequence[MemberTable]) -> list[Obj]:
    """The columns of the first table a real server computed, else of the first at all."""
    for preferred in (True, False):
        for table in tables:
            if (table.source != WORK_STATUS or not preferred) and table.table.get("columnDefinitions"):
                return list(table.table["columnDefinitions"])
    return [_column("Name"), _column("Age")]


def _project(table: MemberTable, definitions: list[Obj]) -> list[tuple[Obj, list[Any]]]:
    """Each row's cells in the order of ``definitions`` (by column name; missing ones ``<unknown>``)."""
    own = [str(c.get("name", "")).lower() for c in table.table.get("columnDefinitions") or definitions]
    wanted = [str(c.get("name", "")).lower() for c in definitions]
    projected = []
    for row in table.table.get("rows") or []:
        cells = list(row.get("cells") or [])
        by_name = dict(zip(own, cells, strict=False))
        projected.append((row.get("object") or {}, [by_name.get(name, "<unknown>") for name in wanted]))
    return projected


def merge_tables(
    tables: Sequence[MemberTable],
    *,
    wide: bool = False,
    with_namespace: bool = False,
    pods: bool = False,
    no_headers: bool = False,
    show_source: bool | None = None,
    name_prefix: str = "",
) -> tuple[list[str], list[Row]]:
    """The header and rows of one multi-cluster table, rows ordered by namespace, name, then
    cluster in the order given; ``name_prefix`` (``deployment.apps/``) goes before each name."""
    definitions = _definitions(tables)
    shown = [i for i, c in enumerate(definitions) if wide or int(c.get("priority", 0)) == 0]
    if show_source is None:
        show_source = wide or any(t.source == WORK_STATUS and t.table.get("rows") for t in tables)
    show_adoption = wide or not pods
    header = [str(definitions[i].get("name", "")).upper() for i in shown]
    header[1:1] = ["CLUSTER"]
    if show_source:
        header.append("SOURCE")
    if show_adoption:
        header.append("ADOPTION")
    if with_namespace:
        header.insert(0, "NAMESPACE")
    order = {t.cluster: i for i, t in enumerate(tables)}
    rows: list[Row] = []
    for table in tables:
        for obj, cells in _project(table, definitions):
            meta = obj.get("metadata") or {}
            printed = [_cell(cells[i]) for i in shown]
            if name_prefix and printed:  # several types in one get: kubectl's ``deployment.apps/nginx``
                printed[0] = name_prefix + printed[0]
            printed[1:1] = [KARMADA if table.source == CONTROL_PLANE else table.cluster]
            if show_source:
                printed.append(table.source)
            if show_adoption:
                if table.source == CONTROL_PLANE:
                    printed.append("-")
                else:
                    managed = (meta.get("labels") or {}).get(MANAGED_LABEL) == MANAGED_LABEL_VALUE
                    printed.append("Y" if managed else "N")
            namespace = str(meta.get("namespace", ""))
            if with_namespace:
                printed.insert(0, namespace)
            rows.append(Row(namespace, str(meta.get("name", printed[0])), table.cluster, printed))
    rows.sort(key=lambda r: (r.namespace, r.name, order.get(r.cluster, 0)))
    return ([] if no_headers else header), rows


def render_rows(header: Sequence[str], rows: Sequence[Row]) -> str:
    """Aligned columns, three spaces apart (kubectl's tab writer)."""
    lines = [list(header)] if header else []
    lines += [r.cells for r in rows]
    if not lines:
        return ""
    widths = [max(len(line[i]) for line in lines if i < len(line)) for i in range(max(len(line) for line in lines))]
    return "".join("   ".join(c.ljust(w) for c, w in zip(line, widths, strict=False)).rstrip() + "\n" for line in lines)
