"""Object metadata: name rules, label/annotation/finalizer checks and server-owned fields."""

from __future__ import annotations

import datetime
import functools
import random
import re
import time
import uuid
from typing import Any

from localkube.errors import Cause, field_forbidden, field_invalid, field_required, field_too_long
from localkube.selectors import label_key_problem, label_value_problem

Obj = dict[str, Any]

DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start"
    " and end with an alphanumeric character (e.g. 'example.com', regex used for validation is"
    " '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end"
    " with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is"
    " '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic"
    " character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation"
    " is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)

# kinds whose names are DNS-1123 labels, DNS-1035 labels, or path segments
LABEL_NAMED = {"Namespace"}
DNS1035_NAMED = {"Service"}
PATH_SEGMENT_NAMED = {
    "Role",
    "ClusterRole",
    "RoleBinding",
    "ClusterRoleBinding",
    "CertificateSigningRequest",
    "APIService",  # kube-aggregator names the core group's "v1."
}

GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
ANNOTATIONS_LIMIT = 262144

OBJECT_META_FIELDS = {
    "name",
    "generateName",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
    "selfLink",
}


_LAST_TIME: list[tuple[int, str]] = [(-1, "")]  # formatted once a second: a write asks several times


def now_time() -> str:
    """Current time as a Kubernetes ``Time`` (RFC 3339 seconds, UTC, Z)."""
    second = int(time.time())
    last = _LAST_TIME[0]
    if second != last[0]:
        last = _LAST_TIME[0] = (second, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second)))
    return last[1]


def now_micro() -> str:
    """Current time as a ``MicroTime`` (six fractional digits)."""
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(value: str) -> datetime.datetime:
    """Parse an RFC 3339 time (offset required)."""
    text = value.replace("Z", "+00:00").replace("z", "+00:00")
    parsed = datetime.datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        raise ValueError(f"parsing time {value!r}: missing time zone offset")
    return parsed


MICROTIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|[+-]\d{2}:\d{2})")
TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")


def check_microtime(value: Any) -> str | None:
    """Why ``value`` is not a MicroTime (Go's parser needs six fractional digits and an offset)."""
    if not isinstance(value, str) or not MICROTIME.fullmatch(value):
        return f'parsing time "{value}" as "2006-01-02T15:04:05.000000Z07:00": cannot parse as ".000000"'
    return None


def check_time(value: Any) -> str | None:
    """Why ``value`` is not a Time (RFC 3339, offset required, fraction optional)."""
    if not isinstance(value, str) or not TIME.fullmatch(value):
        return f'parsing time "{value}" as "2006-01-02T15:04:05Z07:00": cannot parse'
    return None


# an Event's or a Lease's times repeat from write to write: each text is parsed once
@functools.lru_cache(maxsize=1024)
def canonical_time(value: str) -> str:
    """A valid Time as the server writes it back: UTC, whole seconds, ``Z``."""
    return parse_time(value).astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@functools.lru_cache(maxsize=1024)
def canonical_microtime(value: str) -> str:
    """A valid MicroTime as the server writes it back: UTC, six digits, ``Z``."""
    return parse_time(value).astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def name_problem(kind: str, name: str) -> str | None:
    """Why ``name`` cannot name an object of ``kind``, or None."""
    if kind in LABEL_NAMED:
        if len(name) > 63 or not DNS1123_LABEL.fullmatch(name):
            return LABEL_MSG if len(name) <= 63 else "must be no more than 63 characters"
        return None
    if kind in DNS1035_NAMED:
        if len(name) > 63 or not DNS1035_LABEL.fullmatch(name):
            return DNS1035_MSG if len(name) <= 63 else "must be no more than 63 characters"
        return None
    if kind in PATH_SEGMENT_NAMED:
        if name in (".", "..") or "/" in name or "%" in name:
            return "may not contain '/' or '%' or be '.' or '..'"
        return None
    if len(name) > 253:
        return "must be no more than 253 characters"
    if not DNS1123_SUBDOMAIN.fullmatch(name):
        return SUBDOMAIN_MSG
    return None


def generate_name(prefix: str) -> str:
    """``generateName`` + 5 characters (prefix cut to 58)."""
    return prefix[:58] + "".join(random.choice(GENERATE_ALPHABET) for _ in range(5))


def new_uid() -> str:
    return str(uuid.uuid4())


def validate_metadata(obj: Obj, kind: str, namespaced: bool) -> list[Cause]:
    """Metadata checks common to every kind."""
    causes: list[Cause] = []
    meta = obj.get("metadata") or {}
    name = meta.get("name") or ""
    if not name:
        causes.append(field_required("metadata.name", "name or generateName is required"))
    else:
        problem = name_problem(kind, name)
        if problem:
            causes.append(field_invalid("metadata.name", name, problem))
    prefix = meta.get("generateName")
    if isinstance(prefix, str) and prefix:
        # a prefix may end with '-': validated as if that were a letter
        problem = name_problem(kind, prefix[:-1] + "a" if prefix.endswith("-") else prefix)
        if problem:
            causes.append(field_invalid("metadata.generateName", prefix, problem))
    labels = meta.get("labels") or {}
    if not isinstance(labels, dict):
        causes.append(field_invalid("metadata.labels", labels, "must be a map"))
        labels = {}
    for key, value in labels.items():
        problem = label_key_problem(str(key))
        if problem:
            causes.append(field_invalid("metadata.labels", key, problem))
        if not isinstance(value, str):
            causes.append(field_invalid(f"metadata.labels[{key}]", value, "must be a string"))
        else:
            problem = label_value_problem(value)
            if problem:
                causes.append(field_invalid("metadata.labels", value, problem))
    annotations = meta.get("annotations") or {}
    if isinstance(annotations, dict):
        total = 0
        for key, value in annotations.items():
            problem = label_key_problem(str(key))
            if problem:
                causes.append(field_invalid("metadata.annotations", key, problem))
            if not isinstance(value, str):
                causes.append(field_invalid(f"metadata.annotations[{key}]", value, "must be a string"))
            else:
                total += len(key) + len(value)
        if total > ANNOTATIONS_LIMIT:
            causes.append(field_too_long("metadata.annotations", ANNOTATIONS_LIMIT))
    finalizers = meta.get("finalizers") or []
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        causes.append(
            field_invalid(
                "metadata.finalizers",
                "foregroundDeletion",
                "finalizer orphan and foregroundDeletion cannot be both set",
            )
        )
    controllers = 0
    for index, ref in enumerate(meta.get("ownerReferences") or []):
        for required in ("apiVersion", "kind", "name", "uid"):
            if not (isinstance(ref, dict) and ref.get(required)):
                causes.append(field_required(f"metadata.ownerReferences[{index}].{required}"))
        if isinstance(ref, dict) and ref.get("controller"):
            controllers += 1
    if controllers > 1:
        causes.append(
            field_invalid("metadata.ownerReferences", "", "Only one reference can have Controller set to true")
        )
    return causes


def new_finalizers_forbidden(old: Obj, new: Obj) -> Cause | None:
    """Once deletion started no finalizer may be added."""
    if not (old.get("metadata") or {}).get("deletionTimestamp"):
        return None
    before = set(old["metadata"].get("finalizers") or [])
    after = set((new.get("metadata") or {}).get("finalizers") or [])
    added = sorted(after - before)
    if added:
        return field_forbidden(
            "metadata.finalizers",
            f"no new finalizers can be added if the object is being deleted, found new finalizers {added!r}",
        )
    return None
