"""PersistentVolumeClaims and PersistentVolumes (pkg/apis/core/validation:
ValidatePersistentVolumeClaim, ValidatePersistentVolume)."""

from __future__ import annotations

from typing import Any

from localkube.errors import Cause, field_forbidden, field_invalid, field_required
from localkube.quantities import parse_value
from localkube.validation.fields import list_at, obj_at, one_of
from localkube.validation.pods import VOLUME_SOURCES

Obj = dict[str, Any]

ACCESS_MODES = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
VOLUME_MODES = ["Block", "Filesystem"]
_POD_ONLY = ("emptyDir", "secret", "configMap", "downwardAPI", "projected", "persistentVolumeClaim", "gitRepo")
PV_SOURCES = (*(s for s in VOLUME_SOURCES if s not in (*_POD_ONLY, "ephemeral", "image")), "local")


def _access_modes(modes: list[Any], path: str) -> list[Cause]:
    causes: list[Cause] = []
    if not modes:
        causes.append(field_required(path, "at least 1 access mode is required"))
    for mode in modes:
        if mode not in ACCESS_MODES:
            causes.append(
                Cause(
                    "FieldValueNotSupported",
                    f'Unsupported value: "{mode}": supported values: ' + ", ".join(f'"{m}"' for m in ACCESS_MODES),
                    path,
                )
            )
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        causes.append(field_forbidden(path, "may not use ReadWriteOncePod with other access modes"))
    return causes


def _storage_amount(resources: Obj, path: str, field: str) -> list[Cause]:
    value = obj_at(resources.get(field)).get("storage")
    if value is None:
        return [field_required(f"{path}[storage]")]
    amount = parse_value(value)
    if amount is not None and amount <= 0:
        return [field_invalid(f"{path}[storage]", str(value), "must be greater than zero")]
    return []


def validate_pvc(obj: Obj) -> list[Cause]:
    spec = obj_at(obj.get("spec"))
    causes = _access_modes(list_at(spec.get("accessModes")), "spec.accessModes")
    causes += _storage_amount(obj_at(spec.get("resources")), "spec.resources", "requests")
    causes += one_of("spec.volumeMode", spec.get("volumeMode"), VOLUME_MODES)
    return causes


def validate_pvc_update(obj: Obj, old: Obj) -> list[Cause]:
    causes = validate_pvc(obj)
    spec, old_spec = obj_at(obj.get("spec")), obj_at(old.get("spec"))
    # resources.requests may change (expansion) and a pending claim may get its volume
    ignored = {"resources", "volumeAttributesClassName"}
    if not old_spec.get("volumeName"):
        ignored.add("volumeName")
    if {k: v for k, v in spec.items() if k not in ignored} != {k: v for k, v in old_spec.items() if k not in ignored}:
        causes.append(
            field_forbidden(
                "spec",
                "spec is immutable after creation except resources.requests"
                " and volumeAttributesClassName for bound claims",
            )
        )
    return causes


def validate_pv(obj: Obj) -> list[Cause]:
    spec = obj_at(obj.get("spec"))
    causes = _access_modes(list_at(spec.get("accessModes")), "spec.accessModes")
    if obj_at(spec.get("capacity")).get("storage") is None:
        causes.append(field_required("spec.capacity[storage]"))
    sources = [s for s in PV_SOURCES if spec.get(s) is not None]
    if not sources:
        causes.append(field_required("spec", "must specify a volume type"))
    elif len(sources) > 1:
        causes.append(field_forbidden(f"spec.{sources[1]}", "may not specify more than 1 volume type"))
    causes += one_of(
        "spec.persistentVolumeReclaimPolicy", spec.get("persistentVolumeReclaimPolicy"), ["Delete", "Recycle", "Retain"]
    )
    causes += one_of("spec.volumeMode", spec.get("volumeMode"), VOLUME_MODES)
    return causes
