"""RBAC escalation and bind prevention: the covers check as a table, then real users
(client certificates) writing roles and bindings over HTTP and through kubectl."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from localkube.rbac import Rule
from localkube.rbac_escalation import compact, compact_string, covers
from tests.conftest import UserFactory
from tests.servers import Kubectl, Raw, ServerThread

Obj = dict[str, Any]


def rule(verbs: list[str], groups: list[str] | None = None, resources: list[str] | None = None, **more: Any) -> Obj:
    found: Obj = {"verbs": verbs}
    if groups is not None:
        found["apiGroups"] = groups
    if resources is not None:
        found["resources"] = resources
    found.update(more)
    return found


PODS_GET = rule(["get"], [""], ["pods"])
COVERS_CASES = [
    # (what, owner rules, wanted rules, covered, what is missing)
    ("identical rule", [PODS_GET], [PODS_GET], True, []),
    ("more verbs than needed", [rule(["get", "list"], [""], ["pods"])], [PODS_GET], True, []),
    ("a verb missing", [PODS_GET], [rule(["get", "delete"], [""], ["pods"])], False,
     [rule(["delete"], [""], ["pods"])]),
    ("verb wildcard", [rule(["*"], [""], ["pods"])], [rule(["escalate", "get"], [""], ["pods"])], True, []),
    ("wanted verb wildcard needs the wildcard", [rule(["get", "list"], [""], ["pods"])], [rule(["*"], [""], ["pods"])],
     False, [rule(["*"], [""], ["pods"])]),
    ("group wildcard", [rule(["get"], ["*"], ["pods"])], [rule(["get"], ["", "apps"], ["pods"])], True, []),
    ("another group", [PODS_GET], [rule(["get"], ["apps"], ["pods"])], False, [rule(["get"], ["apps"], ["pods"])]),
    ("resource wildcard", [rule(["get"], [""], ["*"])], [rule(["get"], [""], ["pods", "pods/log"])], True, []),
    ("wanted resource wildcard needs the wildcard", [PODS_GET], [rule(["get"], [""], ["*"])], False,
     [rule(["get"], [""], ["*"])]),
    ("subresource wildcard", [rule(["get"], [""], ["*/status"])], [rule(["get"], [""], ["pods/status"])], True, []),
    ("subresource wildcard is not the resource", [rule(["get"], [""], ["*/status"])], [PODS_GET], False, [PODS_GET]),
    ("resource does not cover its subresources", [PODS_GET], [rule(["get"], [""], ["pods/exec"])], False,
     [rule(["get"], [""], ["pods/exec"])]),
    ("unnamed covers named", [PODS_GET], [rule(["get"], [""], ["pods"], resourceNames=["a", "b"])], True, []),
    ("named covers the same name", [rule(["get"], [""], ["pods"], resourceNames=["a", "b"])],
     [rule(["get"], [""], ["pods"], resourceNames=["b"])], True, []),
    ("named does not cover another name", [rule(["get"], [""], ["pods"], resourceNames=["a"])],
     [rule(["get"], [""], ["pods"], resourceNames=["a", "c"])], False,
     [rule(["get"], [""], ["pods"], resourceNames=["c"])]),
    ("named does not cover unnamed", [rule(["get"], [""], ["pods"], resourceNames=["a"])], [PODS_GET], False,
     [PODS_GET]),
    ("several owner rules together", [PODS_GET, rule(["list"], [""], ["pods"])],
     [rule(["get", "list"], [""], ["pods"])], True, []),
    ("url exact", [rule(["get"], nonResourceURLs=["/healthz"])], [rule(["get"], nonResourceURLs=["/healthz"])], True,
     []),
    ("url prefix", [rule(["get"], nonResourceURLs=["/api/*"])], [rule(["get"], nonResourceURLs=["/api/v1", "/api/"])],
     True, []),
    ("url prefix without star", [rule(["get"], nonResourceURLs=["/api/"])],
     [rule(["get"], nonResourceURLs=["/api/v1"])], False, [rule(["get"], nonResourceURLs=["/api/v1"])]),
    ("url star is every url", [rule(["*"], nonResourceURLs=["*"])], [rule(["get", "post"], nonResourceURLs=["/x/y"])],
     True, []),
    ("prefix star does not cover the parent", [rule(["get"], nonResourceURLs=["/apis/*"])],
     [rule(["get"], nonResourceURLs=["/apis"])], False, [rule(["get"], nonResourceURLs=["/apis"])]),
    ("resource rights do not cover urls", [rule(["*"], ["*"], ["*"])], [rule(["get"], nonResourceURLs=["/metrics"])],
     False, [rule(["get"], nonResourceURLs=["/metrics"])]),
    ("url rights do not cover resources", [rule(["*"], nonResourceURLs=["*"])], [PODS_GET], False, [PODS_GET]),
    ("cluster-admin covers everything",
     [rule(["*"], ["*"], ["*"]), rule(["*"], nonResourceURLs=["*"])],
     [rule(["get"], ["apps"], ["deployments/scale"], resourceNames=["w"]), rule(["put"], nonResourceURLs=["/a"])],
     True, []),
    ("nothing held", [], [rule(["get", "list"], [""], ["pods", "secrets"])], False,
     [rule(["get"], [""], ["pods"]), rule(["list"], [""], ["pods"]), rule(["get"], [""], ["secrets"]),
      rule(["list"], [""], ["secrets"])]),
    ("nothing wanted", [], [], True, []),
]  # fmt: skip


@pytest.mark.parametrize(("owner", "wanted", "covered", "missing"), [c[1:] for c in COVERS_CASES],
                         ids=[c[0] for c in COVERS_CASES])  # fmt: skip
def test_covers(owner: list[Obj], wanted: list[Obj], covered: bool, missing: list[Obj]) -> None:
    assert covers([Rule.compile(r) for r in owner], wanted) == (covered, missing)


def test_missing_rights_are_compacted_by_verb() -> None:
    missing = covers([], [rule(["get", "list"], [""], ["pods", "secrets"]), rule(["get"], nonResourceURLs=["/x"])])[1]
    assert sorted(compact_string(r) for r in compact(missing)) == [
        '{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}',
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}',
        '{NonResourceURLs:["/x"], Verbs:["get"]}',
    ]
    named = compact([rule(["get"], ["apps"], ["deployments"], resourceNames=["a"])])
    assert (
        compact_string(named[0])
        == '{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["a"], Verbs:["get"]}'
    )


# ---- over HTTP, as real users -------------------------------------------------------


def role(name: str, *rules: Obj, namespace: str = "team", kind: str = "Role", **more: Any) -> Obj:
    meta: Obj = {"name": name}
    if kind == "Role":
        meta["namespace"] = namespace
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta, "rules": list(rules), **more}


def binding(name: str, role_kind: str, role_name: str, user: str, namespace: str = "team") -> Obj:
    kind = "RoleBinding" if namespace else "ClusterRoleBinding"
    meta: Obj = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": meta,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role_name},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
    }


ROLES = "/apis/rbac.authorization.k8s.io/v1/namespaces/team/roles"
BINDINGS = "/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings"
CLUSTER_ROLES = "/apis/rbac.authorization.k8s.io/v1/clusterroles"


@pytest.fixture(scope="module")
def team(admin: Kubectl) -> None:
    """Namespace ``team`` with user ``dev`` bound to the admin ClusterRole there."""
    admin("create", "namespace", "team")
    admin("create", "rolebinding", "dev-admin", "--clusterrole=admin", "--user=dev", "-n", "team")
    admin("create", "clusterrole", "node-reader", "--verb=get,list", "--resource=nodes")


@pytest.fixture(scope="module")
def dev(localkube: ServerThread, workdir: Path, team: None) -> Raw:
    return Raw(localkube, localkube.kubeconfig(workdir, "dev", []))


async def test_a_role_may_grant_only_rights_held(dev: Raw) -> None:
    held = role("reader", rule(["get", "list"], [""], ["configmaps"]))
    status, body, _ = await dev.request("POST", ROLES, held)
    assert status == 201, body
    status, body, _ = await dev.request(
        "POST", ROLES, role("too-much", rule(["get", "list"], [""], ["nodes", "configmaps"]))
    )
    assert status == 403 and body["reason"] == "Forbidden"
    assert body["message"] == (
        'roles.rbac.authorization.k8s.io "too-much" is forbidden: user "dev" (groups=["system:authenticated"])'
        " is attempting to grant RBAC permissions not currently held:\n"
        '{APIGroups:[""], Resources:["nodes"], Verbs:["get" "list"]}'
    )
    assert body["details"] == {"name": "too-much", "group": "rbac.authorization.k8s.io", "kind": "roles"}
    # an update is checked as well, whatever the patch type
    widened = {"rules": [rule(["get", "list"], [""], ["configmaps"]), rule(["delete"], [""], ["nodes"])]}
    status, body, _ = await dev.request(
        "PATCH", f"{ROLES}/reader", widened, content_type="application/merge-patch+json"
    )
    assert status == 403
    assert body["message"].endswith('not currently held:\n{APIGroups:[""], Resources:["nodes"], Verbs:["delete"]}')
    status, body, _ = await dev.request("GET", f"{ROLES}/reader")
    assert body["rules"] == [rule(["get", "list"], [""], ["configmaps"])]


async def test_a_binding_may_grant_only_rights_held(dev: Raw) -> None:
    for name, kind in (("dev-edit", "edit"), ("dev-view", "view")):
        status, body, _ = await dev.request("POST", BINDINGS, binding(name, "ClusterRole", kind, "friend"))
        assert status == 201, body
    status, body, _ = await dev.request("POST", BINDINGS, binding("to-nodes", "ClusterRole", "node-reader", "friend"))
    assert status == 403
    assert body["message"] == (
        'rolebindings.rbac.authorization.k8s.io "to-nodes" is forbidden: user "dev" (groups=["system:authenticated"])'
        " is attempting to grant RBAC permissions not currently held:\n"
        '{APIGroups:[""], Resources:["nodes"], Verbs:["get" "list"]}'
    )
    status, body, _ = await dev.request("POST", BINDINGS, binding("to-admin", "ClusterRole", "cluster-admin", "friend"))
    assert status == 403 and "not currently held" in body["message"]
    # a missing role: the non-privileged writer learns it is missing, as from kube-apiserver
    status, body, _ = await dev.request("POST", BINDINGS, binding("to-nothing", "ClusterRole", "nope", "friend"))
    assert status == 404 and body["message"] == 'clusterroles.rbac.authorization.k8s.io "nope" not found'


async def test_bind_and_escalate_verbs_lift_the_check(
    raw: Raw, localkube: ServerThread, workdir: Path, team: None
) -> None:
    lead = Raw(localkube, localkube.kubeconfig(workdir, "lead", []))
    assert (await raw.request("POST", BINDINGS, binding("lead-admin", "ClusterRole", "admin", "lead")))[0] == 201
    status, body, _ = await lead.request("POST", BINDINGS, binding("by-lead", "ClusterRole", "node-reader", "friend"))
    assert status == 403
    grant = role(
        "delegation",
        rule(["bind"], ["rbac.authorization.k8s.io"], ["clusterroles"], resourceNames=["node-reader"]),
        rule(["escalate"], ["rbac.authorization.k8s.io"], ["roles"]),
    )
    assert (await raw.request("POST", ROLES, grant))[0] == 201
    assert (await raw.request("POST", BINDINGS, binding("lead-delegation", "Role", "delegation", "lead")))[0] == 201
    # the new binding is in force for the very next request
    status, body, _ = await lead.request("POST", BINDINGS, binding("by-lead", "ClusterRole", "node-reader", "friend"))
    assert status == 201, body
    # bind is for the named role only
    status, body, _ = await lead.request("POST", BINDINGS, binding("by-lead-2", "ClusterRole", "cluster-admin", "x"))
    assert status == 403
    status, body, _ = await lead.request("POST", ROLES, role("nodes-too", rule(["get"], [""], ["nodes"])))
    assert status == 201, body


async def test_garbage_collector_fields_may_change_without_the_rights(raw: Raw, dev: Raw) -> None:
    assert (await raw.request("POST", ROLES, role("big", rule(["*"], ["*"], ["*"]))))[0] == 201
    merge = "application/merge-patch+json"
    status, body, _ = await dev.request("PATCH", f"{ROLES}/big", {"metadata": {"finalizers": ["example.com/x"]}},
                                        content_type=merge)  # fmt: skip
    assert status == 200, body
    status, body, _ = await dev.request("PATCH", f"{ROLES}/big", {"metadata": {"labels": {"a": "b"}}},
                                        content_type=merge)  # fmt: skip
    assert status == 403 and "is attempting to grant RBAC permissions not currently held" in body["message"]


async def test_cluster_roles_and_the_aggregation_rule(raw: Raw, localkube: ServerThread, workdir: Path) -> None:
    writer = role(
        "role-writer",
        rule(["create", "update", "get"], ["rbac.authorization.k8s.io"], ["clusterroles"]),
        rule(["get"], [""], ["configmaps"]),
        kind="ClusterRole",
    )
    assert (await raw.request("POST", CLUSTER_ROLES, writer))[0] == 201
    crb = binding("ops-writer", "ClusterRole", "role-writer", "ops", namespace="")
    assert (await raw.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", crb))[0] == 201
    ops = Raw(localkube, localkube.kubeconfig(workdir, "ops", ["ops-team"]))
    held = role("cm-getter", rule(["get"], [""], ["configmaps"]), kind="ClusterRole")
    status, body, _ = await ops.request("POST", CLUSTER_ROLES, held)
    assert status == 201, body
    status, body, _ = await ops.request(
        "POST", CLUSTER_ROLES, role("secret-getter", rule(["get"], [""], ["secrets"]), kind="ClusterRole")
    )
    assert status == 403 and 'user "ops" (groups=["ops-team" "system:authenticated"])' in body["message"]
    aggregating = role(
        "aggregator",
        kind="ClusterRole",
        aggregationRule={"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]},
    )
    status, body, _ = await ops.request("POST", CLUSTER_ROLES, aggregating)
    assert status == 403 and body["message"] == (
        'clusterroles.rbac.authorization.k8s.io "aggregator" is forbidden:'
        " must have cluster-admin privileges to use the aggregationRule"
    )


def test_kubectl_as_a_namespace_admin(admin: Kubectl, as_user: UserFactory, team: None) -> None:
    dev = as_user("dev")
    dev("create", "role", "pod-reader", "--verb=get", "--resource=pods", "-n", "team")
    refused = dev("create", "role", "node-getter-2", "--verb=delete", "--resource=nodes", "-n", "team", check=False)
    assert refused.returncode == 1
    assert 'is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["nodes"]' in (
        refused.stderr
    )
    refused = dev("create", "rolebinding", "x", "--clusterrole=cluster-admin", "--user=dev", "-n", "team", check=False)
    assert "is attempting to grant RBAC permissions not currently held" in refused.stderr
    # impersonating dev, an admin is held to dev's rights
    as_dev = admin("create", "role", "y", "--verb=delete", "--resource=nodes", "-n", "team", "--as=dev", check=False)
    assert 'user "dev" (groups=["system:authenticated"]) is attempting to grant' in as_dev.stderr
    # and as itself (system:masters) it may grant anything
    admin("create", "rolebinding", "x", "--clusterrole=cluster-admin", "--user=dev", "-n", "team")
    stored = json.loads(admin("get", "rolebinding", "x", "-n", "team", "-o", "json").stdout)
    assert stored["roleRef"]["name"] == "cluster-admin"
