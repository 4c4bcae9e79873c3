"""What the connect subresources of Pods (``log``, ``exec``, ``attach``,
``portforward``) check before they serve: the Pod, which container, whether it
has a node and runs, as kube-apiserver's pod REST (``LogLocation``,
``streamLocation``, ``PortForwardLocation``) and the kubelet check them.

localkube is the kubelet of its simulated nodes, so the kubelet's answers
(a container not running, no previous instance) come from here too; where the
real kubelet answers in plain text through the apiserver's proxy, so does
localkube (:func:`kubelet_error`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aiohttp import web

from localkube.errors import bad_request, not_found

Obj = dict[str, Any]


class KubeletError(Exception):
    """An answer of the (simulated) kubelet: a status code and plain text, which
    kube-apiserver's upgrade-aware proxy passes through as they are."""

    def __init__(self, code: int, text: str) -> None:
        super().__init__(text)
        self.code = code
        self.text = text

    def response(self) -> web.Response:
        return web.Response(status=self.code, text=self.text, content_type="text/plain")


@dataclass(frozen=True)
class Target:
    """The Pod and container a connect request reaches."""

    pod: Obj
    container: Obj

    @property
    def name(self) -> str:
        return str(self.pod["metadata"]["name"])

    @property
    def container_name(self) -> str:
        return str(self.container.get("name", ""))

    def status(self) -> Obj | None:
        """The container's status, when the kubelet has reported one."""
        status = self.pod.get("status") or {}
        for entry in (status.get("containerStatuses") or []) + (status.get("initContainerStatuses") or []):
            if entry.get("name") == self.container_name:
                return dict(entry)
        return None

    def running(self) -> bool:
        status = self.status()
        return bool(status and (status.get("state") or {}).get("running"))


def _names(containers: list[Obj]) -> str:
    return " ".join(str(c.get("name", "")) for c in containers)


def get_pod(store: Any, namespace: str, name: str) -> Obj:
    pod = store.get("/pods", namespace, name)
    if pod is None:
        raise not_found("pods", "", name)
    return dict(pod)


def choose_container(pod: Obj, wanted: str) -> Obj:
    """The container a request names, or the Pod's only one (kube's messages when neither)."""
    name = pod["metadata"]["name"]
    spec = pod.get("spec") or {}
    containers = list(spec.get("containers") or [])
    init = list(spec.get("initContainers") or [])
    if not wanted:
        if len(containers) == 1:
            return dict(containers[0])
        if not containers:
            raise bad_request(f"a container name must be specified for pod {name}")
        message = f"a container name must be specified for pod {name}, choose one of: [{_names(containers)}]"
        if init:
            message += f" or one of the init containers: [{_names(init)}]"
        raise bad_request(message)
    for container in containers + init:
        if container.get("name") == wanted:
            return dict(container)
    raise bad_request(f"container {wanted} is not valid for pod {name}")


def target(store: Any, namespace: str, name: str, container: str) -> Target:
    pod = get_pod(store, namespace, name)
    return Target(pod, choose_container(pod, container))


def require_host(pod: Obj) -> None:
    """exec, attach and portforward need a node (log answers empty instead)."""
    if not (pod.get("spec") or {}).get("nodeName"):
        raise bad_request(f"pod {pod['metadata']['name']} does not have a host assigned")


def require_running(found: Target) -> None:
    """The kubelet finds only running containers to exec into or attach to."""
    if not found.running():
        raise KubeletError(500, f'container not found ("{found.container_name}")')


def ports_of(pod: Obj) -> list[int]:
    """Every containerPort of the Pod (TCP), in spec order, once each."""
    ports: list[int] = []
    for container in (pod.get("spec") or {}).get("containers") or []:
        for port in container.get("ports") or []:
            number = port.get("containerPort")
            if isinstance(number, int) and port.get("protocol", "TCP") == "TCP" and number not in ports:
                ports.append(number)
    return ports


def same_pod(store: Any, pod: Obj) -> bool:
    """The Pod is still there (not deleted and made again under the same name)."""
    meta = pod["metadata"]
    current = store.get("/pods", meta.get("namespace", ""), meta["name"])
    return current is not None and current["metadata"].get("uid") == meta.get("uid")


def parse_bool(query: Any, key: str) -> bool:
    """A boolean query parameter as Go's strconv.ParseBool reads it (kube's query conversion)."""
    value = query.get(key)
    if value is None or value == "":
        return False
    if value in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if value in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    raise bad_request(f'strconv.ParseBool: parsing "{value}": invalid syntax')


def parse_int(query: Any, key: str) -> int | None:
    value = query.get(key)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise bad_request(f'strconv.ParseInt: parsing "{value}": invalid syntax') from None


def connect_options(kind: str, query: Any) -> Obj:
    """The ``Pod<X>Options`` object CONNECT admission sees (the query's options)."""
    obj: Obj = {"kind": kind, "apiVersion": "v1"}
    for key in ("stdin", "stdout", "stderr", "tty"):
        if key in query:
            obj[key] = parse_bool(query, key)
    if query.get("container"):
        obj["container"] = query["container"]
    if kind == "PodExecOptions":
        obj["command"] = list(query.getall("command", []))
    if kind == "PodPortForwardOptions" and query.get("ports"):
        obj["ports"] = [int(p) for p in str(query["ports"]).split(",") if p.strip().isdigit()]
    return obj


__all__ = [
    "KubeletError",
    "Target",
    "choose_container",
    "connect_options",
    "get_pod",
    "parse_bool",
    "parse_int",
    "ports_of",
    "require_host",
    "require_running",
    "same_pod",
    "target",
]
