"""ConfigMaps and Secrets (pkg/apis/core/validation: ValidateConfigMap, ValidateSecret):
key names, the 1 MiB total, the keys each Secret type requires, immutability."""

from __future__ import annotations

import re
from typing import Any

from localkube.errors import Cause, field_forbidden, field_invalid, field_required, field_too_long
from localkube.validation.fields import obj_at

Obj = dict[str, Any]

DATA_LIMIT = 1048576
_KEY = re.compile(r"[-._a-zA-Z0-9]+")
KEY_MSG = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME', "
    " or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
)
REQUIRED_KEYS: dict[str, tuple[str, ...]] = {
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/dockercfg": (".dockercfg",),
}


def key_problems(key: str) -> list[str]:
    """IsConfigMapKey."""
    problems = []
    if len(key) > 253:
        problems.append("must be no more than 253 characters")
    if not _KEY.fullmatch(key):
        problems.append(KEY_MSG)
    if key == ".":
        problems.append("must not be '.'")
    elif key == "..":
        problems.append("must not be '..'")
    elif key.startswith(".."):
        problems.append("must not start with '..'")
    return problems


def decoded_length(value: Any) -> int:
    """Bytes a base64 value decodes to (line breaks ignored, as Go's decoder ignores them)."""
    text = "".join(str(value).split())
    return len(text) * 3 // 4 - (len(text) - len(text.rstrip("=")))


def _keys(obj: Obj, fields: tuple[str, ...], text: str = "") -> tuple[list[Cause], int]:
    """Key problems of ``fields`` and their total size (``text`` holds strings, the others base64)."""
    causes: list[Cause] = []
    total = 0
    seen: set[str] = set()
    for field in fields:
        for key, value in obj_at(obj.get(field)).items():
            causes += [field_invalid(f"{field}[{key}]", key, p) for p in key_problems(str(key))]
            if key in seen:
                causes.append(field_invalid(f"{field}[{key}]", key, "duplicate of key present in data"))
            seen.add(key)
            total += len(str(value).encode()) if field == text else decoded_length(value)
    return causes, total


def validate_configmap(obj: Obj) -> list[Cause]:
    causes, total = _keys(obj, ("data", "binaryData"), text="data")
    for key, value in obj_at(obj.get("data")).items():
        if not isinstance(value, str):
            causes.append(field_invalid(f"data[{key}]", value, "must be a string"))
    if total > DATA_LIMIT:
        causes.append(field_too_long("", DATA_LIMIT))
    return causes


def validate_secret(obj: Obj) -> list[Cause]:
    causes, total = _keys(obj, ("data",))
    if total > DATA_LIMIT:
        causes.append(field_too_long("data", DATA_LIMIT))
    kind = obj.get("type") or "Opaque"
    data = obj_at(obj.get("data"))
    for key in REQUIRED_KEYS.get(kind, ()):
        if key not in data:
            causes.append(field_required(f"data[{key}]"))
    annotations = obj_at(obj_at(obj.get("metadata")).get("annotations"))
    if kind == "kubernetes.io/service-account-token" and not annotations.get("kubernetes.io/service-account.name"):
        causes.append(field_required("metadata.annotations[kubernetes.io/service-account.name]"))
    if kind == "kubernetes.io/basic-auth" and not ("username" in data or "password" in data):
        causes.append(field_required("data[username]"))
    return causes


def _immutable_data(obj: Obj, old: Obj, fields: tuple[str, ...]) -> list[Cause]:
    causes: list[Cause] = []
    if old.get("immutable"):
        for field in fields:
            if obj.get(field) != old.get(field):
                causes.append(field_forbidden(field, "field is immutable when `immutable` is set"))
    return causes


def validate_configmap_update(obj: Obj, old: Obj) -> list[Cause]:
    return validate_configmap(obj) + _immutable_data(obj, old, ("immutable", "data", "binaryData"))


def validate_secret_update(obj: Obj, old: Obj) -> list[Cause]:
    causes = validate_secret(obj)
    if (obj.get("type") or "Opaque") != (old.get("type") or "Opaque"):
        causes.append(field_invalid("type", obj.get("type"), "field is immutable"))
    return causes + _immutable_data(obj, old, ("immutable", "data"))
