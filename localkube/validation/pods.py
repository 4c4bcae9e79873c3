"""Pods and pod specs (kubernetes/kubernetes pkg/apis/core/validation/validation.go:
ValidatePodSpec, validateContainers, validateVolumes, validateTolerations, ...)."""

from __future__ import annotations

from typing import Any

from localkube.errors import Cause, field_duplicate, field_forbidden, field_invalid, field_required, field_unsupported
from localkube.quantities import parse_value
from localkube.selectors import label_key_problem, label_value_problem
from localkube.validation.fields import (
    PROTOCOLS,
    dns_label,
    dns_subdomain,
    duplicates,
    labels,
    list_at,
    obj_at,
    one_of,
    port_name,
    port_number,
    required_label,
)

Obj = dict[str, Any]

RESTART_POLICIES = ["Always", "OnFailure", "Never"]
DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]
PULL_POLICIES = ["Always", "IfNotPresent", "Never"]
MESSAGE_POLICIES = ["File", "FallbackToLogsOnError"]
TOLERATION_OPERATORS = ["Equal", "Exists"]
TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
MAX_INT32 = 2147483647
# VolumeSource's members, in the order validateVolumeSource checks them: a volume names exactly one
VOLUME_SOURCES = (
    "emptyDir",
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "persistentVolumeClaim",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "downwardAPI",
    "fc",
    "azureFile",
    "configMap",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "csi",
    "ephemeral",
    "image",
)


def validate_pod(obj: Obj) -> list[Cause]:
    return validate_pod_spec(obj_at(obj.get("spec")), "spec")


def validate_pod_spec(
    spec: Obj, path: str, restart_policies: list[str] | None = None, claimed: frozenset[str] = frozenset()
) -> list[Cause]:
    """ValidatePodSpec: containers, volumes, policies, scheduling fields; ``claimed`` names
    volumes the pods get from elsewhere (a StatefulSet's volumeClaimTemplates), which mounts
    may name too."""
    causes, volumes = _volumes(list_at(spec.get("volumes")), f"{path}.volumes")
    volumes |= claimed
    containers = list_at(spec.get("containers"))
    init_containers = list_at(spec.get("initContainers"))
    if not containers:
        causes.append(field_required(f"{path}.containers"))
    names: list[tuple[str, Any]] = []
    for field, items in (("initContainers", init_containers), ("containers", containers)):
        for index, raw_container in enumerate(items):
            item = f"{path}.{field}[{index}]"
            container = obj_at(raw_container)
            causes += _container(container, item, volumes)
            if container.get("name"):
                names.append((f"{item}.name", container["name"]))
    causes += duplicates(path, names)
    causes += _host_ports(containers, f"{path}.containers")
    policy = spec.get("restartPolicy")
    causes += one_of(f"{path}.restartPolicy", policy, restart_policies or RESTART_POLICIES, required=True)
    causes += one_of(f"{path}.dnsPolicy", spec.get("dnsPolicy"), DNS_POLICIES, required=True)
    if spec.get("dnsPolicy") == "None" and not obj_at(spec.get("dnsConfig")).get("nameservers"):
        causes.append(
            field_required(f"{path}.dnsConfig", "must provide `dnsConfig` when `dnsPolicy` is None")
            if not spec.get("dnsConfig")
            else field_required(
                f"{path}.dnsConfig.nameservers", "must provide at least one DNS nameserver when `dnsPolicy` is None"
            )
        )
    causes += labels(f"{path}.nodeSelector", spec.get("nodeSelector"))
    account = spec.get("serviceAccountName")
    if account:
        causes += dns_subdomain(f"{path}.serviceAccountName", str(account))
    node = spec.get("nodeName")
    if node:
        causes += dns_subdomain(f"{path}.nodeName", str(node))
    for field in ("hostname", "subdomain"):
        if spec.get(field):
            causes += dns_label(f"{path}.{field}", str(spec[field]))
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None and (not isinstance(deadline, int) or not 1 <= deadline <= MAX_INT32):
        causes.append(
            field_invalid(f"{path}.activeDeadlineSeconds", deadline, f"must be between 1 and {MAX_INT32}, inclusive")
        )
    causes += tolerations(list_at(spec.get("tolerations")), f"{path}.tolerations")
    for index, secret in enumerate(list_at(spec.get("imagePullSecrets"))):
        if not obj_at(secret).get("name"):
            causes.append(field_required(f"{path}.imagePullSecrets[{index}].name"))
    return causes


def _volumes(volumes: list[Any], path: str) -> tuple[list[Cause], set[str]]:
    causes: list[Cause] = []
    names: list[tuple[str, Any]] = []
    for index, raw_volume in enumerate(volumes):
        item = f"{path}[{index}]"
        volume = obj_at(raw_volume)
        causes += required_label(f"{item}.name", volume.get("name"))
        if volume.get("name"):
            names.append((f"{item}.name", volume["name"]))
        sources = [s for s in VOLUME_SOURCES if volume.get(s) is not None]
        if not sources:
            causes.append(field_required(item, "must specify a volume type"))
        elif len(sources) > 1:
            causes.append(field_forbidden(f"{item}.{sources[1]}", "may not specify more than 1 volume type"))
        claim = obj_at(volume.get("persistentVolumeClaim"))
        if volume.get("persistentVolumeClaim") is not None and not claim.get("claimName"):
            causes.append(field_required(f"{item}.persistentVolumeClaim.claimName"))
        if volume.get("secret") is not None and not obj_at(volume["secret"]).get("secretName"):
            causes.append(field_required(f"{item}.secret.secretName"))
        if volume.get("hostPath") is not None and not obj_at(volume["hostPath"]).get("path"):
            causes.append(field_required(f"{item}.hostPath.path"))
    causes += duplicates(path, names)
    return causes, {str(v) for _, v in names}


def _container(container: Obj, path: str, volumes: set[str]) -> list[Cause]:
    causes = required_label(f"{path}.name", container.get("name"))
    if not container.get("image"):
        causes.append(field_required(f"{path}.image"))
    causes += one_of(f"{path}.imagePullPolicy", container.get("imagePullPolicy"), PULL_POLICIES, required=True)
    causes += one_of(
        f"{path}.terminationMessagePolicy", container.get("terminationMessagePolicy"), MESSAGE_POLICIES, required=True
    )
    port_names: list[tuple[str, Any]] = []
    for index, raw_port in enumerate(list_at(container.get("ports"))):
        item = f"{path}.ports[{index}]"
        port = obj_at(raw_port)
        if port.get("name"):
            causes += port_name(f"{item}.name", str(port["name"]))
            port_names.append((f"{item}.name", port["name"]))
        if not port.get("containerPort"):
            causes.append(field_required(f"{item}.containerPort"))
        else:
            causes += port_number(f"{item}.containerPort", port["containerPort"])
        if port.get("hostPort"):
            causes += port_number(f"{item}.hostPort", port["hostPort"])
        causes += one_of(f"{item}.protocol", port.get("protocol"), PROTOCOLS, required=True)
    causes += duplicates(f"{path}.ports", port_names)
    for index, env in enumerate(list_at(container.get("env"))):
        name = obj_at(env).get("name")
        if not name:
            causes.append(field_required(f"{path}.env[{index}].name"))
        elif "=" in str(name) or not str(name).isprintable() or not str(name).isascii():
            causes.append(
                field_invalid(
                    f"{path}.env[{index}].name",
                    name,
                    "a valid environment variable name must consist only of printable ASCII characters other than '='",
                )
            )
    mount_paths: list[tuple[str, Any]] = []
    for index, raw_mount in enumerate(list_at(container.get("volumeMounts"))):
        item = f"{path}.volumeMounts[{index}]"
        mount = obj_at(raw_mount)
        name = mount.get("name")
        if not name:
            causes.append(field_required(f"{item}.name"))
        elif name not in volumes:
            causes.append(Cause("FieldValueNotFound", f'Not found: "{name}"', f"{item}.name"))
        if not mount.get("mountPath"):
            causes.append(field_required(f"{item}.mountPath"))
        elif mount["mountPath"] in {v for _, v in mount_paths}:
            causes.append(field_invalid(f"{item}.mountPath", mount["mountPath"], "must be unique"))
        else:
            mount_paths.append((f"{item}.mountPath", mount["mountPath"]))
    causes += _resources(obj_at(container.get("resources")), f"{path}.resources")
    return causes


def _resources(resources: Obj, path: str) -> list[Cause]:
    causes: list[Cause] = []
    limits = obj_at(resources.get("limits"))
    for field in ("limits", "requests"):
        for name, value in obj_at(resources.get(field)).items():
            amount = parse_value(value)
            if amount is not None and amount < 0:
                causes.append(
                    field_invalid(f"{path}.{field}[{name}]", str(value), "must be greater than or equal to 0")
                )
    for name, value in obj_at(resources.get("requests")).items():
        limit = limits.get(name)
        if limit is None:
            continue
        asked, allowed = parse_value(value), parse_value(limit)
        if asked is not None and allowed is not None and asked > allowed:
            causes.append(
                field_invalid(f"{path}.requests", str(value), f"must be less than or equal to {name} limit of {limit}")
            )
    return causes


def _host_ports(containers: list[Any], path: str) -> list[Cause]:
    """Two containers of one Pod may not claim one host port (per protocol and IP)."""
    seen: set[tuple[Any, Any, Any]] = set()
    causes = []
    for index, container in enumerate(containers):
        for port_index, raw_port in enumerate(list_at(obj_at(container).get("ports"))):
            port = obj_at(raw_port)
            if not port.get("hostPort"):
                continue
            key = (port.get("hostPort"), port.get("protocol", "TCP"), port.get("hostIP", ""))
            if key in seen:
                causes.append(field_duplicate(f"{path}[{index}].ports[{port_index}]", f"{key[2]}/{key[1]}/{key[0]}"))
            seen.add(key)
    return causes


def tolerations(items: list[Any], path: str) -> list[Cause]:
    """validateTolerations, in its order: key, empty key, seconds, operator and value, effect."""
    causes: list[Cause] = []
    for index, raw_toleration in enumerate(items):
        item = f"{path}[{index}]"
        toleration = obj_at(raw_toleration)
        key = str(toleration.get("key") or "")
        operator = str(toleration.get("operator") or "")
        value = str(toleration.get("value") or "")
        effect = str(toleration.get("effect") or "")
        if key:
            problem = label_key_problem(key)
            if problem:
                causes.append(field_invalid(f"{item}.key", key, problem))
        elif operator != "Exists":
            causes.append(
                field_invalid(
                    f"{item}.operator",
                    operator,
                    'operator must be Exists when `key` is empty, which means "match all values and all keys"',
                )
            )
        if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
            causes.append(
                field_invalid(f"{item}.effect", effect, "effect must be 'NoExecute' when `tolerationSeconds` is set")
            )
        if operator in ("Equal", ""):
            problem = label_value_problem(value)
            if problem:
                causes.append(field_invalid(f"{item}.operator", value, problem))
        elif operator == "Exists":
            if value:
                causes.append(
                    field_invalid(f"{item}.operator", value, "value must be empty when `operator` is 'Exists'")
                )
        else:
            causes.append(field_unsupported(f"{item}.operator", operator, TOLERATION_OPERATORS))
        if effect:
            causes += one_of(f"{item}.effect", effect, TAINT_EFFECTS)
    return causes


def validate_pod_template(
    template: Obj, path: str, restart_policies: list[str] | None = None, claimed: frozenset[str] = frozenset()
) -> list[Cause]:
    """ValidatePodTemplateSpec: the template's labels and its pod spec."""
    meta = obj_at(template.get("metadata"))
    causes = labels(f"{path}.metadata.labels", meta.get("labels"))
    causes += validate_pod_spec(obj_at(template.get("spec")), f"{path}.spec", restart_policies, claimed)
    return causes
