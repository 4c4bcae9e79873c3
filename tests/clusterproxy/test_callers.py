"""Who calls the cluster proxy, and whether they may: certificates, token reviews, access
reviews, each cached for a few seconds."""

from __future__ import annotations

from typing import Any

import pytest

from karmada.clusterproxy.access import ProxyAccess, forbidden_message, verb_of
from karmada.clusterproxy.callers import (
    AuthenticationError,
    TokenAuthenticator,
    bearer_token,
    caller_of_certificate,
)
from karmada.kube import KubeError
from karmada.tunnel.wire import Caller


def subject(*pairs: tuple[str, str]) -> dict[str, Any]:
    return {"subject": tuple(((key, value),) for key, value in pairs)}


@pytest.mark.parametrize(
    ("cert", "expected"),
    [
        (None, None),
        ({}, None),
        (subject(("organizationName", "dev")), None),  # no common name: no user
        (subject(("commonName", "alice")), Caller("alice", ("system:authenticated",))),
        (
            subject(("organizationName", "system:masters"), ("commonName", "admin"), ("organizationName", "ops")),
            Caller("admin", ("system:masters", "ops", "system:authenticated")),
        ),
    ],
)
def test_caller_of_certificate(cert: dict[str, Any] | None, expected: Caller | None) -> None:
    assert caller_of_certificate(cert) == expected


@pytest.mark.parametrize(
    ("header", "token"),
    [("Bearer abc", "abc"), ("bearer  abc ", "abc"), ("Basic abc", ""), ("", ""), ("Bearer", "")],
)
def test_bearer_token(header: str, token: str) -> None:
    assert bearer_token(header) == token


@pytest.mark.parametrize(
    ("method", "verb"),
    [("GET", "get"), ("HEAD", "get"), ("POST", "create"), ("PUT", "update"), ("PATCH", "patch"), ("DELETE", "delete")],
)
def test_verb_of(method: str, verb: str) -> None:
    assert verb_of(method) == verb


def test_forbidden_message_is_kube_apiservers() -> None:
    assert forbidden_message(Caller("bob"), "get", "member1") == (
        'clusters.cluster.karmada.io "member1" is forbidden: User "bob" cannot get resource '
        '"clusters/proxy" in API group "cluster.karmada.io" at the cluster scope'
    )


class Reviews:
    """The API server's review endpoints, counting calls."""

    def __init__(self, answer: dict[str, Any] | None = None, fail: bool = False) -> None:
        self.answer = answer or {}
        self.fail = fail
        self.sent: list[dict[str, Any]] = []

    async def create(self, _resource: Any, body: dict[str, Any], *_: Any, **__: Any) -> dict[str, Any]:
        self.sent.append(body)
        if self.fail:
            raise KubeError(0, "ConnectionError", "refused")
        return {**body, "status": self.answer}


async def test_a_token_is_reviewed_once_then_cached() -> None:
    reviews = Reviews({"authenticated": True, "user": {"username": "sa", "groups": ["g"], "extra": {"k": ["v"]}}})
    tokens = TokenAuthenticator(reviews, ttl=60)  # type: ignore[arg-type]
    first = await tokens.authenticate("t0ken")
    assert first == Caller("sa", ("g",), "", (("k", ("v",)),))
    assert await tokens.authenticate("t0ken") == first
    assert len(reviews.sent) == 1
    assert reviews.sent[0]["spec"] == {"token": "t0ken"}
    assert "t0ken" not in repr(tokens._cache)  # only a hash of it is kept


async def test_a_bad_token_is_unauthorized_and_an_unanswered_review_unavailable() -> None:
    with pytest.raises(AuthenticationError) as refused:
        await TokenAuthenticator(Reviews({"authenticated": False})).authenticate("x")  # type: ignore[arg-type]
    assert not refused.value.unavailable
    with pytest.raises(AuthenticationError) as down:
        await TokenAuthenticator(Reviews(fail=True)).authenticate("x")  # type: ignore[arg-type]
    assert down.value.unavailable


async def test_access_is_reviewed_for_the_clusters_proxy_subresource() -> None:
    reviews = Reviews({"allowed": True})
    access = ProxyAccess(reviews, ttl=60)  # type: ignore[arg-type]
    caller = Caller("alice", ("dev",), "u", (("scopes", ("a",)),))
    assert await access.allowed(caller, "member1", "POST")
    assert await access.allowed(caller, "member1", "POST")
    assert len(reviews.sent) == 1
    assert reviews.sent[0]["spec"] == {
        "user": "alice",
        "groups": ["dev"],
        "uid": "u",
        "extra": {"scopes": ["a"]},
        "resourceAttributes": {
            "group": "cluster.karmada.io",
            "version": "v1alpha1",
            "resource": "clusters",
            "subresource": "proxy",
            "name": "member1",
            "verb": "create",
        },
    }
    await access.allowed(caller, "member2", "POST")
    await access.allowed(caller, "member1", "GET")
    assert len(reviews.sent) == 3  # per cluster and verb
