"""InterpretDependency: the objects a workload needs in the same clusters.

From the pod spec (namespace = the workload's): ConfigMaps and Secrets
referenced by env, envFrom, volumes and projected volumes of every kind of
container; image pull secrets; volume-plugin secret references; the service
account unless ``default``; PersistentVolumeClaims (StatefulSets drop the
claims their volumeClaimTemplates create). Ingress needs its TLS Secrets;
ServiceImport its derived Service and EndpointSlices. Results are sorted,
so the annotation that stores them does not churn.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from karmada.interpreter.podspec import nested, pod_spec

if TYPE_CHECKING:  # the API models load pydantic, which an agent never needs (its memory)
    from karmada.api.interpreter import DependentObjectReference

DEPENDENCY_KINDS = {
    ("apps/v1", "Deployment"),
    ("apps/v1", "ReplicaSet"),
    ("apps/v1", "DaemonSet"),
    ("apps/v1", "StatefulSet"),
    ("batch/v1", "Job"),
    ("batch/v1", "CronJob"),
    ("v1", "Pod"),
    ("networking.k8s.io/v1", "Ingress"),
    ("multicluster.x-k8s.io/v1alpha1", "ServiceImport"),
}

_CONTAINER_FIELDS = ("initContainers", "containers", "ephemeralContainers")
# Volume plugins whose secret reference is {secretRef: {name}}.
_SECRET_REF_VOLUMES = ("cephfs", "cinder", "flexVolume", "rbd", "scaleIO", "iscsi", "storageos")


def _containers(spec: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    for field in _CONTAINER_FIELDS:
        for container in spec.get(field) or []:
            if isinstance(container, Mapping):
                yield container


def _secret_names(spec: Mapping[str, Any]) -> set[str]:
    names: set[str] = {str(ref.get("name") or "") for ref in spec.get("imagePullSecrets") or []}
    for container in _containers(spec):
        for source in container.get("envFrom") or []:
            names.add(str(nested(source, "secretRef", "name") or ""))
        for env in container.get("env") or []:
            names.add(str(nested(env, "valueFrom", "secretKeyRef", "name") or ""))
    for volume in spec.get("volumes") or []:
        names.add(str(nested(volume, "secret", "secretName") or ""))
        for source in nested(volume, "projected", "sources") or []:
            names.add(str(nested(source, "secret", "name") or ""))
        names.add(str(nested(volume, "azureFile", "secretName") or ""))
        for plugin in _SECRET_REF_VOLUMES:
            names.add(str(nested(volume, plugin, "secretRef", "name") or ""))
        names.add(str(nested(volume, "csi", "nodePublishSecretRef", "name") or ""))
    names.discard("")
    return names


def _configmap_names(spec: Mapping[str, Any]) -> set[str]:
    names: set[str] = set()
    for container in _containers(spec):
        for source in container.get("envFrom") or []:
            names.add(str(nested(source, "configMapRef", "name") or ""))
        for env in container.get("env") or []:
            names.add(str(nested(env, "valueFrom", "configMapKeyRef", "name") or ""))
    for volume in spec.get("volumes") or []:
        names.add(str(nested(volume, "configMap", "name") or ""))
        for source in nested(volume, "projected", "sources") or []:
            names.add(str(nested(source, "configMap", "name") or ""))
    names.discard("")
    return names


def _pvc_names(spec: Mapping[str, Any]) -> set[str]:
    names = {str(nested(v, "persistentVolumeClaim", "claimName") or "") for v in spec.get("volumes") or []}
    names.discard("")
    return names


def _ref(kind: str, namespace: str, name: str) -> DependentObjectReference:
    from karmada.api.interpreter import DependentObjectReference

    return DependentObjectReference(api_version="v1", kind=kind, namespace=namespace or None, name=name)


def pod_dependencies(spec: Mapping[str, Any], namespace: str) -> list[DependentObjectReference]:
    """Everything a pod spec references."""
    refs = [_ref("ConfigMap", namespace, n) for n in _configmap_names(spec)]
    refs += [_ref("Secret", namespace, n) for n in _secret_names(spec)]
    account = str(spec.get("serviceAccountName") or "")
    if account and account != "default":
        refs.append(_ref("ServiceAccount", namespace, account))
    refs += [_ref("PersistentVolumeClaim", namespace, n) for n in _pvc_names(spec)]
    return refs


def sort_key(ref: DependentObjectReference) -> tuple[str, str, str, str]:
    """Order by apiVersion, kind, namespace, name."""
    return (ref.api_version, ref.kind, ref.namespace or "", ref.name or "")


def get_dependencies(obj: Mapping[str, Any]) -> list[DependentObjectReference]:
    """The sorted dependencies of a built-in kind."""
    api_version, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
    if (api_version, kind) not in DEPENDENCY_KINDS:
        raise KeyError(f"no built-in dependency interpretation for {kind} in {api_version}")
    namespace = str(nested(obj, "metadata", "namespace") or "")
    if kind == "Ingress":
        refs = [_ref("Secret", namespace, str(tls.get("secretName") or "")) for tls in nested(obj, "spec", "tls") or []]
    elif kind == "ServiceImport":
        from karmada.api.interpreter import DependentObjectReference

        derived = f"derived-{nested(obj, 'metadata', 'name')}"
        refs = [
            _ref("Service", namespace, derived),
            DependentObjectReference.from_dict(
                {
                    "apiVersion": "discovery.k8s.io/v1",
                    "kind": "EndpointSlice",
                    "namespace": namespace,
                    "labelSelector": {"matchLabels": {"kubernetes.io/service-name": derived}},
                }
            ),
        ]
    else:
        refs = pod_dependencies(pod_spec(obj) or {}, namespace)
        if kind == "StatefulSet":
            templates = {str(nested(t, "metadata", "name")) for t in nested(obj, "spec", "volumeClaimTemplates") or []}
            refs = [r for r in refs if not (r.kind == "PersistentVolumeClaim" and r.name in templates)]
    refs = [r for r in refs if r.name or r.label_selector is not None]  # an empty reference is invalid
    unique = {(r.api_version, r.kind, r.namespace, r.name, repr(r.label_selector)): r for r in refs}
    return sorted(unique.values(), key=sort_key)
