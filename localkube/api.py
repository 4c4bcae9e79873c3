"""The REST verbs on stored objects: create, get, list, update, patch, delete,
deletecollection, and the status/scale/finalize subresources.

Every method runs synchronously on the event loop (no awaits between reading
and writing storage), so each request is atomic with respect to the others,
as etcd transactions make them in kube-apiserver.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from localkube import admission, autoscaling, builtin_schemas, json_codec, validation, zero_values
from localkube import crd as crds
from localkube.admission_webhooks import noop_hooks
from localkube.decoding import decode_body
from localkube.errors import (
    MODIFIED,
    APIError,
    Cause,
    GoLiteral,
    already_exists,
    bad_request,
    conflict,
    field_invalid,
    forbidden,
    invalid,
    method_not_allowed,
    not_found,
    resource_not_found,
    unsupported_media_type,
)
from localkube.graceful import Plan, grace_left, plan_pod_deletion
from localkube.integers import integer_problem
from localkube.kinds import Context, strategy_for
from localkube.managedfields import INTERNAL_MANAGER, Write, track_update
from localkube.meta import generate_name, new_finalizers_forbidden, new_uid, now_time, validate_metadata
from localkube.patch import PatchFailed, json_patch, merge_patch, strategic_merge
from localkube.resources import Registry, ResourceType
from localkube.store import Store
from localkube.typed import root_schema
from localkube.values import clone

Obj = dict[str, Any]

PATCH_TYPES = {
    "application/json-patch+json": "json",
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
    "application/apply-patch+cbor": "apply",
}
PROTECTED_NAMESPACES = ("default", "kube-system", "kube-public")
MAX_OBJECT_BYTES = 1536 * 1024


def _stored_version(rt: ResourceType) -> tuple[str, str]:
    """The group and version whose shape ``rt``'s objects are stored in (and checked in)."""
    if rt.storage == "events":
        return "", "v1"  # events.k8s.io events are kept in the core/v1 shape
    if rt.group == "autoscaling":
        return "autoscaling", "v2"
    return rt.group, rt.version


INTERNAL_CONTEXT = Context(user="system:kube-controller-manager", groups=["system:masters"])


@dataclass
class WriteOptions:
    """Query options of a write."""

    dry_run: bool = False
    field_validation: str = "Warn"
    field_manager: str = ""
    force: bool = False
    # the manager of a write without fieldManager: the User-Agent up to its first "/"
    default_manager: str = ""
    # the caller encodes the answer at once and drops it (an HTTP request): the answer may share
    # the stored object's parts, which are never changed in place, instead of copying them
    answer_only: bool = False


@dataclass
class Result:
    """A successful write: the object, the HTTP code and any warnings."""

    obj: Obj
    code: int = 200
    warnings: list[str] = field(default_factory=list)


WriteCheck = Callable[[ResourceType, str, Obj, "Obj | None", Context], None]


def _no_check(rt: ResourceType, subresource: str, obj: Obj, old: Obj | None, context: Context) -> None:
    return None


def _meta(obj: Obj) -> Obj:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = obj["metadata"] = {}
    return meta


def _parses_as_nonzero_version(value: Any) -> bool:
    """Whether Go's ``strconv.ParseUint(value, 10, 64)`` gives a non-zero number."""
    text = value if isinstance(value, str) else ""
    return text.isascii() and text.isdigit() and 0 < int(text) < 2**64


def _group_of(rt: ResourceType) -> str:
    return rt.group


class ResourceAPI:
    """Generic REST logic over :class:`Store`, parameterised by :class:`ResourceType`."""

    def __init__(self, store: Store, registry: Registry, context_factory: Callable[..., Context]) -> None:
        self.store = store
        self.registry = registry
        self.context_factory = context_factory
        # called after every stored change of a CRD (to establish it and refresh discovery)
        self.on_crd_change: Callable[[Obj], None] = lambda crd: None
        self.on_service_delete: Callable[[Obj], None] = lambda svc: None
        # checks that need the authorizer, (rt, subresource, new, old or None, context) raising 403:
        # RBAC escalation, before validation, and validating admission (CSR approval and signing)
        self.escalation_check: WriteCheck = _no_check
        self.validating_admission: WriteCheck = _no_check
        # admission webhooks (localkube.admission_webhooks): no-ops unless the server wires them
        self.webhooks: Any = noop_hooks()

    # -- helpers --------------------------------------------------------------
    def _not_found(self, rt: ResourceType, name: str) -> APIError:
        return not_found(rt.plural, rt.group, name)

    def _view(self, rt: ResourceType, obj: Obj) -> Obj:
        """The stored object as seen through ``rt``'s version."""
        view = clone(obj)
        view["apiVersion"] = rt.api_version
        view["kind"] = rt.kind
        if rt.storage == "events":
            from localkube.events import to_view

            view = to_view(view, rt.group)
        elif rt.group == "autoscaling" and rt.version == "v1":
            view = autoscaling.to_v1(view)
        return view

    def shared_view(self, rt: ResourceType, obj: Obj) -> Obj:
        """:meth:`_view` for a caller that encodes it at once and drops it: when the version's
        view only renames the object, a shallow copy sharing the stored object's parts (which
        are never changed in place)."""
        if rt.storage == "events" or (rt.group == "autoscaling" and rt.version == "v1"):
            return self._view(rt, obj)  # converted, not only renamed
        return {**obj, "apiVersion": rt.api_version, "kind": rt.kind}

    def _answer(self, rt: ResourceType, obj: Obj, options: WriteOptions) -> Obj:
        """A write's answer: :meth:`_view`, or :meth:`shared_view` for a caller that only encodes it."""
        return self.shared_view(rt, obj) if options.answer_only else self._view(rt, obj)

    def _to_storage(self, rt: ResourceType, obj: Obj) -> Obj:
        if rt.storage == "events":
            from localkube.events import from_view

            return from_view(obj, rt.group)
        if rt.group == "autoscaling" and rt.version == "v1":
            return autoscaling.from_v1(obj)
        return obj

    def check_namespace(self, rt: ResourceType, namespace: str, creating: bool) -> None:
        if not rt.namespaced:
            return
        ns = self.store.get("/namespaces", "", namespace)
        if ns is None:
            raise not_found("namespaces", "", namespace)
        if creating and ns["metadata"].get("deletionTimestamp"):
            raise forbidden(
                f'{rt.plural} "" is forbidden: unable to create new content in namespace {namespace} '
                "because it is being terminated",
                resource=rt.plural,
                group=rt.group,
                causes=[
                    Cause(
                        "NamespaceTerminating",
                        f"namespace {namespace} is being terminated",
                        "metadata.namespace",
                    )
                ],
            )

    def _check_body_identity(self, rt: ResourceType, obj: Any, namespace: str, name: str | None) -> Obj:
        if not isinstance(obj, dict):
            raise bad_request(
                f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: body must be a JSON object'
            )
        api_version = obj.get("apiVersion")
        kind = obj.get("kind")
        if api_version is None:
            obj["apiVersion"] = rt.api_version
        elif api_version != rt.api_version:
            raise bad_request(
                f"the API version in the data ({api_version}) does not match the expected API version "
                f"({rt.api_version})"
            )
        if kind is None:
            obj["kind"] = rt.kind
        elif kind != rt.kind:
            raise bad_request(
                f'{kind} in version "{rt.version}" cannot be handled as a {rt.kind}: '
                "the object provided is unrecognized"
                f" (must be of type {rt.kind})"
            )
        meta = _meta(obj)
        if not isinstance(meta, dict):
            raise bad_request(
                f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: metadata must be an object'
            )
        if rt.namespaced:
            body_ns = meta.get("namespace")
            if body_ns and body_ns != namespace:
                raise bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        if name is not None and meta.get("name") and meta["name"] != name:
            raise bad_request(f"the name of the object ({meta['name']}) does not match the name on the URL ({name})")
        if name is not None and not meta.get("name"):
            meta["name"] = name
        return obj

    def _schema_process(self, rt: ResourceType, obj: Obj, options: WriteOptions) -> list[str]:
        """Drop unknown fields (an error under fieldValidation=Strict, warnings
        under Warn), then default a custom resource; returns warnings."""
        if not rt.custom:
            group, version = _stored_version(rt)
            self._check_integers(rt, obj)
            dropped = builtin_schemas.prune_unknown_fields(obj, group, version, rt.kind)
        elif rt.schema is not None:
            dropped = crds.prune_custom_resource(obj, rt.schema)
        else:
            return []
        warnings: list[str] = []
        if dropped and options.field_validation == "Strict":
            fields = ", ".join(f'unknown field "{d}"' for d in dropped)
            raise bad_request(
                f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: strict decoding error: {fields}'
            )
        if dropped and options.field_validation == "Warn":
            warnings = [f'unknown field "{d}"' for d in dropped]
        if rt.custom and rt.schema is not None:
            crds.apply_defaults(obj, rt.schema)
        return warnings

    def _check_integers(self, rt: ResourceType, obj: Obj) -> None:
        """400 for a number the built-in kind's Go type cannot hold (Go's decoder fails on it)."""
        if rt.custom:
            return
        group, version = ("", "v1") if rt.group == "events.k8s.io" else (rt.group, rt.version)
        problem = integer_problem(obj, group, version, rt.kind)
        if problem is not None:
            raise bad_request(f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: {problem}')

    def _validate(self, rt: ResourceType, obj: Obj, old: Obj | None, subresource: str = "") -> None:
        causes = validate_metadata(obj, rt.kind, rt.namespaced)
        strategy = strategy_for(rt.kind)
        if not rt.custom:
            causes += validation.validate(rt.kind, obj, old, subresource)
            causes += strategy.validate(obj) if old is None else strategy.validate_update(obj, old)
        elif rt.schema is not None:
            causes += crds.validate_custom_resource(obj, rt.schema, old)
        if old is not None:
            forbidden_cause = new_finalizers_forbidden(old, obj)
            if forbidden_cause:
                causes.append(forbidden_cause)
        if causes:
            raise invalid(rt.kind, rt.group, _meta(obj).get("name", ""), causes)
        size = len(json_codec.dumps(obj))
        if size > MAX_OBJECT_BYTES:
            # etcd's request limit; kube-apiserver passes etcd's error on, here it is a 413 naming the limit
            raise APIError(413, "RequestEntityTooLarge", f"Request entity too large: limit is {MAX_OBJECT_BYTES}")

    def _spec_changed(self, rt: ResourceType, new: Obj, old: Obj) -> bool:
        if rt.custom:
            skip = {"metadata", "status"} if rt.status else {"metadata"}
            return {k: v for k, v in new.items() if k not in skip} != {k: v for k, v in old.items() if k not in skip}
        return new.get("spec") != old.get("spec")

    # -- create ---------------------------------------------------------------
    def create(
        self,
        rt: ResourceType,
        namespace: str,
        body: Any,
        context: Context,
        options: WriteOptions,
        managed: bool = False,
    ) -> Result:
        if rt.crd and self._crd_terminating(rt):
            raise method_not_allowed_for_terminating()
        obj = self._check_body_identity(rt, body, namespace, None)
        obj = self._to_storage(rt, obj)
        meta = _meta(obj)
        if _parses_as_nonzero_version(meta.get("resourceVersion")):
            # etcd3's store refuses only a version that parses (as uint64) to non-zero, and
            # kube-apiserver answers its plain error with a 500; the client's mistake gets a 400 here
            raise bad_request("resourceVersion should not be set on objects to be created")
        meta.pop("resourceVersion", None)  # anything else is cleared, as PrepareObjectForStorage does
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = generate_name(str(meta["generateName"]))
        self.check_namespace(rt, namespace, creating=True)
        warnings = self._schema_process(rt, obj, options)
        for key in (
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
            "selfLink",
        ):
            meta.pop(key, None)
        meta["uid"] = new_uid()
        meta["creationTimestamp"] = now_time()
        if rt.generation:
            meta["generation"] = 1
        if rt.status and rt.kind not in ("Namespace", "Service", "Pod"):
            obj.pop("status", None)
        if not rt.custom:
            admission.admit(self.store, rt.kind, obj, None)
        self.escalation_check(rt, "", obj, None, context)
        strategy_for(rt.kind).prepare_create(obj, context)
        if not rt.custom:
            zero_values.fill(obj, rt.group, rt.version, rt.kind)
        self.webhooks.mutate(rt, "", obj, None)
        meta = _meta(obj)
        self._validate(rt, obj, None)
        name = meta.get("name", "")
        if self.store.get(rt.storage_key, namespace if rt.namespaced else "", name) is not None:
            raise already_exists(rt.plural, rt.group, name)
        admission.validate(self.store, rt.group, rt.plural, obj, None)
        self.webhooks.validate(rt, "", obj, None)
        if not managed:
            # kube-apiserver compares a created object with a new empty one of its kind: the
            # struct fields Go always writes (a Deployment's spec.template) are not "added"
            empty = None if rt.custom else zero_values.zero_object(rt.group, rt.version, rt.kind)
            track_update(empty, obj, self.field_write(rt, options, ""))
        if options.dry_run:
            return Result(self._view(rt, obj), 201, warnings)
        stored = self.store.put(rt.storage_key, obj, "ADDED")
        if rt.kind == "CustomResourceDefinition":
            self.on_crd_change(stored)
            stored = self.store.get(rt.storage_key, "", name) or stored
        return Result(self._answer(rt, stored, options), 201, warnings)

    def _crd_terminating(self, rt: ResourceType) -> bool:
        crd = self.store.get("apiextensions.k8s.io/customresourcedefinitions", "", rt.crd)
        return bool(crd and crd["metadata"].get("deletionTimestamp"))

    def field_write(self, rt: ResourceType, options: WriteOptions, subresource: str) -> Write:
        """What the field manager needs to record a write through ``rt``."""
        group, version = _stored_version(rt)
        return Write(
            schema=root_schema(group, version, rt.kind, rt.schema, rt.custom),
            manager=options.field_manager or options.default_manager or INTERNAL_MANAGER,
            api_version=rt.api_version,
            subresource=subresource,
            has_status=bool(rt.status),
            now=now_time(),
        )

    def write_internal(self, rt: ResourceType, obj: Obj, old: Obj, subresource: str) -> Result:
        """A write by localkube itself (a controller's), with the stored object's resourceVersion."""
        obj["metadata"]["resourceVersion"] = old["metadata"].get("resourceVersion")
        return self._update_existing(rt, obj, old, subresource, INTERNAL_CONTEXT, WriteOptions())

    # -- read -------------------------------------------------------------------
    def get(self, rt: ResourceType, namespace: str, name: str) -> Obj:
        obj = self.store.get(rt.storage_key, namespace if rt.namespaced else "", name)
        if obj is None:
            raise self._not_found(rt, name)
        view = self._view(rt, obj)
        if rt.custom and rt.schema is not None:
            crds.apply_defaults(view, rt.schema)
        return view

    def stored(self, rt: ResourceType, namespace: str, name: str) -> Obj | None:
        return self.store.get(rt.storage_key, namespace if rt.namespaced else "", name)

    # -- update -----------------------------------------------------------------
    def update(
        self,
        rt: ResourceType,
        namespace: str,
        name: str,
        body: Any,
        subresource: str,
        context: Context,
        options: WriteOptions,
    ) -> Result:
        obj = self._check_body_identity(rt, body, namespace, name)
        obj = self._to_storage(rt, obj)
        old = self.stored(rt, namespace, name)
        if old is None:
            if subresource or not rt.create_on_update:
                raise self._not_found(rt, name)
            _meta(obj).pop("resourceVersion", None)
            return self.create(rt, namespace, obj, context, options)
        return self._update_existing(rt, obj, old, subresource, context, options)

    def _update_existing(
        self,
        rt: ResourceType,
        obj: Obj,
        old: Obj,
        subresource: str,
        context: Context,
        options: WriteOptions,
        managed: bool = False,
    ) -> Result:
        self.webhooks.began(rt, old)
        meta = _meta(obj)
        old_meta = old["metadata"]
        name = old_meta["name"]
        rv = meta.get("resourceVersion")
        if rv:
            if str(rv) != old_meta.get("resourceVersion"):
                raise conflict(rt.plural, rt.group, name, MODIFIED)
        elif not rt.unconditional_update:
            raise invalid(
                rt.kind,
                rt.group,
                name,
                [field_invalid("metadata.resourceVersion", GoLiteral("0x0"), "must be specified for an update")],
            )
        if meta.get("uid") and meta["uid"] != old_meta.get("uid"):
            raise conflict(
                rt.plural,
                rt.group,
                name,
                f"Precondition failed: UID in precondition: {meta['uid']}, UID in object meta: {old_meta.get('uid')}",
            )
        warnings: list[str] = []
        if subresource == "status":
            self._check_integers(rt, obj)
            obj = self._status_update(rt, obj, old)
        elif subresource == "finalize" and rt.kind == "Namespace":
            finalizers = (obj.get("spec") or {}).get("finalizers")
            obj = clone(old)
            obj.setdefault("spec", {})["finalizers"] = finalizers or []
        elif subresource == "approval":
            from localkube.csr import approval_update

            obj = approval_update(obj, old, context)
        elif subresource == "binding":
            pass  # the binding subresource sets spec.nodeName and the PodScheduled condition at once
        elif subresource == "ephemeralcontainers":
            from localkube.pod_subresources import set_ephemeral_containers

            obj = set_ephemeral_containers(obj, old)
        elif subresource:
            raise resource_not_found()
        else:
            warnings = self._schema_process(rt, obj, options)
            if rt.status:
                if "status" in old:
                    obj["status"] = clone(old["status"])
                else:
                    obj.pop("status", None)
            strategy_for(rt.kind).prepare_update(obj, old, context)
            if not rt.custom:
                admission.admit(self.store, rt.kind, obj, old)
        if not rt.custom:
            zero_values.fill(obj, rt.group, rt.version, rt.kind)
        self.webhooks.mutate(rt, subresource, obj, old)
        meta = _meta(obj)
        for key in (
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
        ):
            if key in old_meta:
                meta[key] = old_meta[key]
            else:
                meta.pop(key, None)
        meta.pop("selfLink", None)
        if rt.generation and self._spec_changed(rt, obj, old):
            meta["generation"] = int(old_meta.get("generation", 1)) + 1
        self.escalation_check(rt, subresource, obj, old, context)
        self._validate(rt, obj, old, subresource)
        self.validating_admission(rt, subresource, obj, old, context)
        if not subresource:
            admission.validate(self.store, rt.group, rt.plural, obj, old)
        self.webhooks.validate(rt, subresource, obj, old)
        if not managed:
            track_update(old, obj, self.field_write(rt, options, subresource))
        return self._commit_update(rt, obj, old, options, warnings)

    def _commit_update(
        self, rt: ResourceType, obj: Obj, old: Obj, options: WriteOptions, warnings: list[str]
    ) -> Result:
        meta = obj["metadata"]
        meta["resourceVersion"] = old["metadata"].get("resourceVersion")
        if options.dry_run:
            return Result(self._view(rt, obj), 200, warnings)
        if meta.get("deletionTimestamp") and not meta.get("finalizers") and not self._graceful_pending(rt, obj):
            final = self.store.delete(rt.storage_key, meta.get("namespace", ""), meta["name"])
            self._after_delete(rt, final or obj)
            return Result(self._view(rt, final or obj), 200, warnings)
        if obj == old:
            return Result(self._answer(rt, old, options), 200, warnings)  # no-op write: same RV, no event
        stored = self.store.put(rt.storage_key, obj, "MODIFIED")
        if rt.kind == "CustomResourceDefinition":
            self.on_crd_change(stored)
            stored = self.store.get(rt.storage_key, "", meta["name"]) or stored
        return Result(self._answer(rt, stored, options), 200, warnings)

    def _graceful_pending(self, rt: ResourceType, obj: Obj) -> bool:
        if rt.kind == "Pod" and not rt.group:
            return grace_left(obj)  # its kubelet has not finished yet
        return rt.kind == "Namespace" and bool((obj.get("spec") or {}).get("finalizers"))

    def _status_update(self, rt: ResourceType, obj: Obj, old: Obj) -> Obj:
        if not rt.status:
            raise resource_not_found()
        if rt.custom:
            new = clone(old)
            if "status" in obj:
                new["status"] = obj["status"]
            else:
                new.pop("status", None)
            new["metadata"]["resourceVersion"] = obj["metadata"].get("resourceVersion")
            return new
        new = clone(obj)
        if "spec" in old:
            new["spec"] = clone(old["spec"])
        else:
            new.pop("spec", None)
        if rt.kind == "Deployment" and "labels" in old["metadata"]:
            new["metadata"]["labels"] = clone(old["metadata"]["labels"])
        if rt.kind == "CertificateSigningRequest":
            from localkube.csr import status_update

            new = status_update(new, old)
        return new

    # -- patch ------------------------------------------------------------------
    def patch(
        self,
        rt: ResourceType,
        namespace: str,
        name: str,
        content_type: str,
        raw: bytes,
        subresource: str,
        context: Context,
        options: WriteOptions,
    ) -> Result:
        media = content_type.split(";", maxsplit=1)[0].strip().lower()
        kind = PATCH_TYPES.get(media)
        accepted = [m for m in PATCH_TYPES if not (rt.custom and PATCH_TYPES[m] == "strategic")]
        if kind is None or (kind == "strategic" and rt.custom):
            raise unsupported_media_type(accepted)
        if options.force and kind != "apply":
            raise invalid(
                "PatchOptions",
                "meta.k8s.io",
                "",
                [Cause("FieldValueForbidden", "Forbidden: may not be specified for non-apply patch", "force")],
            )
        body = decode_body(raw, media, f"{rt.kind}")
        old = self.stored(rt, namespace, name)
        if kind == "apply":
            from localkube.apply import server_side_apply

            return server_side_apply(self, rt, namespace, name, body, old, subresource, context, options)
        if old is None:
            raise self._not_found(rt, name)
        current = self._view(rt, old)
        if rt.custom and rt.schema is not None:
            crds.apply_defaults(current, rt.schema)
        try:
            if kind == "json":
                patched = json_patch(current, body)
            elif kind == "merge":
                if not isinstance(body, dict):
                    raise bad_request("json: cannot unmarshal array into Go value of type map[string]interface {}")
                patched = merge_patch(current, body)
            else:
                if not isinstance(body, dict):
                    raise bad_request("json: cannot unmarshal array into Go value of type map[string]interface {}")
                patched = strategic_merge(current, body, "", rt.kind)
        except PatchFailed as exc:
            raise APIError(422, "Invalid", str(exc)) from None
        if not isinstance(patched, dict):
            raise bad_request("the patched object is not an object")
        patched_meta = _meta(patched)
        if patched_meta.get("resourceVersion") == old["metadata"].get("resourceVersion") or not patched_meta.get(
            "resourceVersion"
        ):
            patched_meta["resourceVersion"] = old["metadata"].get("resourceVersion")
        obj = self._check_body_identity(rt, patched, namespace, name)
        obj = self._to_storage(rt, obj)
        return self._update_existing(rt, obj, old, subresource, context, options)

    # -- delete -----------------------------------------------------------------
    def delete(self, rt: ResourceType, namespace: str, name: str, options_body: Obj, dry_run: bool) -> Result:
        old = self.stored(rt, namespace, name)
        if old is None:
            raise self._not_found(rt, name)
        if rt.kind == "Namespace" and name in PROTECTED_NAMESPACES:
            raise forbidden(
                f'namespaces "{name}" is forbidden: this namespace may not be deleted',
                resource="namespaces",
                name=name,
            )
        preconditions = options_body.get("preconditions") or {}
        meta = old["metadata"]
        if preconditions.get("uid") and preconditions["uid"] != meta.get("uid"):
            raise conflict(
                rt.plural,
                rt.group,
                name,
                f"Precondition failed: UID in precondition: {preconditions['uid']}, "
                f"UID in object meta: {meta.get('uid')}",
            )
        if preconditions.get("resourceVersion") and preconditions["resourceVersion"] != meta.get("resourceVersion"):
            raise conflict(
                rt.plural,
                rt.group,
                name,
                f"Precondition failed: ResourceVersion in precondition: {preconditions['resourceVersion']}, "
                f"ResourceVersion in object meta: {meta.get('resourceVersion')}",
            )
        policy = options_body.get("propagationPolicy")
        orphan = options_body.get("orphanDependents")
        if policy is not None and orphan is not None:
            raise invalid(
                "DeleteOptions",
                "meta.k8s.io",
                "",
                [
                    Cause(
                        "FieldValueInvalid",
                        'Invalid value: "": orphanDependents and deletionPropagation cannot be both set',
                        "propagationPolicy",
                    )
                ],
            )
        if policy is not None and policy not in ("Orphan", "Background", "Foreground"):
            raise invalid(
                "DeleteOptions",
                "meta.k8s.io",
                "",
                [
                    Cause(
                        "FieldValueNotSupported",
                        f'Unsupported value: "{policy}": supported values: "Foreground", "Background", "Orphan"',
                        "propagationPolicy",
                    )
                ],
            )
        self.webhooks.began(rt, old)
        self.webhooks.validate(rt, "", None, old)
        obj = clone(old)
        finalizers = list(obj["metadata"].get("finalizers") or [])
        if policy is None and orphan is not None:
            policy = "Orphan" if orphan else "Background"
        if policy is None:
            policy = (
                "Orphan"
                if "orphan" in finalizers
                else "Foreground"
                if "foregroundDeletion" in finalizers
                else "Background"
            )
        if rt.kind == "CustomResourceDefinition" and "customresourcecleanup.apiextensions.k8s.io" not in finalizers:
            finalizers.append("customresourcecleanup.apiextensions.k8s.io")
        if policy == "Orphan":
            finalizers = [f for f in finalizers if f != "foregroundDeletion"]
            if "orphan" not in finalizers:
                finalizers.append("orphan")
        elif policy == "Foreground":
            finalizers = [f for f in finalizers if f != "orphan"]
            if "foregroundDeletion" not in finalizers:
                finalizers.append("foregroundDeletion")
        else:
            finalizers = [f for f in finalizers if f not in ("orphan", "foregroundDeletion")]
        obj["metadata"]["finalizers"] = finalizers
        if not finalizers:
            obj["metadata"].pop("finalizers", None)
        if rt.kind == "Pod" and not rt.group:
            plan = plan_pod_deletion(obj, options_body)
            if plan is Plan.PENDING:
                return Result(self._view(rt, old), 200)
            if plan is Plan.GRACEFUL:
                return self._delete_gracefully(rt, obj, dry_run)
        pending = bool(finalizers) or (rt.kind == "Namespace")
        if dry_run:
            return Result(self._view(rt, obj), 200)
        if pending:
            if not obj["metadata"].get("deletionTimestamp"):
                obj["metadata"]["deletionTimestamp"] = now_time()
                obj["metadata"]["deletionGracePeriodSeconds"] = 0
                if rt.generation:
                    obj["metadata"]["generation"] = int(obj["metadata"].get("generation", 1)) + 1
            if rt.kind == "Namespace":
                obj.setdefault("status", {})["phase"] = "Terminating"
            if obj == old:
                return Result(self._view(rt, old), 200)
            stored = self.store.put(rt.storage_key, obj, "MODIFIED")
            if rt.kind == "CustomResourceDefinition":
                self.on_crd_change(stored)
            return Result(self._view(rt, stored), 200)
        final = self.store.delete(rt.storage_key, namespace if rt.namespaced else "", name) or old
        self._after_delete(rt, final)
        if rt.delete_returns_object:
            return Result(self._view(rt, final), 200)
        details: Obj = {"name": name, "kind": rt.plural, "uid": meta.get("uid")}
        if rt.group:
            details["group"] = rt.group
        return Result(
            {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details},
            200,
        )

    def _delete_gracefully(self, rt: ResourceType, obj: Obj, dry_run: bool) -> Result:
        """Store the deletion timestamp and grace period (watchers see MODIFIED); remove the
        object at once only when no grace and no finalizer is left, as kube-apiserver does."""
        if dry_run:
            return Result(self._view(rt, obj), 200)
        meta = obj["metadata"]
        stored = self.store.put(rt.storage_key, obj, "MODIFIED")
        if grace_left(stored) or meta.get("finalizers"):
            return Result(self._view(rt, stored), 200)
        final = self.store.delete(rt.storage_key, meta.get("namespace", ""), meta["name"]) or stored
        self._after_delete(rt, final)
        return Result(self._view(rt, final), 200)

    def _after_delete(self, rt: ResourceType, obj: Obj) -> None:
        if rt.kind == "Service":
            self.on_service_delete(obj)
        if rt.kind == "CustomResourceDefinition":
            self.on_crd_change(obj)


def method_not_allowed_for_terminating() -> APIError:
    return APIError(405, "MethodNotAllowed", "create not allowed while custom resource definition is terminating")


__all__ = ["PATCH_TYPES", "ResourceAPI", "Result", "WriteOptions", "decode_body", "method_not_allowed"]
