"""RBAC authorization through the subject index: every change to a role or binding is in
force for the very next request, and bindings stored before the server started count."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from localkube.auth import Attributes, Identity, with_authenticated
from localkube.journal import Journal
from localkube.rbac import Authorizer
from localkube.store import Store
from tests.servers import Raw, ServerThread

Obj = dict[str, Any]
RBAC = "/apis/rbac.authorization.k8s.io/v1"
PODS = "/api/v1/namespaces/default/pods"


def binding(
    name: str, subjects: list[Obj], role_kind: str = "Role", role: str = "pod-lister", namespace: str = "default"
) -> Obj:
    meta: Obj = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding" if namespace else "ClusterRoleBinding",
        "metadata": meta,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        "subjects": subjects,
    }


def user(name: str) -> Obj:
    return {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": name}


POD_LISTER: Obj = {
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "Role",
    "metadata": {"name": "pod-lister", "namespace": "default"},
    "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}],
}


async def test_binding_changes_take_effect_at_once(raw: Raw, localkube: ServerThread, workdir: Path) -> None:
    ivy = Raw(localkube, localkube.kubeconfig(workdir, "ivy", ["crew"]))
    max_ = Raw(localkube, localkube.kubeconfig(workdir, "max", []))
    assert (await ivy.request("GET", PODS))[0] == 403
    assert (await raw.request("POST", f"{RBAC}/namespaces/default/roles", POD_LISTER))[0] == 201
    bindings = f"{RBAC}/namespaces/default/rolebindings"
    status, created, _ = await raw.request("POST", bindings, binding("listers", [user("ivy")]))
    assert status == 201
    assert (await ivy.request("GET", PODS))[0] == 200
    assert (await max_.request("GET", PODS))[0] == 403
    # the subjects change: the old one loses the rights, the new one gains them
    moved = copy.deepcopy(created)
    moved["subjects"] = [user("max")]
    assert (await raw.request("PUT", f"{bindings}/listers", moved))[0] == 200
    assert (await ivy.request("GET", PODS))[0] == 403
    assert (await max_.request("GET", PODS))[0] == 200
    # a group subject, then a deleted binding
    status, _, _ = await raw.request(
        "POST", bindings, binding("crew", [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "crew"}])
    )
    assert status == 201 and (await ivy.request("GET", PODS))[0] == 200
    assert (await raw.request("DELETE", f"{bindings}/crew"))[0] == 200
    assert (await ivy.request("GET", PODS))[0] == 403
    # other namespaces' bindings do not apply
    assert (await max_.request("GET", "/api/v1/namespaces/kube-system/pods"))[0] == 403


async def test_role_changes_take_effect_at_once(raw: Raw, localkube: ServerThread, workdir: Path) -> None:
    kim = Raw(localkube, localkube.kubeconfig(workdir, "kim", []))
    roles = f"{RBAC}/namespaces/default/roles"
    role = copy.deepcopy(POD_LISTER)
    role["metadata"]["name"] = "kim-role"
    assert (await raw.request("POST", roles, role))[0] == 201
    bound = binding("kim", [user("kim")], role="kim-role")
    assert (await raw.request("POST", f"{RBAC}/namespaces/default/rolebindings", bound))[0] == 201
    assert (await kim.request("GET", PODS))[0] == 200
    patch = {"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}
    merge = "application/merge-patch+json"
    assert (await raw.request("PATCH", f"{roles}/kim-role", patch, content_type=merge))[0] == 200
    assert (await kim.request("GET", PODS))[0] == 403
    assert (await raw.request("DELETE", f"{roles}/kim-role"))[0] == 200
    status, body, _ = await kim.request("GET", PODS)
    assert status == 403
    # kube-apiserver names the roles a user's bindings point at that do not exist
    assert body["message"] == (
        'pods is forbidden: User "kim" cannot list resource "pods" in API group "" in the namespace "default":'
        ' RBAC: role.rbac.authorization.k8s.io "kim-role" not found'
    )
    # a binding may name a role before it exists; creating it grants its rules
    assert (await raw.request("POST", roles, role))[0] == 201
    assert (await kim.request("GET", PODS))[0] == 200


async def test_service_account_and_cluster_bindings(raw: Raw) -> None:
    reviews = "/apis/authorization.k8s.io/v1/subjectaccessreviews"

    async def allowed(name: str, namespace: str) -> bool:
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": name,
                "groups": ["system:authenticated"],
                "resourceAttributes": {"verb": "list", "resource": "pods", "namespace": namespace},
            },
        }
        status, body, _ = await raw.request("POST", reviews, review)
        assert status == 201, body
        reasons.append(body["status"].get("reason", ""))
        return bool(body["status"]["allowed"])

    reasons: list[str] = []

    robot = "system:serviceaccount:default:robot"
    sa = {"kind": "ServiceAccount", "name": "robot"}  # namespace defaults to the binding's
    assert not await allowed(robot, "default")
    assert (await raw.request("POST", f"{RBAC}/namespaces/default/rolebindings", binding("robot", [sa])))[0] == 201
    assert await allowed(robot, "default") and not await allowed(robot, "kube-public")
    assert reasons[-2:] == [
        'RBAC: allowed by RoleBinding "robot/default" of Role "pod-lister" to ServiceAccount "robot/default"',
        "",
    ]
    # in a ClusterRoleBinding a ServiceAccount must name its namespace; cluster-wide it applies everywhere
    lister = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "pod-lister"},
        "rules": POD_LISTER["rules"],
    }
    assert (await raw.request("POST", f"{RBAC}/clusterroles", lister))[0] == 201
    other = {"kind": "ServiceAccount", "name": "other", "namespace": "kube-system"}
    cluster = binding("other", [other], role_kind="ClusterRole", namespace="")
    assert (await raw.request("POST", f"{RBAC}/clusterrolebindings", cluster))[0] == 201
    assert await allowed("system:serviceaccount:kube-system:other", "kube-public")
    assert not await allowed("system:serviceaccount:default:other", "kube-public")


def test_bindings_stored_before_start_are_indexed(tmp_path: Path) -> None:
    """A data directory's bindings (loaded from the journal) apply from the first request."""
    store = Store(Journal(tmp_path))
    store.put("rbac.authorization.k8s.io/roles", copy.deepcopy(POD_LISTER), "ADDED")
    store.put("rbac.authorization.k8s.io/rolebindings", binding("ivy", [user("ivy")]), "ADDED")
    store.close()
    reloaded = Authorizer(Store(Journal(tmp_path)))
    attrs = Attributes("list", True, resource="pods", namespace="default")
    assert reloaded.allowed(with_authenticated("ivy", []), attrs)
    assert not reloaded.allowed(Identity("ivo", ["system:authenticated"]), attrs)


def test_a_dropped_subscription_rebuilds_the_index() -> None:
    """Should the store ever drop the index's subscription (as one shedding a slow watcher
    would), the next lookup starts again from what is stored instead of going stale."""
    store = Store()
    authorizer = Authorizer(store)
    attrs = Attributes("list", True, resource="pods", namespace="default")
    assert not authorizer.allowed(with_authenticated("ivy", []), attrs)
    for storage, watcher in list(authorizer.index._watchers.items()):
        store.unsubscribe(storage, watcher)
    store.put("rbac.authorization.k8s.io/roles", copy.deepcopy(POD_LISTER), "ADDED")
    store.put("rbac.authorization.k8s.io/rolebindings", binding("ivy", [user("ivy")]), "ADDED")
    assert authorizer.allowed(with_authenticated("ivy", []), attrs)


def test_what_was_looked_up_is_forgotten_on_any_change_whoever_sees_it_first() -> None:
    """Grants are kept per (user, groups, namespace) between changes; a change first applied by
    another lookup (a rules review) must still reach the next decision."""
    store = Store()
    authorizer = Authorizer(store)
    ivy = with_authenticated("ivy", [])
    attrs = Attributes("list", True, resource="pods", namespace="default")
    store.put("rbac.authorization.k8s.io/rolebindings", binding("ivy", [user("ivy")]), "ADDED")
    assert authorizer.denial(ivy, attrs) == 'RBAC: role.rbac.authorization.k8s.io "pod-lister" not found'
    store.put("rbac.authorization.k8s.io/roles", copy.deepcopy(POD_LISTER), "ADDED")
    assert [rule.source for rule, _ in authorizer.compiled_rules(ivy, "default")] == POD_LISTER["rules"]
    assert authorizer.denial(ivy, attrs) is None
    assert authorizer.decide(ivy, attrs) == (
        True,
        'RBAC: allowed by RoleBinding "ivy/default" of Role "pod-lister" to User "ivy"',
    )
    narrowed = copy.deepcopy(POD_LISTER)
    narrowed["rules"][0]["verbs"] = ["get"]
    store.put("rbac.authorization.k8s.io/roles", narrowed, "MODIFIED")
    assert authorizer.rules_for(ivy, "default")[0][0]["verbs"] == ["get"]
    assert authorizer.denial(ivy, attrs) == ""
    assert authorizer.denial(ivy, Attributes("get", True, resource="pods", namespace="default")) is None
