"""The review APIs: access reviews (self, local, subject), rules reviews, token and self-subject reviews."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from localkube.auth import Attributes, Identity
from localkube.errors import Cause, bad_request, invalid
from localkube.resources import ResourceType

if TYPE_CHECKING:
    from localkube.authentication import Authenticator
    from localkube.rbac import Authorizer

Obj = dict[str, Any]


def _attributes(spec: Obj, kind: str) -> Attributes:
    resource = spec.get("resourceAttributes")
    non_resource = spec.get("nonResourceAttributes")
    if bool(resource) == bool(non_resource):
        raise invalid(
            kind,
            "authorization.k8s.io",
            "",
            [
                Cause(
                    "FieldValueRequired",
                    "Required value: exactly one of nonResourceAttributes or resourceAttributes must be specified",
                    "spec.resourceAttributes",
                )
            ],
        )
    if resource:
        return Attributes(
            verb=resource.get("verb", ""),
            resource_request=True,
            group=resource.get("group", ""),
            resource=resource.get("resource", ""),
            subresource=resource.get("subresource", ""),
            namespace=resource.get("namespace", ""),
            name=resource.get("name", ""),
        )
    assert non_resource is not None
    return Attributes(verb=non_resource.get("verb", ""), resource_request=False, path=non_resource.get("path", ""))


def _decision(authorizer: Authorizer, identity: Identity, attrs: Attributes) -> Obj:
    allowed, reason = authorizer.decide(identity, attrs)
    status: Obj = {"allowed": allowed}
    if reason:
        status["reason"] = reason
    return status


def _rules(authorizer: Authorizer, identity: Identity, namespace: str) -> Obj:
    from localkube.auth import MASTERS

    if MASTERS in identity.groups:
        return {
            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
            "incomplete": False,
        }
    resource_rules, non_resource_rules = [], []
    for rule, _ in authorizer.rules_for(identity, namespace):
        if rule.get("nonResourceURLs"):
            non_resource_rules.append({"verbs": rule.get("verbs", []), "nonResourceURLs": rule["nonResourceURLs"]})
        else:
            entry = {k: rule[k] for k in ("verbs", "apiGroups", "resources", "resourceNames") if rule.get(k)}
            resource_rules.append(entry)
    return {"resourceRules": resource_rules, "nonResourceRules": non_resource_rules, "incomplete": False}


def review(
    authorizer: Authorizer,
    authenticator: Authenticator,
    rt: ResourceType,
    namespace: str,
    body: Obj,
    identity: Identity,
) -> Obj:
    """Evaluate one review object; returns it with ``status`` filled."""
    spec: Obj = body.get("spec") or {}
    result: Obj = {"kind": rt.kind, "apiVersion": rt.api_version, "metadata": {"creationTimestamp": None}, "spec": spec}
    if rt.kind == "SelfSubjectAccessReview":
        result["status"] = _decision(authorizer, identity, _attributes(spec, rt.kind))
    elif rt.kind in ("SubjectAccessReview", "LocalSubjectAccessReview"):
        if not spec.get("user") and not spec.get("groups"):
            raise invalid(
                rt.kind,
                "authorization.k8s.io",
                "",
                [
                    Cause(
                        "FieldValueRequired",
                        "Required value: at least one of user or group must be specified",
                        "spec.user",
                    )
                ],
            )
        attrs = _attributes(spec, rt.kind)
        if rt.kind == "LocalSubjectAccessReview":
            resource = spec.get("resourceAttributes") or {}
            if resource.get("namespace") != namespace:
                raise invalid(
                    rt.kind,
                    "authorization.k8s.io",
                    "",
                    [
                        Cause(
                            "FieldValueInvalid",
                            "Invalid value: spec.resourceAttributes.namespace must match metadata.namespace",
                            "spec.resourceAttributes.namespace",
                        )
                    ],
                )
            result["metadata"]["namespace"] = namespace
        subject = Identity(
            spec.get("user", ""), list(spec.get("groups") or []), spec.get("uid", ""), spec.get("extra") or {}
        )
        result["status"] = _decision(authorizer, subject, attrs)
    elif rt.kind == "SelfSubjectRulesReview":
        result["status"] = _rules(authorizer, identity, spec.get("namespace", ""))
    elif rt.kind == "SelfSubjectReview":
        result["status"] = {"userInfo": identity.to_user_info()}
        result.pop("spec", None)
    elif rt.kind == "TokenReview":
        token = spec.get("token", "")
        if not token:
            raise bad_request("token must be specified")
        found = authenticator.token_identity(token)
        status: Obj = {"authenticated": found is not None}
        if found is not None:
            status["user"] = found.to_user_info()
            status["audiences"] = spec.get("audiences") or ["https://kubernetes.default.svc.cluster.local"]
        else:
            status["error"] = "invalid bearer token"
        result["status"] = status
    return result
