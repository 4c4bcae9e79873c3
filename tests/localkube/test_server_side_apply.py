"""Server-side apply and managedFields against structured-merge-diff's rules.

Cases mirror sigs.k8s.io/structured-merge-diff's merge tests (merge/multiple_appliers_test.go,
merge/set_test.go, merge/key_test.go, merge/leaf_test.go, merge/obsolete_versions_test.go'
neighbours) and k8s.io/apiserver's fieldmanager tests (managedfields reset with ``[{}]``,
before-first-apply, the cap of 10 update managers), re-expressed over HTTPS.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from localkube.fieldpath import FieldSet
from localkube.typed import compare, root_schema
from tests.factories import crd
from tests.servers import Kubectl, Raw

NS = "/api/v1/namespaces/default"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
APPLY = "application/apply-patch+yaml"


async def apply(raw: Raw, path: str, body: dict[str, Any], manager: str, force: bool = False) -> tuple[int, Any]:
    query = f"?fieldManager={manager}" + ("&force=true" if force else "")
    status, payload, _ = await raw.request("PATCH", path + query, body, content_type=APPLY)
    return status, payload


def configmap(name: str, data: dict[str, str] | None = None, **meta: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **meta}}
    if data is not None:
        body["data"] = data
    return body


def deployment(name: str, containers: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": containers}},
            **spec,
        },
    }


def managers(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{m['manager']}/{m['operation']}": m["fieldsV1"] for m in obj["metadata"].get("managedFields", [])}


# -- field sets (pure) ------------------------------------------------------------
@pytest.mark.parametrize(
    ("fields_v1", "paths"),
    [
        ({"f:data": {}}, [("f:data",)]),
        ({"f:data": {"f:b": {}}}, [("f:data", "f:b")]),
        ({"f:data": {".": {}, "f:b": {}}}, [("f:data",), ("f:data", "f:b")]),
        (
            {"f:spec": {"f:containers": {'k:{"name":"web"}': {".": {}, "f:image": {}, "f:name": {}}}}},
            [
                ("f:spec", "f:containers", 'k:{"name":"web"}'),
                ("f:spec", "f:containers", 'k:{"name":"web"}', "f:image"),
                ("f:spec", "f:containers", 'k:{"name":"web"}', "f:name"),
            ],
        ),
        ({"f:metadata": {"f:finalizers": {'v:"a"': {}}}}, [("f:metadata", "f:finalizers", 'v:"a"')]),
    ],
)
def test_fields_v1_round_trip(fields_v1: dict[str, Any], paths: list[tuple[str, ...]]) -> None:
    decoded = FieldSet.from_fields_v1(fields_v1)
    assert list(decoded.paths()) == paths
    assert FieldSet.of(*paths).to_fields_v1() == fields_v1


def test_difference_keeps_children_recursive_difference_drops_them() -> None:
    whole = FieldSet.of(("f:a",), ("f:a", "f:b"), ("f:c",))
    assert list(whole.difference(FieldSet.of(("f:a",))).paths()) == [("f:a", "f:b"), ("f:c",)]
    assert list(whole.recursive_difference(FieldSet.of(("f:a",))).paths()) == [("f:c",)]
    assert list(whole.intersection(FieldSet.of(("f:a", "f:b"), ("f:x",))).paths()) == [("f:a", "f:b")]


# -- apply over HTTPS ---------------------------------------------------------------
async def test_an_empty_map_then_a_filled_one_keeps_the_data(raw: Raw) -> None:
    """The issue's reproduction: the object lost ``data`` while managedFields owned data.b."""
    assert (await apply(raw, f"{NS}/configmaps/x", configmap("x", {}), "m1"))[0] == 201
    status, obj = await apply(raw, f"{NS}/configmaps/x", configmap("x", {"b": "2"}), "m1")
    assert status == 200
    assert obj["data"] == {"b": "2"}
    assert managers(obj)["m1/Apply"] == {"f:data": {"f:b": {}}}


async def test_fields_a_manager_stops_applying_are_removed(raw: Raw) -> None:
    await apply(raw, f"{NS}/configmaps/drop", configmap("drop", {"a": "1", "b": "2"}, labels={"l": "1"}), "m1")
    status, obj = await apply(raw, f"{NS}/configmaps/drop", configmap("drop", {"a": "1"}), "m1")
    assert status == 200
    assert obj["data"] == {"a": "1"}
    assert "labels" not in obj["metadata"]
    assert managers(obj)["m1/Apply"] == {"f:data": {"f:a": {}}}


async def test_two_appliers_share_a_map_and_a_shared_field_survives_one_leaving(raw: Raw) -> None:
    path = f"{NS}/configmaps/shared"
    await apply(raw, path, configmap("shared", {"a": "1"}), "m1")
    status, obj = await apply(raw, path, configmap("shared", {"a": "1", "b": "2"}), "m2")
    assert status == 200, obj  # the same value of a: shared ownership, no conflict
    assert obj["data"] == {"a": "1", "b": "2"}
    status, obj = await apply(raw, path, configmap("shared", {"c": "3"}), "m1")
    assert status == 200
    assert obj["data"] == {"a": "1", "b": "2", "c": "3"}  # m2 still owns a
    status, obj = await apply(raw, path, configmap("shared", {"b": "2"}), "m2")
    assert obj["data"] == {"b": "2", "c": "3"}


async def test_a_conflict_names_the_owner_and_force_takes_the_field(raw: Raw) -> None:
    path = f"{NS}/configmaps/owned"
    await apply(raw, path, configmap("owned", {"a": "1", "b": "1"}), "m1")
    status, error = await apply(raw, path, configmap("owned", {"a": "2"}), "m2")
    assert status == 409
    assert error["reason"] == "Conflict"
    assert error["message"] == 'Apply failed with 1 conflict: conflict with "m1" using v1: .data.a'
    assert error["details"]["causes"] == [
        {"reason": "FieldManagerConflict", "message": 'conflict with "m1" using v1', "field": ".data.a"}
    ]
    status, error = await apply(raw, path, configmap("owned", {"a": "2", "b": "2"}), "m2")
    assert status == 409
    assert error["message"] == ('Apply failed with 2 conflicts: conflicts with "m1" using v1:\n- .data.a\n- .data.b')
    status, obj = await apply(raw, path, configmap("owned", {"a": "2"}), "m2", force=True)
    assert status == 200
    assert obj["data"] == {"a": "2", "b": "1"}
    assert managers(obj)["m1/Apply"] == {"f:data": {"f:b": {}}}
    status, error = await apply(raw, path, configmap("owned", {"a": "1", "b": "1"}), "m1")
    assert status == 409 and '"m2"' in error["message"]


async def test_an_update_manager_owns_what_it_changed(raw: Raw) -> None:
    path = f"{NS}/configmaps/edited"
    await apply(raw, path, configmap("edited", {"a": "1"}), "m1")
    status, obj, _ = await raw.request(
        "PATCH",
        f"{path}?fieldManager=editor",
        {"data": {"a": "9", "e": "1"}},
        content_type="application/merge-patch+json",
    )
    assert status == 200
    assert managers(obj)["editor/Update"] == {"f:data": {"f:a": {}, "f:e": {}}}
    assert "m1/Apply" not in managers(obj)  # the update took a over and m1 owned nothing else
    status, error = await apply(raw, path, configmap("edited", {"a": "1"}), "m1")
    assert status == 409
    assert error["message"] == 'Apply failed with 1 conflict: conflict with "editor" using v1: .data.a'


async def test_writes_without_a_field_manager_are_owned_by_the_user_agent(raw: Raw) -> None:
    status, obj, _ = await raw.request("POST", f"{NS}/configmaps", configmap("agent", {"k": "v"}))
    assert status == 201
    (entry,) = obj["metadata"]["managedFields"]
    assert entry["manager"] == "Python"  # aiohttp's User-Agent is "Python/3.x aiohttp/..."
    assert entry["operation"] == "Update"
    assert entry["fieldsV1"] == {"f:data": {".": {}, "f:k": {}}}


# what kube-apiserver v1.32 records for `kubectl create deployment web --image=nginx`: a create
# is compared with an empty Deployment, whose struct fields (spec, strategy, template and its
# metadata and spec) Go always writes, so only maps, list items and pointers get a "."
CREATED_DEPLOYMENT_FIELDS = {
    "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
    "f:spec": {
        "f:progressDeadlineSeconds": {},
        "f:replicas": {},
        "f:revisionHistoryLimit": {},
        "f:selector": {},
        "f:strategy": {"f:rollingUpdate": {".": {}, "f:maxSurge": {}, "f:maxUnavailable": {}}, "f:type": {}},
        "f:template": {
            "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
            "f:spec": {
                "f:containers": {
                    'k:{"name":"nginx"}': {
                        ".": {},
                        "f:image": {},
                        "f:imagePullPolicy": {},
                        "f:name": {},
                        "f:resources": {},
                        "f:terminationMessagePath": {},
                        "f:terminationMessagePolicy": {},
                    }
                },
                "f:dnsPolicy": {},
                "f:restartPolicy": {},
                "f:schedulerName": {},
                "f:securityContext": {},
                "f:terminationGracePeriodSeconds": {},
            },
        },
    },
}


async def test_a_create_owns_what_differs_from_an_empty_object_of_its_kind(raw: Raw) -> None:
    body = deployment("web", [{"name": "nginx", "image": "nginx"}])
    body["metadata"]["labels"] = {"app": "web"}
    status, obj, _ = await raw.request("POST", f"{DEPLOYMENTS}?fieldManager=kubectl-create", body)
    assert status == 201, obj
    assert managers(obj)["kubectl-create/Update"] == CREATED_DEPLOYMENT_FIELDS


def test_a_null_list_or_map_compares_as_an_empty_one() -> None:
    """null -> items adds each item's fields (structured-merge-diff reads null as empty), where
    a change of shape (a string -> a list) is one modified leaf."""
    schema = root_schema("apps", "v1", "Deployment", None, False)
    before = {"spec": {"template": {"spec": {"containers": None}}, "selector": None}}
    after = {"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "x"}]}}, "selector": None}}
    result = compare(before, after, schema)
    containers = 'k:{"name":"a"}'
    assert result.added.to_fields_v1() == {
        "f:spec": {"f:template": {"f:spec": {"f:containers": {containers: {".": {}, "f:image": {}, "f:name": {}}}}}}
    }
    assert result.modified.empty() and result.removed.empty()
    shapes = compare({"spec": {"paused": "x"}}, {"spec": {"paused": [1]}}, None)
    assert shapes.modified.to_fields_v1() == {"f:spec": {"f:paused": {}}}


async def test_keyed_lists_merge_per_item(raw: Raw) -> None:
    web = {"name": "web", "image": "nginx:1"}
    sidecar = {"name": "sidecar", "image": "envoy:1"}
    assert (await apply(raw, f"{DEPLOYMENTS}/lists", deployment("lists", [web]), "m1"))[0] == 201
    status, obj = await apply(raw, f"{DEPLOYMENTS}/lists", deployment("lists", [sidecar]), "m2")
    assert status == 200, obj
    names = [c["name"] for c in obj["spec"]["template"]["spec"]["containers"]]
    assert names == ["web", "sidecar"]
    owned = managers(obj)["m2/Apply"]["f:spec"]["f:template"]["f:spec"]["f:containers"]
    assert owned == {'k:{"name":"sidecar"}': {".": {}, "f:image": {}, "f:name": {}}}
    status, error = await apply(
        raw, f"{DEPLOYMENTS}/lists", deployment("lists", [web, {"name": "sidecar", "image": "envoy:2"}]), "m1"
    )
    assert status == 409
    assert '.spec.template.spec.containers[name="sidecar"].image' in error["message"]
    status, obj = await apply(raw, f"{DEPLOYMENTS}/lists", deployment("lists", [sidecar]), "m1")
    assert status == 200
    assert [c["name"] for c in obj["spec"]["template"]["spec"]["containers"]] == ["sidecar"]


async def test_atomic_lists_are_owned_whole(raw: Raw) -> None:
    first = {"name": "web", "image": "nginx", "args": ["--a"]}
    await apply(raw, f"{DEPLOYMENTS}/atomic", deployment("atomic", [first]), "m1")
    second = {"name": "web", "args": ["--b"]}
    status, error = await apply(raw, f"{DEPLOYMENTS}/atomic", deployment("atomic", [second]), "m2")
    assert status == 409
    assert '.spec.template.spec.containers[name="web"].args' in error["message"]
    status, obj = await apply(raw, f"{DEPLOYMENTS}/atomic", deployment("atomic", [second]), "m2", force=True)
    assert status == 200
    assert obj["spec"]["template"]["spec"]["containers"][0]["args"] == ["--b"]  # replaced, not merged


async def test_set_lists_merge_per_value(raw: Raw) -> None:
    path = f"{NS}/configmaps/sets"
    await apply(raw, path, configmap("sets", finalizers=["example.com/a"]), "m1")
    status, obj = await apply(raw, path, configmap("sets", finalizers=["example.com/b"]), "m2")
    assert status == 200
    assert obj["metadata"]["finalizers"] == ["example.com/a", "example.com/b"]
    status, obj = await apply(raw, path, configmap("sets"), "m1")
    assert obj["metadata"]["finalizers"] == ["example.com/b"]
    await apply(raw, path, configmap("sets"), "m2")


async def test_managed_fields_reset_only_with_one_empty_entry(raw: Raw) -> None:
    path = f"{NS}/configmaps/reset"
    await apply(raw, path, configmap("reset", {"a": "1"}), "m1")
    merge = "application/merge-patch+json"
    status, obj, _ = await raw.request("PATCH", path, {"metadata": {"managedFields": []}}, content_type=merge)
    assert status == 200 and "m1/Apply" in managers(obj)  # an empty list keeps them
    status, obj, _ = await raw.request("PATCH", path, {"metadata": {"managedFields": [{}]}}, content_type=merge)
    assert status == 200 and "managedFields" not in obj["metadata"]
    status, error = await apply(raw, path, configmap("reset", {"a": "2"}), "m1")
    assert status == 409  # the first apply after a reset meets the old fields' owner
    assert 'conflict with "before-first-apply"' in error["message"]


async def test_more_than_ten_update_managers_fold_into_ancient_changes(raw: Raw) -> None:
    path = f"{NS}/configmaps/crowd"
    await raw.request("POST", f"{NS}/configmaps?fieldManager=creator", configmap("crowd", {"c": "0"}))
    merge = "application/merge-patch+json"
    for i in range(11):
        status, obj, _ = await raw.request(
            "PATCH", f"{path}?fieldManager=writer-{i:02}", {"data": {f"k{i}": "v"}}, content_type=merge
        )
        assert status == 200
    names = [m["manager"] for m in obj["metadata"]["managedFields"]]
    assert len(names) == 10
    assert "ancient-changes" in names and "creator" not in names


async def test_a_no_op_apply_changes_nothing(raw: Raw) -> None:
    path = f"{NS}/configmaps/same"
    _, first = await apply(raw, path, configmap("same", {"a": "1"}), "m1")
    _, second = await apply(raw, path, configmap("same", {"a": "1"}), "m1")
    assert second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert second["metadata"]["managedFields"] == first["metadata"]["managedFields"]


async def test_custom_resources_use_their_schema_and_deduce_the_rest(raw: Raw) -> None:
    gadgets = crd(
        "example.com",
        "Gadget",
        {
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "properties": {
                        "ports": {
                            "type": "array",
                            "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["name"],
                            "items": {
                                "type": "object",
                                "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
                            },
                        },
                        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    },
                }
            },
        },
    )
    status, _, _ = await raw.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", gadgets)
    assert status == 201
    path = "/apis/example.com/v1/namespaces/default/gadgets/g"
    body = {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}}
    for _ in range(100):
        status, obj = await apply(raw, path, {**body, "spec": {"ports": [{"name": "a", "port": 1}]}}, "m1")
        if status != 404:
            break
    assert status == 201, obj
    status, obj = await apply(
        raw, path, {**body, "spec": {"ports": [{"name": "b", "port": 2}], "free": {"x": {"y": 1}}}}, "m2"
    )
    assert status == 200, obj
    assert obj["spec"]["ports"] == [{"name": "a", "port": 1}, {"name": "b", "port": 2}]
    # free is a named field of spec (not a member); x, a key of a deduced map, is
    assert managers(obj)["m2/Apply"]["f:spec"]["f:free"] == {"f:x": {".": {}, "f:y": {}}}


def test_kubectl_apply_server_side(admin: Kubectl, tmp_path: Path) -> None:
    """The real kubectl: --server-side, its conflict message, and --force-conflicts."""
    manifest = tmp_path / "cm.yaml"
    manifest.write_text(yaml.safe_dump(configmap("kubectl-ssa", {"a": "1"}) | {"metadata": {"name": "kubectl-ssa"}}))
    created = admin("apply", "--server-side", "--field-manager=team-a", "-f", str(manifest))
    assert "configmap/kubectl-ssa serverside-applied" in created.stdout
    manifest.write_text(yaml.safe_dump(configmap("kubectl-ssa", {"a": "2"})))
    refused = admin("apply", "--server-side", "--field-manager=team-b", "-f", str(manifest), check=False)
    assert refused.returncode != 0
    assert 'conflict with "team-a"' in refused.stderr and ".data.a" in refused.stderr
    admin("apply", "--server-side", "--field-manager=team-b", "--force-conflicts", "-f", str(manifest))
    shown = json.loads(admin("get", "cm", "kubectl-ssa", "-o", "json", "--show-managed-fields").stdout)
    assert shown["data"] == {"a": "2"}
    assert {m["manager"] for m in shown["metadata"]["managedFields"]} == {"team-b"}
