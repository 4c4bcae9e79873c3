"""Each overrider of Karmada, applied to one manifest (a JSON object).

Every function returns a new manifest and raises :class:`OverriderError`
with the failing path on error. Semantics and quirks follow Karmada's
``overridemanager`` package: image, command and args overriders without a
predicate act on ``containers`` (not init containers) of Pod, ReplicaSet,
Deployment, DaemonSet, StatefulSet and Job, and leave other kinds alone;
labels/annotations ``remove``/``replace`` act only on existing keys; a field
overrider patches a JSON or YAML document held in a string field.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import yaml

from karmada.api.override import (
    CommandArgsOverrider,
    FieldOverrider,
    ImageOverrider,
    LabelAnnotationOverrider,
    PlaintextOverrider,
)
from karmada.overrides.image import ImageError, override_image
from karmada.overrides.jsonpatch import Operation, PatchError, apply_patch, get

POD_KINDS = {"Pod": "/spec"}
TEMPLATE_KINDS = ("ReplicaSet", "Deployment", "DaemonSet", "StatefulSet", "Job")


class OverriderError(ValueError):
    """An overrider could not be applied; the message names the path."""


def _pod_spec_path(kind: str) -> str | None:
    if kind in POD_KINDS:
        return POD_KINDS[kind]
    if kind in TEMPLATE_KINDS:
        return "/spec/template/spec"
    return None


def _patch(manifest: dict[str, Any], operations: Sequence[Operation]) -> dict[str, Any]:
    if not operations:
        return manifest
    try:
        result: dict[str, Any] = apply_patch(manifest, operations)
    except PatchError as exc:
        raise OverriderError(str(exc)) from None
    return result


def _containers(manifest: dict[str, Any], spec_path: str) -> list[Any]:
    try:
        containers = get(manifest, f"{spec_path}/containers")
    except PatchError:
        return []
    return containers if isinstance(containers, list) else []


def _image_at(manifest: dict[str, Any], path: str) -> str:
    """Karmada's ``obtainImageValue``: walk maps and list indices to a string."""
    segments = path.strip("/").split("/")
    node: Any = manifest
    index = 0
    while index < len(segments) - 1:
        child = node.get(segments[index]) if isinstance(node, dict) else None
        if isinstance(child, dict):
            node = child
        elif isinstance(child, list):
            try:
                node = child[int(segments[index + 1])]
            except (ValueError, IndexError):
                raise OverriderError(f"path({path}) does not lead to an image") from None
            index += 1
        else:
            raise OverriderError(f"path({segments[index]}) of the object is neither a map nor a list")
        index += 1
    value = node.get(segments[-1]) if isinstance(node, dict) else None
    if not isinstance(value, str):
        raise OverriderError(f"failed to convert path({segments[-1]}) to string")
    return value


def apply_image(manifest: dict[str, Any], overrider: ImageOverrider) -> dict[str, Any]:
    """Change registry, repository or tag of the images the overrider targets."""
    targets: list[tuple[str, str]] = []
    if overrider.predicate is not None:
        path = overrider.predicate.path
        if not path.startswith("/"):
            raise OverriderError(f"predicate path {path!r} must start with /")
        targets.append((path, _image_at(manifest, path)))
    else:
        spec_path = _pod_spec_path(str(manifest.get("kind", "")))
        if spec_path is None:
            return manifest
        for index, container in enumerate(_containers(manifest, spec_path)):
            image = container.get("image", "") if isinstance(container, dict) else ""
            targets.append((f"{spec_path}/containers/{index}/image", image))
    operations = []
    for path, image in targets:
        try:
            new = override_image(image, overrider.component, overrider.operator, overrider.value or "")
        except ImageError as exc:
            raise OverriderError(f"failed to parse image value({image}) at {path}: {exc}") from None
        operations.append(Operation("replace", path, new))
    return _patch(manifest, operations)


def apply_command_args(manifest: dict[str, Any], overrider: CommandArgsOverrider, target: str) -> dict[str, Any]:
    """Append to (``add``) or remove items from (``remove``) a container's command or args."""
    spec_path = _pod_spec_path(str(manifest.get("kind", "")))
    if spec_path is None:
        return manifest
    operations = []
    for index, container in enumerate(_containers(manifest, spec_path)):
        if not isinstance(container, dict) or container.get("name") != overrider.container_name:
            continue
        path = f"{spec_path}/containers/{index}/{target}"
        current = container.get(target)
        values = [str(v) for v in current] if isinstance(current, list) else []
        if overrider.operator == "add":
            new = values + list(overrider.value or [])
        else:
            remove = set(overrider.value or [])
            new = [v for v in values if v not in remove]
        operations.append(Operation("add" if current is None else "replace", path, new))
    return _patch(manifest, operations)


def apply_labels_annotations(
    manifest: dict[str, Any], overrider: LabelAnnotationOverrider, field: str
) -> dict[str, Any]:
    """Add (creating the map), or remove/replace existing keys of labels or annotations."""
    metadata = manifest.get("metadata")
    existing = metadata.get(field) if isinstance(metadata, dict) else None
    operations = []
    for key, value in overrider.value.items():
        if overrider.operator in ("remove", "replace"):
            if not isinstance(existing, dict) or key not in existing:
                continue
        elif not isinstance(existing, dict):
            manifest = _patch(manifest, [Operation("add", f"/metadata/{field}", {})])
            existing = {}
        # Karmada escapes "/" in keys but not "~"
        operations.append(Operation(overrider.operator, f"/metadata/{field}/{key.replace('/', '~1')}", value))
    return _patch(manifest, operations)


def _go_json(value: Any) -> str:
    # Go's encoding/json: sorted keys, compact, HTML characters escaped
    text = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def apply_field(manifest: dict[str, Any], overrider: FieldOverrider) -> dict[str, Any]:
    """JSON-patch a JSON or YAML document stored in the string at ``fieldPath``."""
    try:
        current = get(manifest, overrider.field_path)
    except PatchError:
        raise OverriderError(f"fieldPath {overrider.field_path} does not exist") from None
    if not isinstance(current, str):
        raise OverriderError(f"Get object's value by overrider's path({overrider.field_path}) is not string")
    if overrider.yaml:
        operations = [Operation(p.operator, p.sub_path, p.value) for p in overrider.yaml]
        try:
            document = yaml.safe_load(current)
        except yaml.YAMLError as exc:
            raise OverriderError(f"{overrider.field_path} does not hold YAML: {exc}") from None
        try:
            patched = apply_patch(document, operations)
        except PatchError as exc:
            raise OverriderError(f"{overrider.field_path}: {exc}") from None
        text = yaml.safe_dump(patched, sort_keys=True, default_flow_style=False, allow_unicode=True)
    elif overrider.json_:
        operations = [Operation(p.operator, p.sub_path, p.value) for p in overrider.json_]
        try:
            document = json.loads(current)
        except json.JSONDecodeError as exc:
            raise OverriderError(f"{overrider.field_path} does not hold JSON: {exc}") from None
        try:
            patched = apply_patch(document, operations)
        except PatchError as exc:
            raise OverriderError(f"{overrider.field_path}: {exc}") from None
        text = _go_json(patched)
    else:
        text = ""
    return _patch(manifest, [Operation("replace", overrider.field_path, text)])


def apply_plaintext(manifest: dict[str, Any], overriders: Sequence[PlaintextOverrider]) -> dict[str, Any]:
    """RFC 6902 operations on the manifest, applied as one patch."""
    return _patch(manifest, [Operation(p.operator, p.path, p.value) for p in overriders])
