"""What the agent reads from its own (member) cluster: health, version, API
enablements, and trimmed watch caches of Nodes and Pods for the resource
summary (only the fields the summary uses are kept, so a large cluster costs
little memory)."""

from __future__ import annotations

from typing import Any

from karmada.kube import Informer, KubeClient, KubeError
from karmada.kube.resources import NODES, PODS

Obj = dict[str, Any]
AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def trim_node(node: Obj) -> Obj:
    meta, status = node.get("metadata") or {}, node.get("status") or {}
    ready = [c for c in status.get("conditions") or [] if c.get("type") == "Ready"]
    return {
        "metadata": {"name": meta.get("name"), "resourceVersion": meta.get("resourceVersion")},
        "status": {"allocatable": status.get("allocatable") or {}, "conditions": ready},
    }


def _requests(containers: list[Obj] | None) -> list[Obj]:
    return [{"resources": {"requests": (c.get("resources") or {}).get("requests") or {}}} for c in containers or []]


def trim_pod(pod: Obj) -> Obj:
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    trimmed_spec: Obj = {"containers": _requests(spec.get("containers"))}
    if spec.get("initContainers"):
        trimmed_spec["initContainers"] = _requests(spec["initContainers"])
    if spec.get("nodeName"):
        trimmed_spec["nodeName"] = spec["nodeName"]
    if spec.get("overhead"):
        trimmed_spec["overhead"] = spec["overhead"]
    return {
        "metadata": {
            "name": meta.get("name"),
            "namespace": meta.get("namespace"),
            "resourceVersion": meta.get("resourceVersion"),
        },
        "spec": trimmed_spec,
        "status": {"phase": (pod.get("status") or {}).get("phase")},
    }


def node_and_pod_informers(member: KubeClient) -> tuple[Informer, Informer]:
    return (
        Informer(member, NODES, transform=trim_node),
        Informer(member, PODS, transform=trim_pod),
    )


async def probe_health(member: KubeClient) -> tuple[bool, bool]:
    """``(online, healthy)``: GET /readyz, falling back to /healthz when it is not served."""
    try:
        await member.raw_get("/readyz")
        return True, True
    except KubeError as exc:
        if exc.status == 404:
            try:
                await member.raw_get("/healthz")
                return True, True
            except KubeError as inner:
                return inner.status != 0, False
        return exc.status != 0, False


async def kubernetes_version(member: KubeClient) -> str:
    return str((await member.raw_get("/version")).get("gitVersion", ""))


class Discovery:
    """The member's API enablements, read afresh each time (as Karmada's status controller reads
    them every round) but turned into the sorted list only when the aggregated discovery
    documents changed since the last read: an idle cluster's answer is the same every time."""

    def __init__(self, member: KubeClient) -> None:
        self.member = member
        self._documents: list[tuple[str, Obj]] | None = None
        self._result: tuple[list[Obj], bool] | None = None
        # per path: the last document and its ETag, sent back so an unchanged one costs a 304
        self._seen: dict[str, tuple[Obj, str]] = {}

    async def enablements(self) -> tuple[list[Obj], bool]:
        documents: list[tuple[str, Obj]] = []
        complete = True
        for path in ("/api", "/apis"):
            seen = self._seen.get(path)
            try:
                document, etag = await self.member.get_if_changed(path, AGGREGATED, seen[1] if seen else None)
            except KubeError:
                complete = False
                continue
            if document is None and seen is not None:
                document = seen[0]
            elif document is not None and etag:
                self._seen[path] = (document, etag)
            else:
                self._seen.pop(path, None)
            if document is None:
                complete = False  # a 304 to a question never asked: nothing to stand on
                continue
            documents.append((path, document))
        if complete and self._result is not None and documents == self._documents:
            return self._result
        result = await _enablements(self.member, documents, complete=complete)
        # partial answers, and plain discovery (which reads a document per group version), are not kept
        kept = complete and all(d.get("kind") == "APIGroupDiscoveryList" for _, d in documents)
        self._documents, self._result = (documents, result) if kept else (None, None)
        return result


async def _enablements(
    member: KubeClient, documents: list[tuple[str, Obj]], *, complete: bool
) -> tuple[list[Obj], bool]:
    found: dict[str, list[Obj]] = {}
    for path, document in documents:
        if document.get("kind") != "APIGroupDiscoveryList":
            complete = await _plain_discovery(member, path, document, found) and complete
            continue
        for group in document.get("items") or []:
            name = (group.get("metadata") or {}).get("name", "")
            for version in group.get("versions") or []:
                group_version = f"{name}/{version['version']}" if name else version["version"]
                found[group_version] = [
                    {"name": r["resource"], "kind": (r.get("responseKind") or {}).get("kind", "")}
                    for r in version.get("resources") or []
                ]
    enablements: list[Obj] = [
        {"groupVersion": gv, "resources": sorted(resources, key=lambda r: str(r["name"]))}
        for gv, resources in sorted(found.items())
    ]
    return enablements, complete


async def _plain_discovery(member: KubeClient, path: str, document: Obj, found: dict[str, list[Obj]]) -> bool:
    complete = True
    if path == "/api":
        paths = [(v, f"/api/{v}") for v in document.get("versions") or []]
    else:
        paths = [
            (v["groupVersion"], f"/apis/{v['groupVersion']}")
            for g in document.get("groups") or []
            for v in g.get("versions") or []
        ]
    for group_version, resource_path in paths:
        try:
            listing = await member.raw_get(resource_path)
        except KubeError:
            complete = False
            continue
        found[group_version] = [
            {"name": r["name"], "kind": r.get("kind", "")}
            for r in listing.get("resources") or []
            if "/" not in r.get("name", "")
        ]
    return complete
