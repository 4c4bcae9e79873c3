"""Dynamic admission: the MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins.

kube-apiserver calls the webhooks of ``admissionregistration.k8s.io/v1``
MutatingWebhookConfigurations, then of ValidatingWebhookConfigurations, from
within a write: mutating ones after decoding, defaulting and the built-in
mutating plugins (:mod:`localkube.admission`), before validation; validating
ones after validation and the built-in validating plugins, just before the
object is stored. localkube does the same, in the same places of
:class:`localkube.api.ResourceAPI`'s synchronous write pipeline: the server runs
each write of a client in a greenlet (:meth:`WebhookAdmission.run`); at a hook
point that has webhooks to call the greenlet hands the call to the server's
coroutine, which awaits the webhooks on the event loop (other requests go on
meanwhile, as they do while kube-apiserver waits on a webhook), and the write
resumes with the answer. A write that finds the object changed once its
validating webhooks have answered starts over, webhooks included, as
kube-apiserver's ``GuaranteedUpdate`` retries.

Semantics carried over from k8s.io/apiserver pkg/admission/plugin/webhook:

- writes of the webhook configurations and admission policies themselves call
  no webhooks (kube-apiserver exempts them, so a broken webhook can be removed);
- configurations in name order, webhooks in their order; rules by operation,
  group, version, resource(/subresource) and scope; ``namespaceSelector`` (the
  Namespace's labels; a Namespace's own labels when it is the object; ignored
  for other cluster-scoped objects) and ``objectSelector`` (the object's or the
  old object's labels); ``matchPolicy: Equivalent`` sends the object converted
  to the version the rule names when only an equivalent resource matches;
- an ``AdmissionReview`` (v1, or v1beta1 when that is the first version the
  webhook names) with a fresh uid per call, ``kind``/``resource``/
  ``requestKind``/``requestResource``, ``userInfo``, ``object``/``oldObject``,
  ``dryRun`` and the operation's options; on CREATE the mutating webhooks see
  no uid, creationTimestamp, generation nor generated name (kube-apiserver sets
  them after mutation), validating ones see them;
- ``clientConfig.url``, or ``clientConfig.service`` dialed on loopback (see
  :func:`service_endpoint`), TLS verified against ``caBundle`` (else the system
  roots), ``?timeout=Ns`` and ``timeoutSeconds`` (default 10); connections kept
  alive per caBundle and server name, a request lost on a connection the webhook
  closed while idle sent again once (:mod:`localkube.webhook_client`);
- failures (dial, TLS, timeout, non-2xx answer, malformed review, uid mismatch,
  undecodable patch) are ``Internal error occurred: failed calling webhook
  "NAME": ...`` under ``failurePolicy: Fail`` and skipped under ``Ignore``; a
  denial is ``admission webhook "NAME" denied the request: MESSAGE`` with the
  webhook's code (400 when it gives none below 400) and reason;
- validating webhooks called in parallel, the first refusal or failure to
  arrive answering the request once all have answered;
- JSONPatch answers applied, the result pruned to the kind's schema and
  defaulted again; ``reinvocationPolicy: IfNeeded`` webhooks called once more
  when a later webhook changed the object; ``warnings`` become ``Warning``
  headers of the response; ``auditAnnotations`` are accepted and dropped
  (localkube keeps no audit log);
- a dry-run request calls webhooks with ``dryRun: true``; a webhook whose
  ``sideEffects`` is neither ``None`` nor ``NoneOnDryRun`` would fail it with
  ``admission webhook "NAME" does not support dry run`` (v1 validation refuses
  such webhooks, so only stored data from elsewhere could hold one).

Where localkube differs: writes by its own controllers and simulation do not
call webhooks (kube-controller-manager's writes do), but for the namespace
controller's deletes of a terminating namespace's content
(:mod:`localkube.namespace_deletion`); ``matchConditions``
(CEL) are refused when a configuration is written
(:mod:`localkube.admission_webhooks_validation`); CONNECT is admitted for the
``proxy`` subresources (kind ``<Kind>ProxyOptions``, the options as the object) and
``pods/exec``, ``pods/attach``, ``pods/portforward`` (``PodExecOptions``...);
``pods/eviction`` and ``pods/binding`` are a CREATE of their Eviction or Binding;
the review APIs call no webhooks. A ``scale`` write sends the ``autoscaling/v1`` Scale (kind
and requestKind Scale, the resource's own group/version/resource), and a
patched Scale's ``spec.replicas`` is what gets stored.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import greenlet  # type: ignore[import-untyped]

from localkube import admission_webhooks_validation, defaults, json_codec
from localkube.errors import MODIFIED, APIError, Cause, bad_request, conflict
from localkube.metrics import WebhookMetrics
from localkube.patch import PatchFailed, json_patch
from localkube.resources import Registry, ResourceType
from localkube.selectors import selector_matches
from localkube.values import clone
from localkube.webhook_client import WebhookClients, post_review

Obj = dict[str, Any]
T = TypeVar("T")
log = logging.getLogger("localkube.webhooks")

MUTATING = "admissionregistration.k8s.io/mutatingwebhookconfigurations"
VALIDATING = "admissionregistration.k8s.io/validatingwebhookconfigurations"
DEFAULT_TIMEOUT = 10
NO_SIDE_EFFECTS = ("None", "NoneOnDryRun")
# a write whose object keeps changing while its webhooks answer gives up after this many tries
MAX_ATTEMPTS = 5
WORKLOADS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet")
# what the scale subresource reads and writes, whatever the resource
SCALE_KIND = {"group": "autoscaling", "version": "v1", "kind": "Scale"}
# IsExemptAdmissionConfigurationResource: no webhook may stand in the way of fixing the configurations
EXEMPT = (
    "mutatingwebhookconfigurations",
    "validatingwebhookconfigurations",
    "validatingadmissionpolicies",
    "validatingadmissionpolicybindings",
    "mutatingadmissionpolicies",
    "mutatingadmissionpolicybindings",
)


@dataclass
class Attributes:
    """What kube-apiserver's ``admission.Attributes`` hold of one client request."""

    operation: str  # CREATE, UPDATE, DELETE or CONNECT
    rt: ResourceType
    subresource: str
    namespace: str
    name: str
    user_info: Obj
    dry_run: bool
    options: Obj | None
    # the kind of a subresource whose object is its own kind (CONNECT's <Kind>ProxyOptions, an
    # Eviction, a Binding): that object is sent as it is, as kind and requestKind
    object_kind: Obj | None = None


@dataclass
class Webhook:
    """One webhook of a stored configuration, with kube-apiserver's defaults."""

    configuration: str
    index: int
    mutating: bool
    spec: Obj

    @property
    def name(self) -> str:
        return str(self.spec.get("name", ""))

    @property
    def uid(self) -> str:
        # kube-apiserver's accessor uid: configuration name and position
        return f"{self.configuration}/{self.name}/{self.index}"

    @property
    def fail_open(self) -> bool:
        return bool(self.spec.get("failurePolicy", "Fail") == "Ignore")

    @property
    def timeout(self) -> int:
        return int(self.spec.get("timeoutSeconds") or DEFAULT_TIMEOUT)


@dataclass
class Invocation:
    """A webhook to call and the resource (maybe an equivalent one) it is called for."""

    webhook: Webhook
    rt: ResourceType


class CallingError(Exception):
    """``webhookutil.ErrCallingWebhook``: the webhook could not be asked or answered nonsense."""

    def __init__(self, webhook: str, reason: str) -> None:
        super().__init__(f'failed calling webhook "{webhook}": {reason}')


def internal_error(message: str) -> APIError:
    """``apierrors.NewInternalError``: 500, the message prefixed, the cause kept."""
    return APIError(500, "InternalError", f"Internal error occurred: {message}", causes=[Cause("", message)])


def denial(webhook: str, result: Obj | None) -> APIError:
    """``webhookerrors.ToStatusErr``: the webhook's Status, its message prefixed, code at least 400."""
    result = result if isinstance(result, dict) else {}
    denied_by = f'admission webhook "{webhook}" denied the request'
    message, reason = str(result.get("message") or ""), str(result.get("reason") or "")
    if message:
        text = f"{denied_by}: {message}"
    elif reason:
        text = f"{denied_by}: {reason}"
    else:
        text = f"{denied_by} without explanation"
    code = result.get("code")
    code = code if isinstance(code, int) and code >= 400 else 400
    details = result.get("details") if isinstance(result.get("details"), dict) else {}
    causes = [
        Cause(str(c.get("reason", "")), str(c.get("message", "")), str(c.get("field", "")))
        for c in (details or {}).get("causes") or []
        if isinstance(c, dict)
    ]
    return APIError(
        code,
        reason,
        text,
        name=str((details or {}).get("name", "")),
        group=str((details or {}).get("group", "")),
        kind=str((details or {}).get("kind", "")),
        causes=causes,
    )


def dry_run_refusal(webhook: Webhook) -> APIError | None:
    """The 400 of a dry-run request for a webhook that may have side effects, else None."""
    if webhook.spec.get("sideEffects") in NO_SIDE_EFFECTS:
        return None
    return bad_request(f'admission webhook "{webhook.name}" does not support dry run')


# ---- matching ----------------------------------------------------------------------------


def _exact_or_wildcard(items: Any, value: str) -> bool:
    return isinstance(items, list) and any(item in ("*", value) for item in items)


def rule_matches(rule: Obj, operation: str, group: str, version: str, resource: str, sub: str, scope: str) -> bool:
    """``rules.Matcher``: operation, group, version, resource/subresource and scope of one rule.

    ``scope`` is ``Namespaced`` or ``Cluster``, the request's (a Namespace is cluster-scoped)."""
    if not any(op in ("*", operation) for op in rule.get("operations") or []):
        return False
    if not _exact_or_wildcard(rule.get("apiGroups"), group):
        return False
    if not _exact_or_wildcard(rule.get("apiVersions"), version):
        return False
    wanted_scope = rule.get("scope") or "*"
    if wanted_scope not in ("*", scope):
        return False
    for entry in rule.get("resources") or []:
        res, _, rule_sub = str(entry).partition("/")
        if res in ("*", resource) and rule_sub in ("*", sub):
            return True
    return False


def request_scope(attributes: Attributes) -> str:
    rt = attributes.rt
    if rt.group == "" and rt.plural == "namespaces":
        return "Cluster"
    return "Namespaced" if attributes.namespace else "Cluster"


def _labels(obj: Obj | None) -> dict[str, str] | None:
    if not isinstance(obj, dict):
        return None
    labels = (obj.get("metadata") or {}).get("labels")
    return labels if isinstance(labels, dict) else {}


def object_selected(selector: Obj | None, obj: Obj | None, old: Obj | None) -> bool:
    """``objectSelector``: empty matches all; else the new or the old object's labels must match."""
    if not selector:
        return True
    return any(labels is not None and selector_matches(selector, labels) for labels in (_labels(obj), _labels(old)))


# ---- request bodies -------------------------------------------------------------------------


def options_object(kind: str, query: dict[str, str], body: Obj | None = None) -> Obj:
    """The ``options`` of an AdmissionRequest: Create/Update/DeleteOptions as the client sent them."""
    options: Obj = {"kind": kind, "apiVersion": "meta.k8s.io/v1"}
    if kind == "DeleteOptions" and isinstance(body, dict):
        for key in ("gracePeriodSeconds", "preconditions", "orphanDependents", "propagationPolicy", "dryRun"):
            if key in body:
                options[key] = body[key]
    if query.get("dryRun"):
        options["dryRun"] = [query["dryRun"]]
    if kind != "DeleteOptions":
        for key in ("fieldManager", "fieldValidation"):
            if query.get(key):
                options[key] = query[key]
    return options


def review_body(
    version: str, uid: str, attributes: Attributes, invocation_rt: ResourceType, obj: Obj | None, old: Obj | None
) -> Obj:
    """An AdmissionReview request, field for field as ``CreateV1AdmissionReview`` fills it."""
    rt = attributes.rt
    kind = {"group": invocation_rt.group, "version": invocation_rt.version, "kind": invocation_rt.kind}
    request_kind = {"group": rt.group, "version": rt.version, "kind": rt.kind}
    if attributes.object_kind is not None:
        kind = request_kind = dict(attributes.object_kind)
    elif attributes.subresource == "scale":
        kind = request_kind = dict(SCALE_KIND)
    request: Obj = {
        "uid": uid,
        "kind": kind,
        "resource": {"group": invocation_rt.group, "version": invocation_rt.version, "resource": invocation_rt.plural},
    }
    if attributes.subresource:
        request["subResource"] = attributes.subresource
    request["requestKind"] = request_kind
    request["requestResource"] = {"group": rt.group, "version": rt.version, "resource": rt.plural}
    if attributes.subresource:
        request["requestSubResource"] = attributes.subresource
    if attributes.name:
        request["name"] = attributes.name
    if attributes.namespace:
        request["namespace"] = attributes.namespace
    request["operation"] = attributes.operation
    request["userInfo"] = attributes.user_info
    request["object"] = obj
    request["oldObject"] = old
    request["dryRun"] = attributes.dry_run
    request["options"] = attributes.options
    return {"kind": "AdmissionReview", "apiVersion": f"admission.k8s.io/{version}", "request": request}


@dataclass
class Answer:
    """What ``VerifyAdmissionResponse`` extracts from a webhook's review."""

    allowed: bool
    patch: bytes = b""
    result: Obj | None = None
    warnings: list[str] = field(default_factory=list)


def verify_response(version: str, uid: str, mutating: bool, review: Any) -> Answer:
    """Check a webhook's AdmissionReview; raises ValueError with kube-apiserver's words."""
    if not isinstance(review, dict):
        raise ValueError("couldn't get version/kind; json parse error: the response is not a JSON object")
    if not review.get("kind"):
        raise ValueError(f"Object 'Kind' is missing in '{json.dumps(review, separators=(',', ':'))}'")
    response = review.get("response")
    if not isinstance(response, dict):
        raise ValueError("webhook response was absent")
    if version == "v1":
        if response.get("uid", "") != uid:
            raise ValueError(f'expected response.uid="{uid}", got "{response.get("uid", "")}"')
        api_version, kind = review.get("apiVersion", ""), review.get("kind", "")
        if (api_version, kind) != ("admission.k8s.io/v1", "AdmissionReview"):
            group, _, ver = str(api_version).rpartition("/")
            got = f"{group}/{ver}, Kind={kind}" if group else f"{ver}, Kind={kind}"
            raise ValueError(f"expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {got}")
    raw_patch = response.get("patch")
    patch = b""
    if raw_patch:
        try:
            patch = base64.b64decode(str(raw_patch), validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("illegal base64 data in response.patch") from None
    patch_type = response.get("patchType")
    if mutating and version == "v1":
        if patch and patch_type is None:
            raise ValueError("webhook returned response.patch but not response.patchType")
        if not patch and patch_type is not None:
            raise ValueError("webhook returned response.patchType but not response.patch")
        if patch_type is not None and not patch_type:
            raise ValueError(f'webhook returned invalid response.patchType of "{patch_type}"')
    elif not mutating:
        if patch:
            raise ValueError("validating webhook may not return response.patch")
        if patch_type is not None and version == "v1":
            raise ValueError("validating webhook may not return response.patchType")
    if mutating and version == "v1beta1" and patch:
        patch_type = "JSONPatch"
    if patch and patch_type != "JSONPatch":
        raise _UnsupportedPatch(str(patch_type))
    warnings = [str(w) for w in response.get("warnings") or []]
    result = response.get("status") if isinstance(response.get("status"), dict) else None
    return Answer(bool(response.get("allowed")), patch, result, warnings)


class _UnsupportedPatch(ValueError):
    pass


# ---- the HTTP call ----------------------------------------------------------------------------


def service_endpoint(services: Callable[[str, str], Obj | None], reference: Obj) -> tuple[str, str]:
    """``(url, tls server name)`` of a ``clientConfig.service`` on this machine.

    localkube runs no cluster network: the Service ``namespace/name`` must exist
    and is dialed on 127.0.0.1; the port is the ``targetPort`` of the Service port
    numbered ``service.port`` (default 443) when that ``targetPort`` is a number,
    else ``service.port`` itself. An ``ExternalName`` Service is dialed at its
    external name and ``service.port``, as kube-apiserver does (Karmada's API
    server reaches karmada-webhook in the host cluster so). The certificate must
    name ``NAME.NAMESPACE.svc``, the name kube-apiserver verifies."""
    namespace, name = str(reference.get("namespace", "")), str(reference.get("name", ""))
    port = int(reference.get("port") or 443)
    service = services(namespace, name)
    if service is None:
        raise OSError(f'service "{name}" not found')
    path = str(reference.get("path") or "")
    host = f"{name}.{namespace}.svc"
    spec = service.get("spec") or {}
    if spec.get("type") == "ExternalName" and spec.get("externalName"):
        return f"https://{spec['externalName']}:{port}{path}", host
    for entry in (service.get("spec") or {}).get("ports") or []:
        if isinstance(entry, dict) and entry.get("port") == port and isinstance(entry.get("targetPort"), int):
            port = entry["targetPort"]
            break
    return f"https://127.0.0.1:{port}{path}", host


# ---- the plugin ------------------------------------------------------------------------------------


class _Pending:
    """What a write's greenlet hands to the server's coroutine: webhooks to await."""

    def __init__(self, mutating: bool, obj: Obj | None, old: Obj | None) -> None:
        self.mutating = mutating
        self.obj = obj
        self.old = old


class _WriteGreenlet(greenlet.greenlet):  # type: ignore[misc]
    attributes: Attributes
    # the stored object's resourceVersion when the write began (None: absent)
    seen: str | None


class Retry(Exception):
    """The object changed while the webhooks answered: run the write again."""


class WebhookAdmission:
    """The two webhook plugins of one localkube, over its store, registry and ResourceAPI."""

    def __init__(self, store: Any, registry: Registry, api: Any) -> None:
        self.store = store
        self.registry = registry
        self.api = api
        self._equivalent_cache: dict[tuple[int, str, str, str], list[ResourceType]] = {}
        # per configuration versions: the webhooks, and for each kind of request those whose rules
        # match it (selectors aside): most writes (Leases, Events) match none and skip the rest
        self._hooks_cache: dict[bool, tuple[tuple[str, ...], list[Webhook]]] = {}
        self._candidates_cache: dict[tuple[Any, ...], list[Webhook]] = {}
        # subscriptions to each configuration storage: while theirs holds no event, the cache is
        # current, and a write does not list, sort and name the configurations again
        self._configuration_watchers: dict[bool, Any] = {}
        self.clients = WebhookClients()
        self.metrics = WebhookMetrics()

    async def close(self) -> None:
        """Close the kept-alive connections to the webhooks (the server stops)."""
        await self.clients.close()

    # -- configurations -------------------------------------------------------------
    def _versioned_hooks(self, mutating: bool) -> tuple[tuple[str, ...], list[Webhook]]:
        """The webhooks of the stored configurations, and the configurations' resourceVersions
        they were read at (rebuilt only when one changed)."""
        storage = MUTATING if mutating else VALIDATING
        cached = self._hooks_cache.get(mutating)
        watcher = self._configuration_watchers.get(mutating)
        if cached is not None and watcher is not None and not watcher.closed and watcher.queue.empty():
            return cached
        if watcher is None or watcher.closed:
            watcher = self._configuration_watchers[mutating] = self.store.subscribe(storage)
        while not watcher.queue.empty():
            watcher.queue.get_nowait()  # the configurations are read again below, as stored now
        configurations = sorted(self.store.items(storage), key=lambda c: c["metadata"]["name"])
        versions = tuple(f"{c['metadata']['name']}@{c['metadata'].get('resourceVersion')}" for c in configurations)
        if cached is not None and cached[0] == versions:
            return cached
        hooks = []
        for configuration in configurations:
            for index, spec in enumerate(configuration.get("webhooks") or []):
                if isinstance(spec, dict):
                    hooks.append(Webhook(configuration["metadata"]["name"], index, mutating, spec))
        self._hooks_cache[mutating] = (versions, hooks)
        return versions, hooks

    def _equivalents(self, rt: ResourceType) -> list[ResourceType]:
        """The other group/versions of ``rt``'s storage (kube-apiserver's equivalent resources),
        found once per served set: each write asks for every webhook's rules."""
        key = (self.registry.generation, rt.group, rt.version, rt.plural)
        found = self._equivalent_cache.get(key)
        if found is None:
            if len(self._equivalent_cache) > 1024:
                self._equivalent_cache.clear()
            found = self._equivalent_cache[key] = self._find_equivalents(rt)
        return found

    def _find_equivalents(self, rt: ResourceType) -> list[ResourceType]:
        return [
            other
            for other in self.registry.all()
            if other.storage_key == rt.storage_key and other.plural == rt.plural and other is not rt
        ] + [
            other
            for other in self.registry.all()
            if other.storage_key == rt.storage_key and other.plural != rt.plural and other is not rt
        ]

    def _namespace_selected(self, hook: Webhook, attributes: Attributes, obj: Obj | None, old: Obj | None) -> bool:
        rt = attributes.rt
        is_namespace = rt.group == "" and rt.plural == "namespaces"
        if not attributes.namespace and not is_namespace:
            return True  # other cluster-scoped objects are never exempted
        selector = hook.spec.get("namespaceSelector")
        if not selector:
            return True
        if is_namespace and not attributes.subresource and attributes.operation in ("CREATE", "UPDATE"):
            labels = _labels(obj) or {}
        else:
            namespace = self.store.get("/namespaces", "", attributes.namespace)
            labels = _labels(namespace) or {}
        return selector_matches(selector, labels)

    def invocation(self, hook: Webhook, attributes: Attributes, obj: Obj | None, old: Obj | None) -> Invocation | None:
        """``ShouldCallHook``: the selectors, then the rules on the request's resource, then
        (``matchPolicy: Equivalent``) on its equivalents."""
        if not self._namespace_selected(hook, attributes, obj, old):
            return None
        if not object_selected(hook.spec.get("objectSelector"), obj, old):
            return None
        return self._rules_invocation(hook, attributes)

    def _rules_invocation(self, hook: Webhook, attributes: Attributes) -> Invocation | None:
        """The rules part of ``invocation``: the request's resource, then its equivalents."""
        scope = request_scope(attributes)
        rules = [r for r in hook.spec.get("rules") or [] if isinstance(r, dict)]

        def matches(rt: ResourceType) -> bool:
            return any(
                rule_matches(rule, attributes.operation, rt.group, rt.version, rt.plural, attributes.subresource, scope)
                for rule in rules
            )

        if matches(attributes.rt):
            return Invocation(hook, attributes.rt)
        if hook.spec.get("matchPolicy", "Equivalent") == "Equivalent":
            for rule in rules:  # earlier rules first
                for other in self._equivalents(attributes.rt):
                    at = (other.group, other.version, other.plural, attributes.subresource, scope)
                    if rule_matches(rule, attributes.operation, *at):
                        return Invocation(hook, other)
        return None

    def _any(self, mutating: bool, attributes: Attributes, obj: Obj | None, old: Obj | None) -> bool:
        if attributes.rt.group == "admissionregistration.k8s.io" and attributes.rt.plural in EXEMPT:
            return False
        return any(self.invocation(h, attributes, obj, old) for h in self._candidates(mutating, attributes))

    def _candidates(self, mutating: bool, attributes: Attributes) -> list[Webhook]:
        """The webhooks whose rules match the request, before their selectors are looked at."""
        versions, hooks = self._versioned_hooks(mutating)
        rt = attributes.rt
        key = (
            mutating, versions, self.registry.generation, attributes.operation, rt.group, rt.version, rt.plural,
            attributes.subresource, request_scope(attributes),
        )  # fmt: skip
        found = self._candidates_cache.get(key)
        if found is None:
            if len(self._candidates_cache) > 4096:
                self._candidates_cache.clear()
            found = self._candidates_cache[key] = [h for h in hooks if self._rules_invocation(h, attributes)]
        return found

    # -- the write's side: hook points of ResourceAPI ------------------------------------
    @staticmethod
    def _write(rt: ResourceType) -> _WriteGreenlet | None:
        """The client write being admitted, if ``rt``'s object is the one it writes (a write
        localkube makes on the side, of another object, is not the client's)."""
        current = greenlet.getcurrent()
        if isinstance(current, _WriteGreenlet) and current.attributes.rt.storage_key == rt.storage_key:
            return current
        return None

    def began(self, rt: ResourceType, old: Obj | None) -> None:
        """Called as a write reads the stored object it works from."""
        write = self._write(rt)
        if write is not None:
            write.seen = (old or {}).get("metadata", {}).get("resourceVersion") if old else None

    def mutate(self, rt: ResourceType, subresource: str, obj: Obj, old: Obj | None) -> None:
        """The mutating webhooks, on the defaulted object (storage shape), changed in place."""
        write = self._write(rt)
        if write is None or write.attributes.operation not in ("CREATE", "UPDATE"):
            return
        attributes = write.attributes
        # the selectors read labels only, which the CREATE input keeps: match before copying
        if not self._any(True, attributes, obj, old):
            return
        sent = self._mutation_input(attributes, obj)
        answer = write.parent.switch(_Pending(True, sent, old))
        if isinstance(answer, BaseException):
            raise answer
        self._check_unchanged(rt, write, obj, old)
        kept = {k: obj["metadata"].get(k) for k in ("uid", "creationTimestamp", "generation", "name")}
        obj.clear()
        obj.update(answer)
        meta = obj.setdefault("metadata", {})
        for key, value in kept.items():
            if value is None:
                continue
            if key == "name" and meta.get("name"):
                continue  # a webhook may name an object created with generateName
            meta[key] = value

    def validate(self, rt: ResourceType, subresource: str, obj: Obj | None, old: Obj | None) -> None:
        """The validating webhooks, on the object about to be stored (None on DELETE)."""
        write = self._write(rt)
        if write is None:
            return
        attributes = write.attributes
        if attributes.operation == "DELETE" and self._any(True, attributes, None, old):
            # mutating webhooks are called on DELETE too; they may not patch
            answer = write.parent.switch(_Pending(True, None, old))
            if isinstance(answer, BaseException):
                raise answer
        if not self._any(False, attributes, obj, old):
            return
        answer = write.parent.switch(_Pending(False, obj, old))
        if isinstance(answer, BaseException):
            raise answer
        self._check_unchanged(rt, write, obj, old)

    def _check_unchanged(self, rt: ResourceType, write: _WriteGreenlet, obj: Obj | None, old: Obj | None) -> None:
        meta = (obj or old or {}).get("metadata") or {}
        namespace = meta.get("namespace", "") if rt.namespaced else ""
        current = self.store.get(rt.storage_key, namespace, meta.get("name", ""))
        current_rv = current["metadata"].get("resourceVersion") if current else None
        if current_rv != write.seen:
            raise Retry()

    @staticmethod
    def _mutation_input(attributes: Attributes, obj: Obj) -> Obj:
        """On CREATE, the object before kube-apiserver's BeforeCreate: no uid, creation time,
        generation nor generated name."""
        sent = clone(obj)
        if attributes.operation == "CREATE":
            meta = sent.setdefault("metadata", {})
            meta.pop("uid", None)
            meta.pop("generation", None)
            meta["creationTimestamp"] = None
            if not attributes.name and meta.get("generateName"):
                meta.pop("name", None)
        return sent

    # -- the server's side --------------------------------------------------------------------
    async def run(self, attributes: Attributes, write: Callable[[], T], warnings: list[str]) -> T:
        """Run ``write`` (a ResourceAPI call) with webhooks and return its result; the webhooks'
        warnings go to ``warnings``, whether the write succeeds or fails."""
        for _attempt in range(MAX_ATTEMPTS):
            del warnings[:]
            task = _WriteGreenlet(write)
            task.attributes = attributes
            task.seen = None
            try:
                value = task.switch()
                while not task.dead:
                    assert isinstance(value, _Pending)
                    try:
                        if value.mutating:
                            outcome: Any = await self._mutating_chain(attributes, value.obj, value.old, warnings)
                        else:
                            await self._validating_chain(attributes, value.obj, value.old, warnings)
                            outcome = None
                    except APIError as error:
                        outcome = error
                    except BaseException:
                        task.throw(greenlet.GreenletExit)
                        raise
                    value = task.switch(outcome)
            except Retry:
                continue
            result: T = value
            return result
        raise conflict(
            attributes.rt.plural,
            attributes.rt.group,
            attributes.name,
            MODIFIED,
        )

    # -- calling ------------------------------------------------------------------------------------
    def _versioned(self, rt: ResourceType, obj: Obj | None, subresource: str = "") -> Obj | None:
        """``obj`` (storage shape) as the webhook gets it: in ``rt``'s version, or as its Scale."""
        if obj is None:
            return None
        view: Obj = self.api._view(rt, obj)
        if subresource == "scale":
            from localkube.scale import scale_of

            scale: Obj = scale_of(view, rt)
            return scale
        return view

    async def _call(
        self, invocation: Invocation, attributes: Attributes, obj: Obj | None, old: Obj | None, warnings: list[str]
    ) -> Answer:
        began = time.monotonic()
        rejected = True  # until an answer allows it
        try:
            answer = await self._call_once(invocation, attributes, obj, old, warnings)
            rejected = not answer.allowed
            return answer
        finally:
            hook = invocation.webhook
            self.metrics.observe(hook.name, attributes.operation, rejected, hook.mutating, time.monotonic() - began)

    async def _call_once(
        self, invocation: Invocation, attributes: Attributes, obj: Obj | None, old: Obj | None, warnings: list[str]
    ) -> Answer:
        hook = invocation.webhook
        if attributes.dry_run:
            refusal = dry_run_refusal(hook)
            if refusal is not None:
                raise refusal
        versions = [v for v in hook.spec.get("admissionReviewVersions") or [] if v in ("v1", "v1beta1")]
        if not versions:
            raise CallingError(
                hook.name,
                "could not create admission objects: webhook does not accept known AdmissionReview versions "
                "(v1, v1beta1)",
            )
        version = versions[0]
        uid = str(uuid.uuid4())
        if attributes.object_kind is not None:
            sent_obj, sent_old = obj, old
        else:
            sub = attributes.subresource
            sent_obj, sent_old = self._versioned(invocation.rt, obj, sub), self._versioned(invocation.rt, old, sub)
        body = review_body(version, uid, attributes, invocation.rt, sent_obj, sent_old)
        client = hook.spec.get("clientConfig") or {}
        try:
            if client.get("url"):
                url, server_name = str(client["url"]), ""
            else:
                url, server_name = service_endpoint(
                    lambda ns, name: self.store.get("/services", ns, name), client.get("service") or {}
                )
            review = await post_review(
                url,
                server_name,
                str(client.get("caBundle") or ""),
                hook.timeout,
                json_codec.dumps(body),
                self.clients,
            )
        except OSError as exc:
            raise CallingError(hook.name, f"failed to call webhook: {exc}") from None
        try:
            answer = verify_response(version, uid, hook.mutating, review)
        except _UnsupportedPatch as exc:
            raise CallingError(hook.name, f'unsupported patch type "{exc}"') from None
        except ValueError as exc:
            raise CallingError(hook.name, f"received invalid webhook response: {exc}") from None
        warnings.extend(answer.warnings)
        return answer

    def _failed(self, hook: Webhook, error: CallingError) -> APIError | None:
        if hook.fail_open:
            log.warning("Failed calling webhook, failing open %s: %s", hook.name, error)
            return None
        log.warning("Failed calling webhook, failing closed %s: %s", hook.name, error)
        return internal_error(str(error))

    async def _mutating_chain(
        self, attributes: Attributes, obj: Obj | None, old: Obj | None, warnings: list[str]
    ) -> Obj | None:
        """The mutating webhooks in order, then once more those with ``reinvocationPolicy:
        IfNeeded`` that ran before a later change; returns the object (storage shape)."""
        previously: set[str] = set()
        reinvoke: set[str] = set()
        changed_any = False
        current = clone(obj) if obj is not None else None
        for reinvoking in (False, True):
            if reinvoking and not changed_any:
                break
            for hook in self._candidates(True, attributes):
                invocation = self.invocation(hook, attributes, current, old)
                if invocation is None or (reinvoking and hook.uid not in reinvoke):
                    continue
                try:
                    answer = await self._call(invocation, attributes, current, old, warnings)
                    if not answer.allowed:
                        raise denial(hook.name, answer.result)
                    changed, current = self._apply_patch(hook, invocation.rt, attributes, current, answer.patch)
                except CallingError as error:
                    failure = self._failed(hook, error)
                    if failure is not None:
                        raise failure from None
                    changed = False
                if changed:
                    reinvoke |= previously
                    previously = set()
                    changed_any = True
                if hook.spec.get("reinvocationPolicy") == "IfNeeded":
                    previously.add(hook.uid)
        return current

    def _apply_patch(
        self, hook: Webhook, rt: ResourceType, attributes: Attributes, obj: Obj | None, patch: bytes
    ) -> tuple[bool, Obj | None]:
        if not patch:
            return False, obj
        try:
            operations = json.loads(patch)
        except ValueError as exc:
            raise CallingError(hook.name, f"received undecodable patch in webhook response: {exc}") from None
        if not isinstance(operations, list):
            raise CallingError(
                hook.name,
                "received undecodable patch in webhook response: json: cannot unmarshal object into Go value "
                "of type jsonpatch.Patch",
            )
        if not operations:
            return False, obj
        if obj is None:
            raise internal_error(
                f'admission webhook "{hook.name}" attempted to modify the object, which is not supported for '
                "this operation"
            )
        literal = attributes.object_kind is not None
        versioned = obj if literal else self._versioned(rt, obj, attributes.subresource)
        try:
            patched = json_patch(versioned, operations)
        except PatchFailed as exc:
            raise internal_error(str(exc)) from None
        if not isinstance(patched, dict):
            raise internal_error("the patched object is not an object")
        if literal:
            return patched != obj, patched
        if attributes.subresource == "scale":
            return self._scaled(rt, obj, patched)
        patched["apiVersion"], patched["kind"] = rt.api_version, rt.kind
        result = self.api._to_storage(rt, patched)
        self._redefault(rt, result)
        return result != obj, result

    def _scaled(self, rt: ResourceType, obj: Obj, scale: Obj) -> tuple[bool, Obj]:
        """A webhook's patched Scale carried back: its ``spec.replicas`` onto the object."""
        from localkube.scale import set_replicas

        replicas = (scale.get("spec") or {}).get("replicas")
        if not isinstance(replicas, int) or isinstance(replicas, bool):
            raise internal_error(f"json: cannot unmarshal {type(replicas).__name__} into Go struct field "
                                 "ScaleSpec.spec.replicas of type int32")  # fmt: skip
        result = clone(obj)
        set_replicas(result, rt, replicas)
        return result != obj, result

    def _redefault(self, rt: ResourceType, obj: Obj) -> None:
        """Decode the patched object as kube-apiserver does: unknown fields dropped, defaults set."""
        from localkube import zero_values
        from localkube.api import WriteOptions

        self.api._schema_process(rt, obj, WriteOptions(field_validation="Ignore"))
        if rt.custom:
            return
        if rt.kind == "Pod" and not rt.group:
            defaults.pod(obj)
        elif rt.kind in WORKLOADS:
            defaults.workload(rt.kind, obj.setdefault("spec", {}))
        elif rt.kind == "Job":
            defaults.pod_template((obj.get("spec") or {}).get("template"))
        zero_values.fill(obj, rt.group, rt.version, rt.kind)

    async def _validating_chain(
        self, attributes: Attributes, obj: Obj | None, old: Obj | None, warnings: list[str]
    ) -> None:
        """The validating webhooks, all at once as kube-apiserver calls them; once every one has
        answered, the first refusal or failure to have arrived is the request's."""
        errors: list[APIError] = []

        async def ask(invocation: Invocation) -> None:
            hook = invocation.webhook
            try:
                answer = await self._call(invocation, attributes, obj, old, warnings)
            except CallingError as error:
                failure = self._failed(hook, error)
                if failure is not None:
                    errors.append(failure)
                return
            except APIError as error:  # a dry run the webhook cannot take
                errors.append(error)
                return
            if not answer.allowed:
                errors.append(denial(hook.name, answer.result))

        invocations = [
            i for i in (self.invocation(h, attributes, obj, old) for h in self._candidates(False, attributes)) if i
        ]
        await asyncio.gather(*(ask(invocation) for invocation in invocations))
        if errors:
            raise errors[0]

    async def admit_object(self, attributes: Attributes, obj: Obj, warnings: list[str]) -> Obj:
        """A request whose object is a subresource's own kind (``attributes.object_kind``: a
        CONNECT's options, an Eviction, a Binding): the mutating webhooks, then the validating
        ones on what they made of it, which is returned."""
        current: Obj | None = obj
        if self._any(True, attributes, obj, None):
            current = await self._mutating_chain(attributes, obj, None, warnings)
        if self._any(False, attributes, current, None):
            await self._validating_chain(attributes, current, None, warnings)
        return current if current is not None else obj


def noop_hooks() -> Any:
    """The hook points of a ResourceAPI nobody wired to webhooks."""
    return _NoHooks()


class _NoHooks:
    def began(self, rt: ResourceType, old: Obj | None) -> None:
        return None

    def mutate(self, rt: ResourceType, subresource: str, obj: Obj, old: Obj | None) -> None:
        return None

    def validate(self, rt: ResourceType, subresource: str, obj: Obj | None, old: Obj | None) -> None:
        return None


# the configurations' defaults and validation, registered as their kinds' strategy
_ = admission_webhooks_validation

__all__ = [
    "Attributes",
    "WebhookAdmission",
    "denial",
    "internal_error",
    "options_object",
    "review_body",
    "rule_matches",
    "verify_response",
]
