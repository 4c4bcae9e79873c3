"""The webhook's HTTPS server: AdmissionReview v1 in, AdmissionReview v1 out.

One aiohttp application, one handler per Karmada webhook path
(``/validate-propagationpolicy``, ``/mutate-work`` ...). Each request is
decoded, handed to the pure rules in :mod:`karmada.validation`, and answered
with ``allowed`` (plus a base64 JSONPatch for mutations) or a denial whose
``status.message`` is Karmada's sentence (kube-apiserver prefixes it with
``admission webhook "<name>" denied the request:``). Handlers run on the event
loop and never block on I/O except the ResourceInterpreterCustomization check,
which lists the existing customizations from the API server when a client was
given (Karmada lists them from its cache).
"""

from __future__ import annotations

import base64
import json
import logging
import ssl
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from karmada.kube import KubeClient
from karmada.kube.resources import Resource
from karmada.validation import Context, Request, json_patch, mutate, review

log = logging.getLogger("webhook")
Obj = dict[str, Any]
CUSTOMIZATIONS = Resource(
    "config.karmada.io", "v1alpha1", "resourceinterpretercustomizations", "ResourceInterpreterCustomization", False
)

# path suffix -> kind, as Karmada's karmada-webhook registers them
VALIDATING = {
    "propagationpolicy": "PropagationPolicy",
    "clusterpropagationpolicy": "ClusterPropagationPolicy",
    "overridepolicy": "OverridePolicy",
    "clusteroverridepolicy": "ClusterOverridePolicy",
    "resourcebinding": "ResourceBinding",
    "resourceinterpretercustomization": "ResourceInterpreterCustomization",
    "clustertaintpolicy": "ClusterTaintPolicy",
    "resourcedeletionprotection": "",  # any kind, DELETE only
    "cluster": "Cluster",  # ours: Karmada validates Clusters in its aggregated API server
}
MUTATING = {
    "propagationpolicy": "PropagationPolicy",
    "clusterpropagationpolicy": "ClusterPropagationPolicy",
    "overridepolicy": "OverridePolicy",
    "resourcebinding": "ResourceBinding",
    "clusterresourcebinding": "ClusterResourceBinding",
    "work": "Work",
    "cluster": "Cluster",
}


@dataclass
class Settings:
    """What the handlers need besides the request."""

    allow_no_execute_taint_policy: bool = False
    client: KubeClient | None = None


def _response(uid: str, allowed: bool, message: str = "", code: int = 403, patch: list[Obj] | None = None) -> Obj:
    """An AdmissionReview response as controller-runtime builds them: allowed (code 200, or a
    JSONPatch), denied (403 Forbidden with the message), or errored (another code)."""
    response: Obj = {"uid": uid, "allowed": allowed}
    if patch:
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(json.dumps(patch).encode()).decode()
    elif allowed:
        response["status"] = {"code": 200}
    else:
        response["status"] = {"code": code, "message": message}
        if code == 403:
            response["status"]["reason"] = "Forbidden"
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}


def _admission_request(body: Any) -> Mapping[str, Any]:
    if not isinstance(body, Mapping) or not isinstance(body.get("request"), Mapping):
        raise ValueError("the body is not an AdmissionReview with a request")
    request: Mapping[str, Any] = body["request"]
    return request


async def _customizations(settings: Settings) -> list[Obj]:
    if settings.client is None:
        return []
    listed = await settings.client.list(CUSTOMIZATIONS)
    return list(listed.get("items") or [])


async def _read(request: web.Request) -> tuple[str, Mapping[str, Any]] | web.Response:
    try:
        body = await request.json()
        admission = _admission_request(body)
    except ValueError as exc:
        return web.json_response({"message": f"cannot decode the AdmissionReview: {exc}"}, status=400)
    return str(admission.get("uid", "")), admission


def _request(admission: Mapping[str, Any], kind: str) -> Request:
    return Request(
        kind=kind or str((admission.get("kind") or {}).get("kind") or ""),
        operation=str(admission.get("operation", "")),
        object=admission.get("object"),
        old_object=admission.get("oldObject"),
        namespace=str(admission.get("namespace") or ""),
        groups=tuple(str(group) for group in (admission.get("userInfo") or {}).get("groups") or ()),
    )


def validating_handler(kind: str, settings: Settings) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handle(request: web.Request) -> web.Response:
        read = await _read(request)
        if isinstance(read, web.Response):
            return read
        uid, admission = read
        operation = str(admission.get("operation", ""))
        if kind == "" and operation != "DELETE":
            return web.json_response(_response(uid, True))
        customizations: list[Obj] = []
        if kind == "ResourceInterpreterCustomization":
            try:
                customizations = await _customizations(settings)
            except Exception as exc:  # the API server is unreachable: Karmada answers 500 too
                return web.json_response(_response(uid, False, f"listing customizations: {exc}", code=500))
        try:
            message = review(_request(admission, kind), Context(customizations, settings.allow_no_execute_taint_policy))
        except (AttributeError, TypeError, ValueError) as exc:  # an object the rules cannot read
            return web.json_response(_response(uid, False, f"cannot decode the object: {exc}", code=400))
        if message is not None:
            log.info("denied %s %s %s: %s", operation, kind or "object", _name(admission), message)
            return web.json_response(_response(uid, False, message))
        return web.json_response(_response(uid, True))

    return handle


def mutating_handler(kind: str) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handle(request: web.Request) -> web.Response:
        read = await _read(request)
        if isinstance(read, web.Response):
            return read
        uid, admission = read
        obj = admission.get("object")
        if not isinstance(obj, Mapping):
            return web.json_response(_response(uid, False, "the request carries no object", code=400))
        operation = str(admission.get("operation", ""))
        try:
            mutated = mutate(kind, obj, operation, str(admission.get("namespace") or ""))
        except (AttributeError, TypeError, ValueError) as exc:
            return web.json_response(_response(uid, False, f"cannot decode the object: {exc}", code=400))
        return web.json_response(_response(uid, True, patch=json_patch(obj, mutated)))

    return handle


def _name(admission: Mapping[str, Any]) -> str:
    namespace, name = admission.get("namespace"), admission.get("name")
    return f"{namespace}/{name}" if namespace else str(name or "")


async def _ready(_: web.Request) -> web.Response:
    return web.Response(text="ok")


def build_app(settings: Settings) -> web.Application:
    app = web.Application(client_max_size=16 * 1024 * 1024)  # Works can carry large manifests
    for suffix, kind in VALIDATING.items():
        app.router.add_post(f"/validate-{suffix}", validating_handler(kind, settings))
    for suffix, kind in MUTATING.items():
        app.router.add_post(f"/mutate-{suffix}", mutating_handler(kind))
    app.router.add_get("/readyz", _ready)
    app.router.add_get("/healthz", _ready)
    return app


def server_ssl_context(cert_file: str, key_file: str) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert_file, key_file)
    return context
