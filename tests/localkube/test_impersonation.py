"""Impersonation (``kubectl --as``, ``--as-group``, ``Impersonate-*`` headers),
authorized with the ``impersonate`` verb as kube-apiserver does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import UserFactory
from tests.servers import Kubectl, Raw, ServerThread

IMPERSONATOR_ROLE = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: impersonate-jane}
rules:
- apiGroups: [""]
  resources: [users]
  resourceNames: [jane]
  verbs: [impersonate]
- apiGroups: [""]
  resources: [serviceaccounts]
  resourceNames: [robot]
  verbs: [impersonate]
- apiGroups: [authentication.k8s.io]
  resources: [userextras/scopes]
  verbs: [impersonate]
"""


def whoami(kubectl: Kubectl, *flags: str) -> dict[str, object]:
    out = kubectl("auth", "whoami", "-o", "json", *flags).stdout
    info: dict[str, object] = json.loads(out)["status"]["userInfo"]
    return info


def test_as_user_gets_that_users_rights(admin: Kubectl) -> None:
    denied = admin("get", "pods", "--as=jane", check=False)
    assert denied.returncode == 1
    assert 'User "jane" cannot list resource "pods" in API group "" in the namespace "default"' in denied.stderr
    assert admin("auth", "can-i", "list", "pods", "--as=jane", check=False).stdout.strip() == "no"
    admin("create", "rolebinding", "jane-view", "--clusterrole=view", "--user=jane")
    assert admin("get", "pods", "--as=jane").returncode == 0
    assert admin("auth", "can-i", "list", "pods", "--as=jane").stdout.strip() == "yes"
    assert admin("auth", "can-i", "create", "pods", "--as=jane", check=False).stdout.strip() == "no"
    # the impersonated user is authenticated and nothing more: not a master
    assert whoami(admin, "--as=jane") == {"username": "jane", "groups": ["system:authenticated"]}


def test_as_group_adds_the_groups_rights(admin: Kubectl) -> None:
    admin("create", "rolebinding", "auditors-view", "--clusterrole=view", "--group=auditors", "-n", "kube-system")
    ask = ("auth", "can-i", "list", "configmaps", "-n", "kube-system", "--as=ann")
    assert admin(*ask, check=False).stdout.strip() == "no"
    assert admin(*ask, "--as-group=auditors").stdout.strip() == "yes"
    info = whoami(admin, "--as=ann", "--as-group=auditors", "--as-group=other")
    assert info["groups"] == ["auditors", "other", "system:authenticated"]
    # a group list naming system:unauthenticated is taken as given: no system:authenticated
    unauthenticated = ("--as=ann", "--as-group=system:unauthenticated")
    assert admin("get", "--raw", "/version", *unauthenticated).returncode == 0
    discovery = admin("get", "--raw", "/apis", *unauthenticated, check=False)
    assert 'User \\"ann\\" cannot get path \\"/apis\\"' in discovery.stderr or "Forbidden" in discovery.stderr


def test_a_user_without_the_impersonate_verb_is_refused(admin: Kubectl, as_user: UserFactory) -> None:
    bob = as_user("bob")
    refused = bob("get", "pods", "--as=jane", check=False)
    assert refused.returncode == 1
    assert (
        'users "jane" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope'
        in refused.stderr
    )
    admin("apply", "-f", "-", stdin=IMPERSONATOR_ROLE)
    admin("create", "clusterrolebinding", "bob-impersonates", "--clusterrole=impersonate-jane", "--user=bob")
    assert whoami(bob, "--as=jane")["username"] == "jane"
    # resourceNames are honoured: another user, or any group, stays refused
    other = bob("get", "pods", "--as=joe", check=False)
    assert 'users "joe" is forbidden: User "bob" cannot impersonate resource "users"' in other.stderr
    group = bob("get", "pods", "--as=jane", "--as-group=system:masters", check=False)
    assert 'groups "system:masters" is forbidden: User "bob" cannot impersonate resource "groups"' in group.stderr
    # bob's own rights do not leak into the impersonated request
    assert bob("auth", "can-i", "impersonate", "users/jane").stdout.strip() == "yes"
    assert bob("auth", "can-i", "impersonate", "users/jane", "--as=jane", check=False).stdout.strip() == "no"


def test_service_account_impersonation_is_checked_in_its_namespace(admin: Kubectl, as_user: UserFactory) -> None:
    bob = as_user("bob")
    admin("apply", "-f", "-", stdin=IMPERSONATOR_ROLE)
    admin("create", "clusterrolebinding", "bob-impersonates-sa", "--clusterrole=impersonate-jane", "--user=bob")
    info = whoami(bob, "--as=system:serviceaccount:default:robot")
    assert info == {
        "username": "system:serviceaccount:default:robot",
        "groups": ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"],
    }
    refused = bob("get", "pods", "--as=system:serviceaccount:kube-system:other", check=False)
    assert (
        'serviceaccounts "other" is forbidden: User "bob" cannot impersonate resource "serviceaccounts"'
        ' in API group "" in the namespace "kube-system"' in refused.stderr
    )
    # not a valid service account user name: impersonated as a plain user (and refused as one)
    plain = bob("get", "pods", "--as=system:serviceaccount:default:robot:x", check=False)
    assert 'users "system:serviceaccount:default:robot:x" is forbidden' in plain.stderr


async def test_headers_for_uid_and_extras(raw: Raw, admin: Kubectl, localkube: ServerThread, workdir: Path) -> None:
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    path = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
    user, uid = ("Impersonate-User", "jane"), ("Impersonate-Uid", "1234")
    extras = [
        ("Impersonate-Extra-Scopes", "view"),
        ("Impersonate-Extra-Scopes", "edit"),
        ("impersonate-extra-Example.com%2Fteam", "blue"),
    ]
    status, body, _ = await raw.request("POST", path, review, extra_headers=[user, uid, *extras])
    assert status == 201, body
    assert body["status"]["userInfo"] == {
        "username": "jane",
        "uid": "1234",
        "groups": ["system:authenticated"],
        "extra": {"example.com/team": ["blue"], "scopes": ["view", "edit"]},
    }
    admin("apply", "-f", "-", stdin=IMPERSONATOR_ROLE)
    admin("create", "clusterrolebinding", "carol-impersonates", "--clusterrole=impersonate-jane", "--user=carol")
    carol = Raw(localkube, localkube.kubeconfig(workdir, "carol", []))
    status, body, _ = await carol.request("POST", path, review, extra_headers=[user, *extras[:2]])
    assert status == 201 and body["status"]["userInfo"]["extra"] == {"scopes": ["view", "edit"]}
    status, body, _ = await carol.request("POST", path, review, extra_headers=[user, extras[2]])
    assert status == 403
    assert body["message"] == (
        'userextras.authentication.k8s.io "blue" is forbidden: User "carol" cannot impersonate resource'
        ' "userextras/example.com/team" in API group "authentication.k8s.io" at the cluster scope'
    )
    status, body, _ = await carol.request("POST", path, review, extra_headers=[user, uid])
    assert status == 403 and body["reason"] == "Forbidden"
    assert body["message"] == (
        'uids.authentication.k8s.io "1234" is forbidden: User "carol" cannot impersonate resource "uids"'
        ' in API group "authentication.k8s.io" at the cluster scope'
    )
    assert body["details"] == {"name": "1234", "group": "authentication.k8s.io", "kind": "uids"}


@pytest.mark.parametrize(
    ("headers", "listed"),
    [
        ([("Impersonate-Group", "admins")], "{Group  admins    }"),
        ([("Impersonate-Uid", "7")], "{UID  7  authentication.k8s.io/v1  }"),
        (
            [("Impersonate-Group", "a"), ("Impersonate-Extra-Scopes", "x")],
            "{Group  a    } {UserExtra  x  authentication.k8s.io/v1  scopes}",
        ),
    ],
)
async def test_impersonating_without_a_user_is_a_bad_request(
    raw: Raw, headers: list[tuple[str, str]], listed: str
) -> None:
    status, body, _ = await raw.request("GET", "/api/v1/namespaces", extra_headers=headers)
    assert status == 400 and body["reason"] == "BadRequest"
    assert body["message"] == f"requested [{listed}] without impersonating a user"


async def test_impersonating_anonymous(raw: Raw) -> None:
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    status, body, _ = await raw.request(
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        review,
        extra_headers=[("Impersonate-User", "system:anonymous")],
    )
    # system:anonymous may not create reviews: the request really runs as it
    assert status == 403
    assert 'User "system:anonymous" cannot create resource "selfsubjectreviews"' in body["message"]
    status, body, _ = await raw.request(
        "GET",
        "/api/v1/namespaces/kube-public/configmaps/cluster-info",
        extra_headers=[("Impersonate-User", "system:anonymous")],
    )
    assert status == 200
