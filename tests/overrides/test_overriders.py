"""Each overrider (pkg/util/overridemanager/*_test.go cases) and JSON patch."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from karmada.api.override import (
    CommandArgsOverrider,
    FieldOverrider,
    ImageOverrider,
    LabelAnnotationOverrider,
    PlaintextOverrider,
)
from karmada.overrides import ImageError, Operation, PatchError, apply_patch, override_image, parse_image
from karmada.overrides.overriders import (
    OverriderError,
    apply_command_args,
    apply_field,
    apply_image,
    apply_labels_annotations,
    apply_plaintext,
)

IMG = "fictional.registry.example/imagename:v1.0.0"
DIGEST = "sha256:dbcc1c35ac38df41fd2f5e4130b32ffdb93ebae8b3dbe638c23575912276fc9c"


@pytest.mark.parametrize(
    ("component", "operator", "value", "expected"),
    [
        # imageoverride_test.go
        ("Registry", "add", ".test", "fictional.registry.example.test/imagename:v1.0.0"),
        ("Registry", "replace", "fictional.registry.us", "fictional.registry.us/imagename:v1.0.0"),
        ("Registry", "remove", "fictional.registry.us", "imagename:v1.0.0"),
        ("Repository", "add", "/nginx", "fictional.registry.example/imagename/nginx:v1.0.0"),
        ("Repository", "replace", "nginx", "fictional.registry.example/nginx:v1.0.0"),
        ("Repository", "remove", "nginx", "fictional.registry.example/:v1.0.0"),
        ("Tag", "add", DIGEST, IMG),  # "v1.0.0sha256:..." is neither a tag nor a digest: unchanged
        ("Tag", "replace", DIGEST, f"fictional.registry.example/imagename@{DIGEST}"),
        ("Tag", "remove", DIGEST, "fictional.registry.example/imagename"),
    ],
)
def test_override_image(component: str, operator: str, value: str, expected: str) -> None:
    assert override_image(IMG, component, operator, value) == expected


@pytest.mark.parametrize(
    ("reference", "parts"),
    [
        ("nginx", ("", "nginx", "", "")),
        ("library/nginx:1.25", ("", "library/nginx", "1.25", "")),
        ("docker.io/library/nginx", ("docker.io", "library/nginx", "", "")),
        ("localhost/app:dev", ("localhost", "app", "dev", "")),
        ("registry:5000/team/app", ("registry:5000", "team/app", "", "")),
        (f"nginx@{DIGEST}", ("", "nginx", "", DIGEST)),
        (f"nginx:1.0@{DIGEST}", ("", "nginx", "1.0", "")),  # Karmada keeps only the tag
    ],
)
def test_parse_image(reference: str, parts: tuple[str, str, str, str]) -> None:
    image = parse_image(reference)
    assert (image.registry, image.repository, image.tag, image.digest) == parts


@pytest.mark.parametrize("reference", ["", "Nginx", "nginx:", "-nginx", "nginx:bad tag"])
def test_parse_image_rejects(reference: str) -> None:
    with pytest.raises(ImageError):
        parse_image(reference)


def _workload(kind: str, images: list[str], *, init: str | None = None) -> dict[str, Any]:
    pod: dict[str, Any] = {"containers": [{"name": f"c{i}", "image": im} for i, im in enumerate(images)]}
    if init:
        pod["initContainers"] = [{"name": "init", "image": init}]
    if kind == "Pod":
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": pod}
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": "w"},
        "spec": {"template": {"spec": pod}},
    }


@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "Pod"])
def test_image_overrider_without_predicate_changes_every_container_but_not_init(kind: str) -> None:
    manifest = _workload(kind, ["nginx:1.25", "busybox"], init="alpine")
    overrider = ImageOverrider(component="Registry", operator="add", value="registry.cn-east-1.example.com")
    result = apply_image(manifest, overrider)
    spec = result["spec"] if kind == "Pod" else result["spec"]["template"]["spec"]
    assert [c["image"] for c in spec["containers"]] == [
        "registry.cn-east-1.example.com/nginx:1.25",
        "registry.cn-east-1.example.com/busybox",
    ]
    assert spec["initContainers"][0]["image"] == "alpine"
    assert manifest["kind"] == kind and "registry" not in str(manifest), "input untouched"


def test_image_overrider_with_predicate_and_other_kinds() -> None:
    manifest = _workload("Deployment", ["nginx", "busybox"])
    overrider = ImageOverrider.from_dict(
        {
            "predicate": {"path": "/spec/template/spec/containers/1/image"},
            "component": "Tag",
            "operator": "replace",
            "value": "1.36",
        }
    )
    result = apply_image(manifest, overrider)
    assert [c["image"] for c in result["spec"]["template"]["spec"]["containers"]] == ["nginx", "busybox:1.36"]
    cronjob = {"kind": "CronJob", "spec": {"jobTemplate": {}}}
    assert apply_image(cronjob, ImageOverrider(component="Tag", operator="add", value="x")) == cronjob
    with pytest.raises(OverriderError, match="neither a map nor a list"):
        bad = ImageOverrider.from_dict(
            {"predicate": {"path": "/spec/nothing/image"}, "component": "Tag", "operator": "add"}
        )
        apply_image(manifest, bad)


@pytest.mark.parametrize(
    ("current", "operator", "value", "expected"),
    [
        (["nginx", "-g"], "add", ["daemon off;"], ["nginx", "-g", "daemon off;"]),
        (None, "add", ["--v=2"], ["--v=2"]),
        (["a", "b", "a", "c"], "remove", ["a", "x"], ["b", "c"]),
        (None, "remove", ["a"], []),  # Karmada adds an empty list
    ],
)
@pytest.mark.parametrize("target", ["command", "args"])
def test_command_and_args(
    target: str, current: list[str] | None, operator: str, value: list[str], expected: list[str]
) -> None:
    manifest = _workload("Deployment", ["nginx", "sidecar"])
    if current is not None:
        manifest["spec"]["template"]["spec"]["containers"][0][target] = current
    overrider = CommandArgsOverrider(container_name="c0", operator=operator, value=value)  # type: ignore[arg-type]
    result = apply_command_args(manifest, overrider, target)
    containers = result["spec"]["template"]["spec"]["containers"]
    assert containers[0][target] == expected
    assert target not in containers[1]


@pytest.mark.parametrize(
    ("labels", "operator", "value", "expected"),
    [
        (None, "add", {"env": "prod"}, {"env": "prod"}),
        ({"env": "dev"}, "add", {"env": "prod", "a/b": "1"}, {"env": "prod", "a/b": "1"}),
        ({"env": "dev", "x": "1"}, "replace", {"env": "prod", "missing": "y"}, {"env": "prod", "x": "1"}),
        ({"env": "dev", "x": "1"}, "remove", {"env": "", "missing": ""}, {"x": "1"}),
        (None, "remove", {"env": ""}, None),
    ],
)
def test_labels_overrider(
    labels: dict[str, str] | None, operator: str, value: dict[str, str], expected: dict[str, str] | None
) -> None:
    manifest: dict[str, Any] = {"metadata": {"name": "x"}}
    if labels is not None:
        manifest["metadata"]["labels"] = labels
    overrider = LabelAnnotationOverrider(operator=operator, value=value)  # type: ignore[arg-type]
    result = apply_labels_annotations(manifest, overrider, "labels")
    assert result["metadata"].get("labels") == expected


def test_field_overrider_yaml_and_json() -> None:
    manifest = {
        "kind": "ConfigMap",
        "metadata": {"name": "c"},
        "data": {
            "app.yaml": "server:\n  port: 80\n  hosts:\n  - a\n",
            "app.json": '{"b": 1, "a": {"x": "<y>"}}',
        },
    }
    yaml_rule = FieldOverrider.from_dict(
        {
            "fieldPath": "/data/app.yaml",
            "yaml": [
                {"subPath": "/server/port", "operator": "replace", "value": 8080},
                {"subPath": "/server/hosts/-", "operator": "add", "value": "b"},
            ],
        }
    )
    json_rule = FieldOverrider.from_dict(
        {
            "fieldPath": "/data/app.json",
            "json": [
                {"subPath": "/b", "operator": "remove"},
                {"subPath": "/c", "operator": "add", "value": [1]},
            ],
        }
    )
    result = apply_field(apply_field(manifest, yaml_rule), json_rule)
    assert result["data"]["app.yaml"] == "server:\n  hosts:\n  - a\n  - b\n  port: 8080\n"
    assert result["data"]["app.json"] == '{"a":{"x":"\\u003cy\\u003e"},"c":[1]}'
    with pytest.raises(OverriderError, match="is not string"):
        apply_field({"spec": {"replicas": 1}}, FieldOverrider.from_dict({"fieldPath": "/spec/replicas", "json": []}))
    with pytest.raises(OverriderError, match="does not exist"):
        apply_field(manifest, FieldOverrider.from_dict({"fieldPath": "/data/none", "yaml": []}))


def test_plaintext() -> None:
    manifest = _workload("Deployment", ["nginx"])
    ops = [
        PlaintextOverrider.from_dict({"path": "/spec/replicas", "operator": "add", "value": 3}),
        PlaintextOverrider.from_dict(
            {
                "path": "/spec/template/spec/containers/0/resources",
                "operator": "add",
                "value": {"limits": {"cpu": "500m"}},
            }
        ),
        PlaintextOverrider.from_dict({"path": "/metadata/name", "operator": "replace", "value": "renamed"}),
    ]
    result = apply_plaintext(manifest, ops)
    assert result["spec"]["replicas"] == 3 and result["metadata"]["name"] == "renamed"
    assert result["spec"]["template"]["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "500m"}}
    with pytest.raises(OverriderError, match="replace operation does not apply: doc is missing key /spec/paused"):
        apply_plaintext(
            manifest,
            [PlaintextOverrider.from_dict({"path": "/spec/paused", "operator": "replace", "value": True})],
        )


@pytest.mark.parametrize(
    ("doc", "ops", "expected"),
    [
        ({"a": [1, 2]}, [Operation("add", "/a/-", 3)], {"a": [1, 2, 3]}),
        ({"a": [1, 2]}, [Operation("add", "/a/0", 0)], {"a": [0, 1, 2]}),
        ({"a": [1, 2]}, [Operation("remove", "/a/-1")], {"a": [1]}),
        ({"a/b": {"~c": 1}}, [Operation("replace", "/a~1b/~0c", 2)], {"a/b": {"~c": 2}}),
        ({"a": 1}, [Operation("add", "", {"b": 2})], {"b": 2}),
    ],
)
def test_json_patch(doc: Any, ops: list[Operation], expected: Any) -> None:
    before = copy.deepcopy(doc)
    assert apply_patch(doc, ops) == expected
    assert doc == before


@pytest.mark.parametrize(
    "ops",
    [
        [Operation("add", "/missing/child", 1)],
        [Operation("remove", "/nothing")],
        [Operation("replace", "/a/5", 1)],
        [Operation("add", "/a/x", 1)],
        [Operation("move", "/a", 1)],
        [Operation("add", "no-slash", 1)],
    ],
)
def test_json_patch_errors(ops: list[Operation]) -> None:
    with pytest.raises(PatchError):
        apply_patch({"a": [1]}, ops)
