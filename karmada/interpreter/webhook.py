"""Interpreter webhooks as data: which hook answers, what to send, what the answer means.

Karmada calls a user's interpreter webhook (a ResourceInterpreterWebhookConfiguration)
for the operations its rules register. This module holds everything of that
exchange but the HTTP: the hooks of a set of configurations (sorted by
configuration name, each identified as ``<configuration>/<webhook>``), the
first hook matching a kind and an operation (by that identifier, as Karmada
picks), the ``ResourceInterpreterContext`` request body, the checks of the
response and its translation (replicas, requirements, JSON patches,
dependencies, raw status, health). The HTTP call lives in
:mod:`karmada.interpreter_webhooks`; nothing here does I/O.

Errors are :class:`WebhookError` (a ``ValueError``, as every interpreter
failure), worded as Karmada's: ``Internal error occurred: failed calling
webhook "<config>/<hook>": <reason>``.
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from karmada.interpreter.native import Operation
from karmada.overrides.jsonpatch import Operation as PatchOperation
from karmada.overrides.jsonpatch import PatchError
from karmada.overrides.jsonpatch import apply_patch as _apply_operations

if TYPE_CHECKING:  # the API models load pydantic, which an agent never needs (its memory)
    from karmada.api.binding import ReplicaRequirements
    from karmada.api.interpreter import DependentObjectReference

Obj = dict[str, Any]
WILDCARD = "*"
SUPPORTED_VERSIONS = ("v1alpha1",)
DEFAULT_TIMEOUT_SECONDS = 10
DEFAULT_SERVICE_PORT = 443
PATCH_TYPE_JSON_PATCH = "JSONPatch"
# karmada.api.interpreter.CONFIG_GROUP_VERSION, written out: that module loads pydantic
CONTEXT_API_VERSION = "config.karmada.io/v1alpha1"
CONTEXT_KIND = "ResourceInterpreterContext"
INVALID = "received invalid webhook response: "


class WebhookError(ValueError):
    """An interpreter webhook could not answer (the object it interprets fails, alone)."""


@dataclass(frozen=True)
class InterpreterHook:
    """One webhook of one ResourceInterpreterWebhookConfiguration."""

    uid: str  # <configuration>/<webhook>, the order hooks are chosen in
    configuration: str
    name: str
    client_config: Mapping[str, Any] = field(default_factory=dict)
    rules: tuple[Mapping[str, Any], ...] = ()
    timeout_seconds: int = DEFAULT_TIMEOUT_SECONDS
    context_versions: tuple[str, ...] = ()

    def error(self, reason: str) -> WebhookError:
        """The failure of a call to this hook, as Karmada words it."""
        return WebhookError(f'Internal error occurred: failed calling webhook "{self.uid}": {reason}')


def hooks_of(configurations: Iterable[Mapping[str, Any]]) -> list[InterpreterHook]:
    """The hooks of these configurations, by configuration name, then in their order."""
    hooks: list[InterpreterHook] = []
    for configuration in sorted(configurations, key=lambda c: str((c.get("metadata") or {}).get("name", ""))):
        config_name = str((configuration.get("metadata") or {}).get("name", ""))
        for webhook in configuration.get("webhooks") or []:
            if not isinstance(webhook, Mapping):
                continue
            name = str(webhook.get("name", ""))
            timeout = webhook.get("timeoutSeconds")
            if not isinstance(timeout, int) or timeout <= 0:
                timeout = DEFAULT_TIMEOUT_SECONDS
            hooks.append(
                InterpreterHook(
                    uid=f"{config_name}/{name}",
                    configuration=config_name,
                    name=name,
                    client_config=dict(webhook.get("clientConfig") or {}),
                    rules=tuple(r for r in webhook.get("rules") or [] if isinstance(r, Mapping)),
                    timeout_seconds=timeout,
                    context_versions=tuple(str(v) for v in webhook.get("interpreterContextVersions") or []),
                )
            )
    return hooks


def split_api_version(api_version: str) -> tuple[str, str]:
    """``(group, version)`` of an apiVersion (the core group is ``""``)."""
    group, _, version = api_version.rpartition("/")
    return group, version


def _exact_or_wildcard(value: str, items: Any) -> bool:
    return any(item in (WILDCARD, value) for item in items or [])


def rule_matches(rule: Mapping[str, Any], api_version: str, kind: str, operation: Operation) -> bool:
    """Whether one ``RuleWithOperations`` covers the kind and the operation."""
    group, version = split_api_version(api_version)
    return (
        _exact_or_wildcard(operation.value, rule.get("operations"))
        and _exact_or_wildcard(group, rule.get("apiGroups"))
        and _exact_or_wildcard(version, rule.get("apiVersions"))
        and _exact_or_wildcard(kind, rule.get("kinds"))
    )


def first_relevant(
    hooks: Sequence[InterpreterHook], api_version: str, kind: str, operation: Operation
) -> InterpreterHook | None:
    """The hook Karmada calls for the kind and operation: the first matching one by identifier."""
    relevant = [h for h in hooks if any(rule_matches(r, api_version, kind, operation) for r in h.rules)]
    return min(relevant, key=lambda h: h.uid) if relevant else None


@dataclass(frozen=True)
class Attributes:
    """What one interpreter call is about."""

    operation: Operation
    object: Mapping[str, Any]
    observed: Mapping[str, Any] | None = None
    replicas: int = 0
    aggregated_status: Sequence[Mapping[str, Any]] = ()


def context_request(hook: InterpreterHook, attributes: Attributes, uid: str) -> Obj:
    """The ``ResourceInterpreterContext`` to POST to the hook (in the first version it accepts that we speak)."""
    if not any(v in SUPPORTED_VERSIONS for v in hook.context_versions):
        raise hook.error(
            "could not create ResourceInterpreterContext objects: "
            "webhook does not accept known ResourceInterpreterContext versions (v1alpha1)"
        )
    obj = attributes.object
    meta = obj.get("metadata") or {}
    group, version = split_api_version(str(obj.get("apiVersion", "")))
    request: Obj = {
        "uid": uid,
        "kind": {"group": group, "version": version, "kind": str(obj.get("kind", ""))},
        "name": str(meta.get("name", "")),
        "operation": attributes.operation.value,
        "object": copy.deepcopy(dict(obj)),
        "replicas": attributes.replicas,  # Karmada always sends it (0 but for ReviseReplica)
    }
    if meta.get("namespace"):
        request["namespace"] = str(meta["namespace"])
    if attributes.observed is not None:
        request["observedObject"] = copy.deepcopy(dict(attributes.observed))
    if attributes.aggregated_status:
        request["aggregatedStatus"] = [copy.deepcopy(dict(item)) for item in attributes.aggregated_status]
    return {"apiVersion": CONTEXT_API_VERSION, "kind": CONTEXT_KIND, "request": request}


@dataclass(frozen=True)
class Response:
    """A verified, successful webhook response (the fields its operation needs)."""

    replicas: int = 0
    replica_requirements: ReplicaRequirements | None = None
    dependencies: tuple[DependentObjectReference, ...] = ()
    patch: tuple[PatchOperation, ...] = ()
    raw_status: Any = None
    healthy: bool = False


def _patch_of(hook: InterpreterHook, response: Mapping[str, Any]) -> tuple[PatchOperation, ...]:
    patch, patch_type = response.get("patch"), response.get("patchType")
    if not patch and patch_type is None:
        return ()
    if patch_type is None:
        raise hook.error("received invalid webhook response: webhook returned nil response.patchType")
    if not patch:
        raise hook.error("received invalid webhook response: webhook returned empty response.patch")
    if patch_type != PATCH_TYPE_JSON_PATCH:
        raise hook.error(INVALID + f'webhook returned invalid response.patchType of "{patch_type}"')
    try:
        operations = json.loads(base64.b64decode(str(patch), validate=True))
    except (binascii.Error, ValueError) as exc:
        raise hook.error(INVALID + f"response.patch is not a base64 JSON patch: {exc}") from None
    if not isinstance(operations, list) or not all(isinstance(o, dict) for o in operations):
        raise hook.error("received invalid webhook response: response.patch is not a list of operations")
    return tuple(PatchOperation(str(o.get("op", "")), str(o.get("path", "")), o.get("value")) for o in operations)


def _dependency_errors(dependencies: Sequence[Any]) -> list[str]:
    # Karmada's VerifyDependencies, field by field
    errors = []
    for i, dependency in enumerate(dependencies):
        path = f"dependencies[{i}]"
        if not isinstance(dependency, Mapping):
            errors.append(f"{path}: Invalid value: {dependency!r}: not an object")
            continue
        if not dependency.get("apiVersion"):
            errors.append(f'{path}.apiVersion: Invalid value: "": missing required apiVersion')
        if not dependency.get("kind"):
            errors.append(f'{path}.kind: Invalid value: "": missing required kind')
        if not dependency.get("name") and dependency.get("labelSelector") is None:
            errors.append(
                f"{path}: Invalid value: {json.dumps(dependency)}: "
                "dependency can not leave name and labelSelector all empty"
            )
    return errors


def verify_response(hook: InterpreterHook, uid: str, operation: Operation, body: Any) -> Response:
    """The response of a ``ResourceInterpreterContext`` call, checked as Karmada checks it."""
    response = body.get("response") if isinstance(body, Mapping) else None
    if not isinstance(response, Mapping):
        raise hook.error(INVALID + "webhook response was absent")
    if response.get("uid") != uid:
        raise hook.error(INVALID + f'expected response.uid "{uid}", got "{response.get("uid", "")}"')
    if not response.get("successful"):
        status = response.get("status")
        if not isinstance(status, Mapping):
            raise hook.error(INVALID + "webhook require response.status when response.successful is false")
        raise hook.error(
            f"webhook call failed, get status code: {int(status.get('code') or 0)}, msg: {status.get('message', '')}"
        )
    if operation is Operation.INTERPRET_REPLICA:
        replicas = response.get("replicas")
        if replicas is None:
            raise hook.error(INVALID + "webhook returned nil response.replicas")
        if isinstance(replicas, bool) or not isinstance(replicas, int):
            raise hook.error(INVALID + f"response.replicas is {type(replicas).__name__}, not an integer")
        requirements = response.get("replicaRequirements")
        from karmada.api.binding import ReplicaRequirements

        try:
            parsed = ReplicaRequirements.from_dict(requirements) if isinstance(requirements, Mapping) else None
        except ValueError as exc:
            raise hook.error(INVALID + f"response.replicaRequirements: {exc}") from None
        return Response(replicas=replicas, replica_requirements=parsed)
    if operation is Operation.INTERPRET_DEPENDENCY:
        dependencies = response.get("dependencies") or []
        if not isinstance(dependencies, list):
            raise hook.error(INVALID + "response.dependencies is not a list")
        errors = _dependency_errors(dependencies)
        if errors:
            raise hook.error(INVALID + (errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]"))
        from karmada.api.interpreter import DependentObjectReference

        try:
            return Response(dependencies=tuple(DependentObjectReference.from_dict(d) for d in dependencies))
        except ValueError as exc:
            raise hook.error(INVALID + f"response.dependencies: {exc}") from None
    if operation in (Operation.REVISE_REPLICA, Operation.RETAIN, Operation.AGGREGATE_STATUS):
        return Response(patch=_patch_of(hook, response))
    if operation is Operation.INTERPRET_STATUS:
        if response.get("rawStatus") is None:
            raise hook.error(INVALID + "webhook returned nill response.rawStatus")
        return Response(raw_status=response["rawStatus"])
    if operation is Operation.INTERPRET_HEALTH:
        healthy = response.get("healthy")
        if healthy is None:
            raise hook.error(INVALID + "webhook returned nil response.healthy")
        if not isinstance(healthy, bool):
            raise hook.error(INVALID + f"response.healthy is {type(healthy).__name__}, not a boolean")
        return Response(healthy=healthy)
    raise hook.error(INVALID + f"input wrong operation type: {operation.value}")


def patched(hook: InterpreterHook, obj: Mapping[str, Any], response: Response) -> Obj:
    """The object with the response's JSON patch applied (the object itself when there is none)."""
    if not response.patch:
        return copy.deepcopy(dict(obj))
    try:
        result = _apply_operations(copy.deepcopy(dict(obj)), response.patch)
    except PatchError as exc:
        raise hook.error(f"applying the webhook's patch: {exc}") from None
    if not isinstance(result, dict):
        raise hook.error("applying the webhook's patch: the patched document is not an object")
    return result


def service_url(service_ref: Mapping[str, Any], service: Mapping[str, Any] | None) -> str:
    """Where a ``clientConfig.service`` points, resolved as Karmada resolves it: the Service's
    ClusterIP (or ExternalName) when the control plane has it, else the cluster DNS name."""
    name, namespace = str(service_ref.get("name", "")), str(service_ref.get("namespace", ""))
    port = int(service_ref.get("port") or DEFAULT_SERVICE_PORT)
    path = str(service_ref.get("path") or "")
    if path and not path.startswith("/"):
        path = "/" + path
    if service is None:
        return f"https://{name}.{namespace}.svc:{port}{path}"
    spec = service.get("spec") or {}
    kind = spec.get("type") or "ClusterIP"
    if kind == "ClusterIP" and spec.get("clusterIP") == "None":
        raise ValueError('cannot route to service with ClusterIP "None"')
    if kind in ("ClusterIP", "LoadBalancer", "NodePort"):
        if not any(int(p.get("port") or 0) == port for p in spec.get("ports") or []):
            raise ValueError(f'no service port {port} found for service "{name}"')
        host = str(spec.get("clusterIP", ""))
        host = f"[{host}]" if ":" in host else host
        return f"https://{host}:{port}{path}"
    if kind == "ExternalName":
        return f"https://{spec.get('externalName', '')}:{port}{path}"
    raise ValueError(f'unsupported service type "{kind}"')
