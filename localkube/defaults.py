"""The defaults kube-apiserver's decoder applies to built-in kinds (the
``SetDefaults_*`` functions of pkg/apis/*/v1/defaults.go), before admission and validation."""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

FILE_MODE = 420  # 0644, the default mode of secret, configMap, downwardAPI and projected volumes
_MODE_SOURCES = ("secret", "configMap", "downwardAPI", "projected")


def _dicts(value: Any) -> list[Obj]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def pull_policy(image: str) -> str:
    """Always for an untagged or ``:latest`` image, IfNotPresent otherwise."""
    tail = image.rsplit("/", 1)[-1]
    untagged = ":" not in tail and "@" not in tail
    return "Always" if untagged or tail.endswith(":latest") else "IfNotPresent"


def _probe(probe: Any) -> None:
    if not isinstance(probe, dict):
        return
    probe.setdefault("timeoutSeconds", 1)
    probe.setdefault("periodSeconds", 10)
    probe.setdefault("successThreshold", 1)
    probe.setdefault("failureThreshold", 3)
    if isinstance(probe.get("httpGet"), dict):
        probe["httpGet"].setdefault("path", "/")
        probe["httpGet"].setdefault("scheme", "HTTP")


def _field_refs(items: list[Obj]) -> None:
    for item in items:
        if isinstance(item.get("fieldRef"), dict):
            item["fieldRef"].setdefault("apiVersion", "v1")


def _container(container: Obj, host_network: bool) -> None:
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")
    container.setdefault("imagePullPolicy", pull_policy(str(container.get("image", ""))))
    for port in _dicts(container.get("ports")):
        port.setdefault("protocol", "TCP")
        if host_network and port.get("containerPort"):
            port.setdefault("hostPort", port["containerPort"])
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        _probe(container.get(probe))
    for env in _dicts(container.get("env")):
        source = env.get("valueFrom")
        if isinstance(source, dict):
            _field_refs([source])
    resources = container.get("resources")
    if isinstance(resources, dict) and isinstance(resources.get("limits"), dict):
        # requests default to the limits given
        requests = resources.setdefault("requests", {})
        if isinstance(requests, dict):
            for name, value in resources["limits"].items():
                requests.setdefault(name, value)


def _volume(volume: Obj) -> None:
    for source in _MODE_SOURCES:
        if isinstance(volume.get(source), dict):
            volume[source].setdefault("defaultMode", FILE_MODE)
    if isinstance(volume.get("downwardAPI"), dict):
        _field_refs(_dicts(volume["downwardAPI"].get("items")))
    if isinstance(volume.get("projected"), dict):
        for projection in _dicts(volume["projected"].get("sources")):
            if isinstance(projection.get("downwardAPI"), dict):
                _field_refs(_dicts(projection["downwardAPI"].get("items")))
            token = projection.get("serviceAccountToken")
            if isinstance(token, dict):
                token.setdefault("expirationSeconds", 3600)
    if isinstance(volume.get("hostPath"), dict):
        volume["hostPath"].setdefault("type", "")


def pod_spec(spec: Obj) -> None:
    """SetDefaults_PodSpec and those of its containers and volumes."""
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("securityContext", {})
    host_network = bool(spec.get("hostNetwork"))
    for field in ("initContainers", "containers"):
        for container in _dicts(spec.get(field)):
            _container(container, host_network)
    for volume in _dicts(spec.get("volumes")):
        _volume(volume)


def pod(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    pod_spec(spec)
    spec.setdefault("enableServiceLinks", True)
    if spec.get("serviceAccountName"):
        spec.setdefault("serviceAccount", spec["serviceAccountName"])


def qos_class(spec: Obj) -> str:
    """Guaranteed when every container limits cpu and memory at its requests, BestEffort with
    no requests or limits at all, Burstable otherwise (pkg/apis/core/helper/qos)."""
    containers = _dicts(spec.get("containers")) + _dicts(spec.get("initContainers"))
    any_set = False
    guaranteed = True
    for container in containers:
        resources: Obj = container["resources"] if isinstance(container.get("resources"), dict) else {}
        requests = {k: v for k, v in (resources.get("requests") or {}).items() if k in ("cpu", "memory")}
        limits = {k: v for k, v in (resources.get("limits") or {}).items() if k in ("cpu", "memory")}
        if requests or limits:
            any_set = True
        if set(limits) != {"cpu", "memory"} or any(str(requests.get(k, limits[k])) != str(limits[k]) for k in limits):
            guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def pod_template(template: Any) -> None:
    if isinstance(template, dict):
        pod_spec(template.setdefault("spec", {}))


def rbac_subjects(obj: Obj) -> None:
    """Users and Groups are rbac.authorization.k8s.io subjects; so is the role referred to."""
    for subject in _dicts(obj.get("subjects")):
        if subject.get("kind") in ("User", "Group"):
            subject.setdefault("apiGroup", "rbac.authorization.k8s.io")
    ref = obj.get("roleRef")
    if isinstance(ref, dict):
        ref.setdefault("apiGroup", "rbac.authorization.k8s.io")


def persistent_volume_claim(obj: Obj) -> None:
    obj.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")


def persistent_volume(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
    spec.setdefault("volumeMode", "Filesystem")


def _rolling(strategy: Obj, rolling: Obj) -> None:
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        current = strategy.get("rollingUpdate")
        if not isinstance(current, dict):
            current = strategy["rollingUpdate"] = {}
        for key, value in rolling.items():
            current.setdefault(key, value)


def workload(kind: str, spec: Obj) -> None:
    """SetDefaults_Deployment, _ReplicaSet, _StatefulSet, _DaemonSet (apps/v1), field by field."""
    if kind in ("Deployment", "ReplicaSet", "StatefulSet"):
        spec.setdefault("replicas", 1)
    if kind == "Deployment":
        strategy = spec.get("strategy")
        if not isinstance(strategy, dict):
            strategy = spec["strategy"] = {}
        _rolling(strategy, {"maxUnavailable": "25%", "maxSurge": "25%"})
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
    if kind in ("StatefulSet", "DaemonSet"):
        strategy = spec.get("updateStrategy")
        if not isinstance(strategy, dict):
            strategy = spec["updateStrategy"] = {}
        _rolling(strategy, {"partition": 0} if kind == "StatefulSet" else {"maxUnavailable": 1, "maxSurge": 0})
        spec.setdefault("revisionHistoryLimit", 10)
    if kind == "StatefulSet":
        spec.setdefault("podManagementPolicy", "OrderedReady")
        policy = spec.get("persistentVolumeClaimRetentionPolicy")
        if not isinstance(policy, dict):
            policy = spec["persistentVolumeClaimRetentionPolicy"] = {}
        policy.setdefault("whenDeleted", "Retain")
        policy.setdefault("whenScaled", "Retain")
        for claim in _dicts(spec.get("volumeClaimTemplates")):
            persistent_volume_claim(claim)
            claim.setdefault("status", {"phase": "Pending"})
    pod_template(spec.get("template"))
