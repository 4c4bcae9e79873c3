"""What kube-apiserver does for itself at start: rebuild what it keeps in memory
from storage (allocated cluster IPs, the types of established CRDs), then create
the startup namespaces, the default RBAC, the objects of ``default_objects``, the
``default/kubernetes`` Service and ``kube-public/cluster-info``.

Each object is created once: an existing one is left alone, except cluster-info,
rewritten when the server's URL or CA changed. Runs on the server's event loop
before it listens.
"""

from __future__ import annotations

import base64
import copy
from typing import Any

import yaml

from localkube import default_objects
from localkube.api import ResourceAPI, WriteOptions
from localkube.auth import default_rbac
from localkube.crd import is_established, resource_types
from localkube.kinds import Context, ServiceIPAllocator
from localkube.resources import ResourceType

Obj = dict[str, Any]
STARTUP_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


class Seeder:
    """Creates the system objects of one server through its ResourceAPI."""

    def __init__(self, api: ResourceAPI, allocator: ServiceIPAllocator) -> None:
        self.api = api
        self.store = api.store
        self.registry = api.registry
        self.allocator = allocator

    def _system_create(self, storage_rt: ResourceType, obj: Obj) -> None:
        meta = obj["metadata"]
        if self.store.get(storage_rt.storage_key, meta.get("namespace", ""), meta["name"]) is not None:
            return
        self.api.create(
            storage_rt,
            meta.get("namespace", ""),
            obj,
            Context(user="system:apiserver", groups=["system:masters"], allocate_ip=self.allocator.allocate),
            WriteOptions(),
        )

    def _rt(self, api_version: str, kind: str) -> ResourceType:
        rt = self.registry.by_kind(api_version, kind)
        assert rt is not None
        return rt

    def _seed_default_objects(self) -> None:
        for obj in [*default_objects.priority_classes(), *default_objects.flow_control()]:
            self._system_create(self._rt(obj["apiVersion"], obj["kind"]), obj)
        api_services = self._rt("apiregistration.k8s.io/v1", "APIService")
        for obj, status in default_objects.api_services(self.registry.groups()):
            if self.store.get(api_services.storage_key, "", obj["metadata"]["name"]) is not None:
                continue
            self._system_create(api_services, obj)
            created = self.store.get(api_services.storage_key, "", obj["metadata"]["name"])
            if created is not None:
                self.api.write_internal(api_services, {**created, "status": status}, created, "status")

    def seed(self) -> None:
        """Restore the in-memory state from storage and create what is missing."""
        for svc in self.store.items("/services"):
            ip = (svc.get("spec") or {}).get("clusterIP")
            if ip and ip != "None":
                self.allocator.used.add(ip)
        for crd in self.store.items("apiextensions.k8s.io/customresourcedefinitions"):
            if is_established(crd) and not crd["metadata"].get("deletionTimestamp"):
                self.registry.set_custom(crd["metadata"]["name"], resource_types(crd))
        ns_rt = self._rt("v1", "Namespace")
        for name in STARTUP_NAMESPACES:
            self._system_create(ns_rt, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        for _storage, obj in default_rbac():
            rt = self._rt(obj["apiVersion"], obj["kind"])
            self._system_create(rt, copy.deepcopy(obj))
        self._seed_default_objects()
        if self.store.get("/services", "default", "kubernetes") is None:
            self.allocator.used.discard("10.96.0.1")
            self._system_create(
                self._rt("v1", "Service"),
                {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "metadata": {
                        "name": "kubernetes",
                        "namespace": "default",
                        "labels": {"component": "apiserver", "provider": "kubernetes"},
                    },
                    "spec": {
                        "clusterIP": "10.96.0.1",
                        "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}],
                    },
                },
            )

    def write_cluster_info(self, url: str, ca_pem: bytes) -> None:
        """``kube-public/cluster-info``: the server URL and CA, readable anonymously."""
        kubeconfig = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "",
                    "cluster": {
                        "certificate-authority-data": base64.b64encode(ca_pem).decode(),
                        "server": url,
                    },
                }
            ],
            "contexts": [],
            "current-context": "",
            "preferences": {},
            "users": [],
        }
        text = yaml.safe_dump(kubeconfig, sort_keys=False)
        rt = self._rt("v1", "ConfigMap")
        existing = self.store.get("/configmaps", "kube-public", "cluster-info")
        if existing is None:
            self._system_create(
                rt,
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": "cluster-info", "namespace": "kube-public"},
                    "data": {"kubeconfig": text},
                },
            )
        elif (existing.get("data") or {}).get("kubeconfig") != text:
            updated = copy.deepcopy(existing)
            updated.setdefault("data", {})["kubeconfig"] = text
            self.api.update(rt, "kube-public", "cluster-info", updated, "", Context(), WriteOptions())
