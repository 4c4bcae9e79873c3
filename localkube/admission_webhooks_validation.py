"""Defaults and validation of MutatingWebhookConfiguration and ValidatingWebhookConfiguration.

The defaults are ``SetDefaults_*`` of pkg/apis/admissionregistration/v1
(``failurePolicy: Fail``, ``matchPolicy: Equivalent``, empty
``namespaceSelector``/``objectSelector``, ``timeoutSeconds: 10``, a rule's
``scope: "*"``, a service's ``port: 443``, a mutating webhook's
``reinvocationPolicy: Never``); the checks are
pkg/apis/admissionregistration/validation's, with its field paths and
sentences: fully qualified unique webhook names, rules (operations, groups,
versions, resources with their wildcard rules, scope), the enumerations,
``sideEffects`` required and ``None``/``NoneOnDryRun`` only (v1), the timeout
range, ``admissionReviewVersions``, label selectors, and exactly one of
``clientConfig.url`` (https, a host, no user, query nor fragment) or
``clientConfig.service``.

``matchConditions`` are CEL expressions, which localkube does not evaluate: a
configuration that has any is refused (422 on ``webhooks[i].matchConditions``)
rather than stored and silently called for every request.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from localkube.errors import (
    Cause,
    GoLiteral,
    field_duplicate,
    field_forbidden,
    field_invalid,
    field_required,
    field_unsupported,
)
from localkube.kinds import Context, Strategy, register
from localkube.meta import DNS1035_LABEL, DNS1035_MSG, DNS1123_SUBDOMAIN, SUBDOMAIN_MSG
from localkube.selectors import label_key_problem, label_value_problem

Obj = dict[str, Any]

OPERATIONS = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"]
SCOPES = ["*", "Cluster", "Namespaced"]
FAILURE_POLICIES = ["Fail", "Ignore"]
MATCH_POLICIES = ["Equivalent", "Exact"]
SIDE_EFFECTS = ["None", "NoneOnDryRun"]
REINVOCATION_POLICIES = ["IfNeeded", "Never"]
REVIEW_VERSIONS = ["v1", "v1beta1"]
SELECTOR_OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist"]
URL_FORM = "; desired format: https://host[/path]"


def _go_strings(values: list[Any], type_name: str = "string") -> GoLiteral:
    inner = ", ".join('"' + str(v).replace('"', '\\"') + '"' for v in values)
    return GoLiteral(f"[]{type_name}{{{inner}}}")


def set_defaults(obj: Obj, mutating: bool) -> None:
    """kube-apiserver's v1 defaults, on every webhook of a configuration."""
    for hook in obj.get("webhooks") or []:
        if not isinstance(hook, dict):
            continue
        hook.setdefault("failurePolicy", "Fail")
        hook.setdefault("matchPolicy", "Equivalent")
        if hook.get("namespaceSelector") is None:
            hook["namespaceSelector"] = {}
        if hook.get("objectSelector") is None:
            hook["objectSelector"] = {}
        hook.setdefault("timeoutSeconds", 10)
        if mutating:
            hook.setdefault("reinvocationPolicy", "Never")
        for rule in hook.get("rules") or []:
            if isinstance(rule, dict):
                rule.setdefault("scope", "*")
        service = (hook.get("clientConfig") or {}).get("service")
        if isinstance(service, dict):
            service.setdefault("port", 443)


def _fully_qualified(path: str, name: Any) -> list[Cause]:
    if not name:
        return [field_required(path)]
    name = str(name)
    if len(name) > 253 or not DNS1123_SUBDOMAIN.fullmatch(name):
        detail = "must be no more than 253 characters" if len(name) > 253 else SUBDOMAIN_MSG
        return [field_invalid(path, name, detail)]
    if len(name.split(".")) < 3:
        return [field_invalid(path, name, "should be a domain with at least three segments separated by dots")]
    return []


def _resources(path: str, resources: list[Any]) -> list[Cause]:
    causes: list[Cause] = []
    if not resources:
        causes.append(field_required(path))
    with_wildcard_sub: set[str] = set()
    sub_with_wildcard_res: set[str] = set()
    double = single = plain = False
    for i, item in enumerate(resources):
        entry = str(item)
        if not entry:
            causes.append(field_required(f"{path}[{i}]"))
            continue
        double = double or entry == "*/*"
        single = single or entry == "*"
        res, slash, sub = entry.partition("/")
        if not slash:
            plain = entry != "*"
            continue
        if res in with_wildcard_sub:
            causes.append(field_invalid(f"{path}[{i}]", entry, f"if '{res}/*' is present, must not specify {entry}"))
        if sub in sub_with_wildcard_res:
            causes.append(field_invalid(f"{path}[{i}]", entry, f"if '*/{sub}' is present, must not specify {entry}"))
        if sub == "*":
            with_wildcard_sub.add(res)
        if res == "*":
            sub_with_wildcard_res.add(sub)
    if len(resources) > 1 and double:
        causes.append(
            field_invalid(path, _go_strings(resources), "if '*/*' is present, must not specify other resources")
        )
    if single and plain:
        causes.append(
            field_invalid(
                path, _go_strings(resources), "if '*' is present, must not specify other resources without subresources"
            )
        )
    return causes


def _rule(path: str, rule: Obj) -> list[Cause]:
    causes: list[Cause] = []
    operations = rule.get("operations") or []
    if not operations:
        causes.append(field_required(f"{path}.operations"))
    if len(operations) > 1 and "*" in operations:
        causes.append(
            field_invalid(
                f"{path}.operations",
                _go_strings(operations, "admissionregistration.OperationType"),
                "if '*' is present, must not specify other operations",
            )
        )
    for i, operation in enumerate(operations):
        if operation not in OPERATIONS:
            causes.append(field_unsupported(f"{path}.operations[{i}]", operation, OPERATIONS))
    groups = rule.get("apiGroups") or []
    if not groups:
        causes.append(field_required(f"{path}.apiGroups"))
    if len(groups) > 1 and "*" in groups:
        causes.append(
            field_invalid(
                f"{path}.apiGroups", _go_strings(groups), "if '*' is present, must not specify other API groups"
            )
        )
    versions = rule.get("apiVersions") or []
    if not versions:
        causes.append(field_required(f"{path}.apiVersions"))
    if len(versions) > 1 and "*" in versions:
        causes.append(
            field_invalid(
                f"{path}.apiVersions", _go_strings(versions), "if '*' is present, must not specify other API versions"
            )
        )
    for i, version in enumerate(versions):
        if not version:
            causes.append(field_required(f"{path}.apiVersions[{i}]"))
    causes += _resources(f"{path}.resources", list(rule.get("resources") or []))
    scope = rule.get("scope")
    if scope is not None and scope not in SCOPES:
        causes.append(field_unsupported(f"{path}.scope", scope, SCOPES))
    return causes


def _selector(path: str, selector: Any) -> list[Cause]:
    """``metav1validation.ValidateLabelSelector``."""
    if not isinstance(selector, dict):
        return []
    causes: list[Cause] = []
    for i, expression in enumerate(selector.get("matchExpressions") or []):
        if not isinstance(expression, dict):
            continue
        at = f"{path}.matchExpressions[{i}]"
        operator, values = expression.get("operator", ""), expression.get("values") or []
        if operator in ("In", "NotIn") and not values:
            causes.append(field_required(f"{at}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif operator in ("Exists", "DoesNotExist") and values:
            causes.append(
                field_forbidden(f"{at}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
            )
        elif operator not in SELECTOR_OPERATORS:
            causes.append(field_invalid(f"{at}.operator", operator, "not a valid selector operator"))
        problem = label_key_problem(str(expression.get("key", "")))
        if problem:
            causes.append(field_invalid(f"{at}.key", expression.get("key", ""), problem))
        for j, value in enumerate(values):
            value_problem = label_value_problem(str(value))
            if value_problem:
                causes.append(field_invalid(f"{at}.values[{j}]", value, value_problem))
    for key, value in (selector.get("matchLabels") or {}).items():
        problem = label_key_problem(str(key))
        if problem:
            causes.append(field_invalid(f"{path}.matchLabels", key, problem))
        value_problem = label_value_problem(str(value))
        if value_problem:
            causes.append(field_invalid(f"{path}.matchLabels", value, value_problem))
    return causes


def _url(path: str, url: str) -> list[Cause]:
    """``webhook.ValidateWebhookURL`` with https required."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        return [field_required(path, f"url must be a valid URL: {exc}{URL_FORM}")]
    causes: list[Cause] = []
    if parts.scheme != "https":
        causes.append(field_invalid(path, parts.scheme, "'https' is the only allowed URL scheme" + URL_FORM))
    if not parts.netloc.rpartition("@")[2]:
        causes.append(field_invalid(path, "", "host must be specified" + URL_FORM))
    if "@" in parts.netloc:
        causes.append(
            field_invalid(path, parts.netloc.rpartition("@")[0], "user information is not permitted in the URL")
        )
    if parts.fragment:
        causes.append(field_invalid(path, parts.fragment, "fragments are not permitted in the URL"))
    if parts.query:
        causes.append(field_invalid(path, parts.query, "query parameters are not permitted in the URL"))
    return causes


_SEGMENT = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def _service(path: str, service: Obj) -> list[Cause]:
    """``webhook.ValidateWebhookService``."""
    causes: list[Cause] = []
    if not service.get("name"):
        causes.append(field_required(f"{path}.name", "service name is required"))
    if not service.get("namespace"):
        causes.append(field_required(f"{path}.namespace", "service namespace is required"))
    port = service.get("port", 443)
    if not isinstance(port, int) or not 1 <= port <= 65535:
        causes.append(field_invalid(f"{path}.port", port, "port is not valid: must be between 1 and 65535, inclusive"))
    url_path = service.get("path")
    if url_path is None or url_path in ("", "/"):
        return causes
    url_path = str(url_path)
    if url_path == "//":
        return [*causes, field_invalid(f"{path}.path", url_path, "segment[0] may not be empty")]
    if not url_path.startswith("/"):
        causes.append(field_invalid(f"{path}.path", url_path, "must start with a '/'"))
    steps = url_path.strip("/").split("/")
    for i, step in enumerate(steps):
        if not step:
            causes.append(field_invalid(f"{path}.path", url_path, f"segment[{i}] may not be empty"))
        elif not _SEGMENT.fullmatch(step):
            causes.append(field_invalid(f"{path}.path", url_path, f"segment[{i}]: {SUBDOMAIN_MSG}"))
    return causes


def _review_versions(path: str, versions: list[Any]) -> list[Cause]:
    if not versions:
        return [field_required(path, f"must specify one of {', '.join(REVIEW_VERSIONS)}")]
    causes: list[Cause] = []
    seen: set[str] = set()
    for i, item in enumerate(versions):
        version = str(item)
        if version in seen:
            causes.append(field_invalid(f"{path}[{i}]", version, "duplicate version"))
            continue
        seen.add(version)
        if len(version) > 63 or not DNS1035_LABEL.fullmatch(version):
            causes.append(field_invalid(f"{path}[{i}]", version, DNS1035_MSG))
    if not seen & set(REVIEW_VERSIONS):
        causes.append(
            field_invalid(path, _go_strings(versions), f"must include at least one of {', '.join(REVIEW_VERSIONS)}")
        )
    return causes


def _webhook(path: str, hook: Obj, mutating: bool) -> list[Cause]:
    causes = _fully_qualified(f"{path}.name", hook.get("name"))
    for i, rule in enumerate(hook.get("rules") or []):
        if isinstance(rule, dict):
            causes += _rule(f"{path}.rules[{i}]", rule)
    for key, allowed in (("failurePolicy", FAILURE_POLICIES), ("matchPolicy", MATCH_POLICIES)):
        if hook.get(key) is not None and hook[key] not in allowed:
            causes.append(field_unsupported(f"{path}.{key}", hook[key], allowed))
    side_effects = hook.get("sideEffects")
    if side_effects is None:
        causes.append(field_required(f"{path}.sideEffects", f"must specify one of {', '.join(SIDE_EFFECTS)}"))
    elif side_effects not in SIDE_EFFECTS:
        causes.append(field_unsupported(f"{path}.sideEffects", side_effects, SIDE_EFFECTS))
    timeout = hook.get("timeoutSeconds")
    if timeout is not None and (not isinstance(timeout, int) or not 1 <= timeout <= 30):
        causes.append(
            field_invalid(f"{path}.timeoutSeconds", timeout, "the timeout value must be between 1 and 30 seconds")
        )
    causes += _selector(f"{path}.namespaceSelector", hook.get("namespaceSelector"))
    causes += _selector(f"{path}.objectSelector", hook.get("objectSelector"))
    policy = hook.get("reinvocationPolicy")
    if mutating and policy is not None and policy not in REINVOCATION_POLICIES:
        causes.append(field_unsupported(f"{path}.reinvocationPolicy", policy, REINVOCATION_POLICIES))
    client = hook.get("clientConfig") or {}
    url, service = client.get("url"), client.get("service")
    if (url is None) == (service is None):
        causes.append(field_required(f"{path}.clientConfig", "exactly one of url or service is required"))
    elif url is not None:
        causes += _url(f"{path}.clientConfig.url", str(url))
    elif isinstance(service, dict):
        causes += _service(f"{path}.clientConfig.service", service)
    if hook.get("matchConditions"):
        causes.append(
            field_forbidden(
                f"{path}.matchConditions", "matchConditions (CEL expressions) are not supported by localkube"
            )
        )
    return causes


def validate_configuration(obj: Obj, mutating: bool) -> list[Cause]:
    """The causes that make a webhook configuration invalid; empty when valid."""
    causes: list[Cause] = []
    names: set[str] = set()
    for i, hook in enumerate(obj.get("webhooks") or []):
        if not isinstance(hook, dict):
            continue
        path = f"webhooks[{i}]"
        causes += _webhook(path, hook, mutating)
        causes += _review_versions(f"{path}.admissionReviewVersions", list(hook.get("admissionReviewVersions") or []))
        name = hook.get("name")
        if name:
            if name in names:
                causes.append(field_duplicate(f"{path}.name", name))
            names.add(name)
    return causes


class WebhookConfigurationStrategy(Strategy):
    """Defaults on every write, then the configuration's validation."""

    def __init__(self, mutating: bool) -> None:
        self.mutating = mutating

    def prepare_create(self, obj: Obj, context: Context) -> None:
        set_defaults(obj, self.mutating)

    def prepare_update(self, obj: Obj, old: Obj, context: Context) -> None:
        set_defaults(obj, self.mutating)

    def validate(self, obj: Obj) -> list[Cause]:
        return validate_configuration(obj, self.mutating)


register("MutatingWebhookConfiguration", WebhookConfigurationStrategy(mutating=True))
register("ValidatingWebhookConfiguration", WebhookConfigurationStrategy(mutating=False))

__all__ = ["set_defaults", "validate_configuration"]
