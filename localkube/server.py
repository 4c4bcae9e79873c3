"""The HTTPS server: it wires the parts together (store, registry, ResourceAPI,
authentication, authorization, seeding, watches, controllers, simulation) and
routes each request to them, with content negotiation and lists. Each part gets
the narrow objects it uses; none imports this module back (import-linter checks
it), only the command line does.

One aiohttp application on one event loop. :class:`LocalKube` starts and stops
in-process (tests) or from ``localkube serve``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import functools
import gc
import hashlib
import json
import logging
import socket
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from aiohttp import web

from localkube import admission_webhooks as webhooks
from localkube import discovery, json_codec, openapi, paging, protobuf, proxy
from localkube import tables as tablemod
from localkube.api import ResourceAPI, WriteOptions, decode_body
from localkube.auth import Attributes, Identity, forbidden_message
from localkube.authentication import Authenticator
from localkube.crd import apply_defaults, established_status, resource_types
from localkube.csr import admit as csr_admission
from localkube.decoding import MAX_BODY_BYTES, read_body
from localkube.errors import (
    APIError,
    bad_request,
    forbidden,
    invalid,
    method_not_allowed,
    not_acceptable,
    resource_not_found,
    too_large,
    unsupported_media_type,
)
from localkube.flowcontrol import (
    MAX_MUTATING_REQUESTS_INFLIGHT,
    MAX_REQUESTS_INFLIGHT,
    WAIT_LIMIT,
    FlowControl,
    long_running,
)
from localkube.given_pki import GivenPKI
from localkube.impersonation import impersonate
from localkube.internal_errors import internal_error, new_request_id
from localkube.journal import DEFAULT_COMPACT_BYTES, Journal
from localkube.kinds import Context, ServiceIPAllocator, field_supported
from localkube.metrics import RequestMetrics
from localkube.pki import CertificateAuthority, cert_pem
from localkube.private_files import narrow, private_directory, write_private
from localkube.query import parse_resource_version
from localkube.rbac import Authorizer
from localkube.rbac_escalation import check_rbac_write
from localkube.request_options import list_options_problem, read_delete_options, truthy, write_options
from localkube.requestinfo import RequestInfo, parse_request
from localkube.resources import Registry, ResourceType
from localkube.seeding import Seeder
from localkube.selectors import fields_match, labels_match, parse_field_selector, parse_label_selector
from localkube.serving_tls import server_context
from localkube.simulation import SimulationConfig
from localkube.store import Store
from localkube.tokens import TokenSigner
from localkube.watch import Watches, watch_options

# what a request addressed, kept for the request counters once it is answered
REQUEST_INFO = web.RequestKey("info", RequestInfo)
REQUEST_USER = web.RequestKey("user", str)  # who made the request (after impersonation)
log = logging.getLogger("localkube")

Obj = dict[str, Any]
MAX_BODY = MAX_BODY_BYTES
LIST_SLICE = 50  # objects a LIST builds or encodes before letting other requests run
SLOW_REQUEST = 1.0  # seconds: a request answered later than this is logged (kube-apiserver traces at 0.5 to 1 s)
T = TypeVar("T")
JSON = "application/json"
# the Pod subresources localkube serves as the kubelet would, and their options' kinds
POD_STREAMS = {
    "log": "PodLogOptions",
    "exec": "PodExecOptions",
    "attach": "PodAttachOptions",
    "portforward": "PodPortForwardOptions",
}
BODY_TYPES = ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"]


def warning_header(text: str) -> str:
    """One RFC 7234 warning value: code 299, agent "-", quoted text with escapes."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{escaped}"'


async def in_slices(items: list[Any], function: Callable[[Any], T]) -> list[T]:
    """``[function(i) for i in items]``, letting the loop run other tasks every ``LIST_SLICE``
    items: a page of 500 large objects is a few hundred milliseconds of CPU, and a leader's
    Lease renewal arriving meanwhile must not wait behind every informer listing at once."""
    done: list[T] = []
    for start in range(0, len(items), LIST_SLICE):
        if start:
            await asyncio.sleep(0)
        done.extend(function(item) for item in items[start : start + LIST_SLICE])
    return done


def _dump(obj: Any, pretty: bool = False) -> bytes:
    if pretty:
        return json.dumps(obj, indent=2).encode()
    return json_codec.dumps(obj)


async def _exact_media_type(request: web.Request, response: web.StreamResponse) -> None:
    """``application/json`` and ``application/yaml`` without aiohttp's ``; charset=utf-8``:
    kube-apiserver sends the bare media type and some clients compare it exactly."""
    if response.content_type in (JSON, "application/yaml") and response.charset:
        response.charset = None


def abort_accepted_connections(ports: set[int]) -> None:
    """Close connections accepted on ``ports`` that aiohttp never saw (still in their TLS
    handshake as the server stopped): asyncio before 3.13 gives a server no handle on them,
    and left open they would be collected later with a ResourceWarning. One sweep of the
    heap serves any number of servers."""
    loop = asyncio.get_running_loop()
    for candidate in gc.get_objects():
        if not isinstance(candidate, asyncio.Transport) or getattr(candidate, "_loop", None) is not loop:
            continue
        if candidate.is_closing():
            continue  # e.g. a finished webhook call's TLS transport, which answers no more questions
        sockname = candidate.get_extra_info("sockname")
        if isinstance(sockname, tuple) and len(sockname) >= 2 and sockname[1] in ports:
            candidate.abort()


def _data_dir_ca(data_dir: Path) -> CertificateAuthority:
    """The CA kept in ``data_dir``, made at the first start."""
    ca_cert, ca_key = data_dir / "ca.crt", data_dir / "ca.key"
    if ca_cert.exists() and ca_key.exists():
        narrow(ca_cert)
        narrow(ca_key)
        return CertificateAuthority.load(ca_cert, ca_key)
    ca = CertificateAuthority.create()
    ca.save(ca_cert, ca_key)
    return ca


@dataclass
class ServerConfig:
    """How to run one localkube."""

    host: str = "127.0.0.1"
    port: int = 0
    data_dir: Path | None = None
    hosts: list[str] = field(default_factory=lambda: ["127.0.0.1", "localhost"])
    history: int = 2000
    # the journal is compacted into the snapshot beyond max(this, 2 × snapshot size)
    journal_compact_bytes: int = DEFAULT_COMPACT_BYTES
    static_tokens: dict[str, tuple[str, list[str]]] = field(default_factory=dict)
    static_token_uids: dict[str, str] = field(default_factory=dict)  # token -> uid (--token-auth-file)
    # certificates and keys given as files (--tls-cert-file ...): they win over data_dir's
    pki: GivenPKI = field(default_factory=GivenPKI)
    anonymous: bool = True
    simulation: SimulationConfig = field(default_factory=SimulationConfig)
    # API Priority and Fairness: the two limits' sum is the seats of all priority levels
    max_requests_inflight: int = MAX_REQUESTS_INFLIGHT
    max_mutating_requests_inflight: int = MAX_MUTATING_REQUESTS_INFLIGHT
    request_wait_limit: float = WAIT_LIMIT


class LocalKube:
    """A running (or startable) API server."""

    def __init__(self, config: ServerConfig | None = None) -> None:
        self.config = config or ServerConfig()
        data_dir = self.config.data_dir
        given = self.config.pki
        if data_dir is not None:
            private_directory(data_dir)
            self.ca = given.signing_ca or _data_dir_ca(data_dir)
            self.token_signer = given.token_signer or TokenSigner.load_or_create(data_dir)
            journal: Journal | None = Journal(data_dir / "state", self.config.journal_compact_bytes)
        else:
            self.ca = given.signing_ca or CertificateAuthority.create()
            self.token_signer = given.token_signer or TokenSigner.in_memory()
            journal = None
        self._serving_ca = given.serving_ca(self.ca)
        if not self._serving_ca:
            log.warning(
                "no CA at hand verifies --tls-cert-file: the admin kubeconfig, cluster-info and"
                " kube-root-ca.crt carry the cluster CA, and clients need the serving CA themselves"
            )
            self._serving_ca = [self.ca.cert]
        self.store = Store(journal, history=self.config.history)
        self.registry = Registry()
        self.authorizer = Authorizer(self.store)
        self.metrics = RequestMetrics()
        config = self.config
        self.flow = FlowControl(
            config.max_requests_inflight, config.max_mutating_requests_inflight, config.request_wait_limit
        )
        self.allocator = ServiceIPAllocator()
        self.api = ResourceAPI(self.store, self.registry, Context)
        self.api.on_crd_change = self._crd_changed
        self.api.on_service_delete = lambda svc: self.allocator.release((svc.get("spec") or {}).get("clusterIP"))
        self.api.escalation_check = functools.partial(check_rbac_write, self.authorizer)
        self.api.validating_admission = functools.partial(csr_admission, self.authorizer)
        self.webhooks = webhooks.WebhookAdmission(self.store, self.registry, self.api)
        self.api.webhooks = self.webhooks
        self._runner: web.AppRunner | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self.port = self.config.port
        self.authenticator = Authenticator(
            self.store,
            self.config.static_tokens,
            self.config.anonymous,
            self.token_signer,
            self.config.static_token_uids,
        )
        self._openapi = openapi.OpenAPIDocuments(self.registry)
        self.watches = Watches(self.api)
        self._discovery_cache: dict[tuple[int, bool, bool], tuple[bytes, str, str]] = {}

    # -- lifecycle --------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"https://{self.config.host}:{self.port}"

    @property
    def watch_count(self) -> int:
        return self.watches.count

    def ca_pem(self) -> bytes:
        """The CA that verifies the serving certificate (the cluster CA unless --tls-cert-file says otherwise)."""
        return b"".join(cert_pem(cert) for cert in self._serving_ca)

    def _ssl_context(self) -> ssl.SSLContext:
        given = self.config.pki
        return server_context(
            self.ca,
            list(dict.fromkeys([*self.config.hosts, self.config.host])),
            serving=given.serving,
            client_ca_pem=given.client_ca_pem(self.ca),
        )

    async def start(self, sock: socket.socket | None = None) -> None:
        """Seed the cluster, start the controllers and listen (on ``sock`` when given: a
        socket already bound and listening, as a fleet binds all its ports first)."""
        from localkube.controllers import Controllers

        seeder = Seeder(self.api, self.allocator)
        seeder.seed()
        app = web.Application(client_max_size=MAX_BODY + 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        app.on_response_prepare.append(_exact_media_type)
        # no answer before the writes so far are on disk (one fsync serves all writes waiting)
        app.on_response_prepare.append(lambda _request, _response: self.store.durable())
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=0.5)
        await self._runner.setup()
        site: web.BaseSite
        if sock is not None:
            site = web.SockSite(self._runner, sock, ssl_context=self._ssl_context())
        else:
            site = web.TCPSite(self._runner, self.config.host, self.config.port, ssl_context=self._ssl_context())
        await site.start()
        sockets = getattr(site._server, "sockets", None) or []
        if sockets:
            self.port = sockets[0].getsockname()[1]
        proxy.reconcile_kubernetes_service(self._proxy_target())
        self.controllers = Controllers(self.api, self.ca, self.ca_pem())
        self._tasks.append(asyncio.create_task(self.controllers.run(), name="localkube-controllers"))
        if self.config.simulation.enabled:
            from localkube.simulation import Simulation

            simulation = Simulation(self.api, self.config.simulation)
            self._tasks.append(asyncio.create_task(simulation.run(), name="localkube-simulation"))
        seeder.write_cluster_info(self.url, self.ca_pem())

    async def stop(self, abort_connections: bool = True) -> None:
        """Stop serving (``abort_connections`` false: the caller sweeps the half-open
        connections of many servers at once, see :func:`abort_accepted_connections`)."""
        self.watches.cancel()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
            if abort_connections:
                abort_accepted_connections({self.port})
        # after the handlers: no write is left waiting on a webhook
        await self.webhooks.close()
        self.store.close()

    async def __aenter__(self) -> LocalKube:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- kubeconfig -----------------------------------------------------------------
    def kubeconfig(
        self, user: str = "kubernetes-admin", groups: list[str] | None = None, context: str = "localkube"
    ) -> Obj:
        """A kubeconfig with a client certificate for ``user`` (admin: ``system:masters``)."""
        cert, key = self.ca.issue_client(user, groups if groups is not None else ["system:masters"])
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": context,
                    "cluster": {
                        "server": self.url,
                        "certificate-authority-data": base64.b64encode(self.ca_pem()).decode(),
                    },
                }
            ],
            "users": [
                {
                    "name": user,
                    "user": {
                        "client-certificate-data": base64.b64encode(cert).decode(),
                        "client-key-data": base64.b64encode(key).decode(),
                    },
                }
            ],
            "contexts": [{"name": context, "context": {"cluster": context, "user": user}}],
            "current-context": context,
        }

    def write_kubeconfig(self, path: Path, **kwargs: Any) -> Path:
        private_directory(path.parent, narrow_existing=False)
        return write_private(path, yaml.safe_dump(self.kubeconfig(**kwargs), sort_keys=False).encode())

    # -- CRDs ---------------------------------------------------------------------------
    def _crd_changed(self, crd: Obj) -> None:
        name = crd["metadata"]["name"]
        current = self.store.get("apiextensions.k8s.io/customresourcedefinitions", "", name)
        if current is None:
            self.registry.set_custom(name, [])
            return
        if current["metadata"].get("deletionTimestamp"):
            self.controllers_wake()
            return
        status = established_status(current)
        if status != current.get("status"):
            updated = copy.deepcopy(current)
            updated["status"] = status
            current = self.store.put("apiextensions.k8s.io/customresourcedefinitions", updated, "MODIFIED")
        self.registry.set_custom(name, resource_types(current))

    def controllers_wake(self) -> None:
        controllers = getattr(self, "controllers", None)
        if controllers is not None:
            controllers.wake()

    # -- request handling -------------------------------------------------------------
    async def _handle(self, request: web.Request) -> web.StreamResponse:
        started = time.monotonic()
        try:
            response = await self._dispatch(request)
        except APIError as error:
            response = self._status_response(error, request)
        except web.HTTPRequestEntityTooLarge:  # aiohttp's own read limit
            response = self._status_response(too_large(f"Request entity too large: limit is {MAX_BODY}"))
        except ConnectionResetError:  # the client hung up mid-answer (a watch it closed): no bug, no one to answer
            log.debug("%s %s: the client went away", request.method, request.path)
            response = web.Response(status=499)
        except Exception as exc:  # a bug must not take the server down, nor its text reach the client
            request_id = new_request_id()
            response = self._status_response(internal_error(exc, request_id, request.method, request.path, log))
            response.headers["Audit-Id"] = request_id
        elapsed = time.monotonic() - started
        info = request.get(REQUEST_INFO)
        if info is not None:
            applying = request.headers.get("Content-Type", "").startswith("application/apply-patch")
            self.metrics.observe(info, response.status, applying, elapsed)
            user = request.get(REQUEST_USER)
            if user is not None:
                self.metrics.observe_user(user, info, response.status)
            if elapsed >= SLOW_REQUEST and not long_running(info):  # a watch, exec or log -f lasts
                # kube-apiserver's trace of a long request: what waited, for whom, how long
                log.warning(
                    'slow request: "%s %s" user-agent:%s status:%d (total time: %.3fs)',
                    request.method,
                    request.path,
                    request.headers.get("User-Agent", ""),
                    response.status,
                    elapsed,
                )
        log.debug("%s %s %s %.1fms", request.method, request.path_qs, response.status, elapsed * 1000)
        return response

    def _status_response(self, error: APIError, request: web.Request | None = None) -> web.Response:
        headers = {}
        if error.retry_after:  # kube-apiserver sends the header only for a positive delay
            headers["Retry-After"] = str(error.retry_after)
        if request is not None and error.code != 406 and self._accepts_protobuf(request):
            body = protobuf.encode(error.status())
            return web.Response(status=error.code, body=body, content_type=protobuf.CONTENT_TYPE, headers=headers)
        return web.Response(status=error.code, body=_dump(error.status()), content_type=JSON, headers=headers)

    def _accepts_protobuf(self, request: web.Request) -> bool:
        try:
            return self._accept(request, encodable=True)[0] == "protobuf"
        except APIError:
            return False

    def _authenticate(self, request: web.Request) -> Identity:
        peer = request.transport.get_extra_info("ssl_object") if request.transport else None
        der = peer.getpeercert(binary_form=True) if peer is not None else None
        return self.authenticator.authenticate(request.headers.get("Authorization", ""), der)

    def _authorize(self, identity: Identity, info: RequestInfo, name_hint: str = "") -> None:
        if info.is_resource:
            attrs = Attributes(
                verb=info.verb,
                resource_request=True,
                group=info.group,
                resource=info.resource,
                subresource=info.subresource,
                namespace=info.namespace,
                name=info.name or name_hint,
            )
        else:
            attrs = Attributes(verb=info.verb, resource_request=False, path=info.path)
        reason = self.authorizer.denial(identity, attrs)
        if reason is not None:
            raise forbidden(
                forbidden_message(identity, attrs, reason), resource=info.resource, group=info.group, name=info.name
            )

    def _accept(self, request: web.Request, encodable: bool = False) -> tuple[str, str]:
        """``("table"|"json"|"yaml"|"aggregated"|"partial"|"protobuf", include)``; protobuf
        only where the caller can encode it (built-in kinds)."""
        accept = request.headers.get("Accept", "application/json") or "*/*"
        for media in accept.split(","):
            params = [p.strip() for p in media.split(";")]
            kind = params[0].lower()
            attrs = dict(p.split("=", 1) for p in params[1:] if "=" in p)
            if kind in ("application/json", "*/*", "application/*", "application/vnd.kubernetes.protobuf"):
                if attrs.get("as") == "Table":
                    if kind == protobuf.CONTENT_TYPE:
                        continue  # kube-apiserver serves Tables as JSON or YAML only
                    return "table", request.query.get("includeObject", "Metadata")
                if attrs.get("as") == "APIGroupDiscoveryList":
                    return "aggregated", "protobuf" if kind == protobuf.CONTENT_TYPE else ""
                if attrs.get("as") in ("PartialObjectMetadata", "PartialObjectMetadataList"):
                    return "partial", "protobuf" if kind == protobuf.CONTENT_TYPE else ""
                if kind == "application/vnd.kubernetes.protobuf":
                    if encodable:
                        return "protobuf", ""
                    continue
                return "json", ""
            if kind == "application/yaml":
                return "yaml", ""
        raise not_acceptable(["application/json", "application/yaml"])

    def _respond(
        self, request: web.Request, obj: Obj, code: int = 200, warnings: list[str] | None = None
    ) -> web.Response:
        if obj.get("kind") != "Status":
            mode, _ = self._accept(request, protobuf.encodable(obj))
        else:
            mode = "protobuf" if self._accepts_protobuf(request) else "json"
        headers = {}
        if warnings:
            headers["Warning"] = ", ".join(warning_header(w) for w in warnings)[:4096]
        if mode == "protobuf":
            body = protobuf.encode(obj)
            return web.Response(status=code, body=body, content_type=protobuf.CONTENT_TYPE, headers=headers)
        if mode == "yaml":
            return web.Response(status=code, text=yaml.safe_dump(obj), content_type="application/yaml", headers=headers)
        return web.Response(
            status=code,
            body=_dump(obj, truthy(request.query.get("pretty"))),
            content_type=JSON,
            headers=headers,
        )

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        info = proxy.connect_info(parse_request(path, request.method, request.query))
        request[REQUEST_INFO] = info
        identity = impersonate(request.headers, self._authenticate(request), self.authorizer)
        request[REQUEST_USER] = identity.user
        async with self.flow.seat(identity.user, identity.groups, info):
            return await self._serve(request, info, identity)

    async def _serve(self, request: web.Request, info: RequestInfo, identity: Identity) -> web.StreamResponse:
        """A request that has its seat (or needs none)."""
        if not info.is_resource:
            self._authorize(identity, info)
            return await self._non_resource(request, info)
        if request.content_length and request.content_length > MAX_BODY:
            raise too_large()
        rt = self.registry.lookup(info.group, info.version, info.resource)
        if rt is None:
            raise resource_not_found()
        name_hint = ""
        if info.verb in ("list", "watch"):
            for part in request.query.get("fieldSelector", "").split(","):
                if part.strip().startswith("metadata.name="):
                    name_hint = part.split("=", 1)[1].strip()
        self._authorize(identity, info, name_hint)
        if rt.kind == "Binding" or info.subresource in ("binding", "eviction"):
            return await self._pod_action(request, info, rt, identity)
        if rt.verbs == ("create",):
            return await self._review(request, info, rt, identity)
        namespace = info.namespace if rt.namespaced else ""
        if rt.kind == "Namespace":
            namespace = ""
        if rt.namespaced and not info.namespace and info.verb not in ("list", "watch"):
            raise method_not_allowed()
        if info.subresource and info.subresource not in rt.subresources():
            raise resource_not_found()
        if info.subresource == "proxy":
            await self._admit_connect(request, rt, info, identity)
            return await proxy.serve(self._proxy_target(), request, info)
        if rt.kind == "Pod" and not rt.group and info.subresource in POD_STREAMS:
            return await self._pod_stream(request, rt, info, identity)
        context = Context(identity.user, identity.groups, identity.uid, identity.extra, self.allocator.allocate)
        options = write_options(request)
        method = request.method
        if info.subresource == "scale":
            from localkube.scale import scale_request, scale_write

            if method in ("PUT", "PATCH"):
                raw_scale = await read_body(request)
                attributes = self._attributes(request, rt, info, identity, "UPDATE", info.name)
                content_type = request.headers.get("Content-Type", "")
                return await self._admitted(
                    request,
                    attributes,
                    lambda: scale_write(
                        self.api, method, content_type, raw_scale, rt, namespace, info.name, context, options
                    ),
                )
            scale = await scale_request(self.api, request, rt, namespace, info.name, context, options)
            return self._respond(request, scale)
        if info.subresource == "token" and method == "POST":
            from localkube.tokens import token_request

            accounts = self.registry.by_kind("v1", "ServiceAccount")
            assert accounts is not None

            async def token_body() -> Any:
                return await self._body(request, accounts) if request.can_read_body else {}

            token = await token_request(self.store, self.token_signer, namespace, info.name, token_body)
            return web.Response(status=201, body=_dump(token), content_type=JSON)
        if method in ("GET", "HEAD"):
            if info.name:
                # "not older than N": a get ahead of the server waits for it, then 504s (as lists do)
                await paging.wait_until_fresh(
                    self.store, parse_resource_version(request.query.get("resourceVersion", ""))
                )
                return self._respond_object(request, rt, self.api.get(rt, namespace, info.name))
            if info.verb == "watch":
                return await self._watch(request, rt, info.namespace if rt.namespaced else "", identity)
            return await self._list(request, rt, info.namespace if rt.namespaced else "")
        if method == "POST":
            if info.name and not info.subresource:
                raise method_not_allowed()
            body = await self._body(request, rt)
            body_name = ((body.get("metadata") or {}) if isinstance(body, dict) else {}).get("name") or ""
            attributes = self._attributes(request, rt, info, identity, "CREATE", str(body_name))
            return await self._admitted(
                request, attributes, lambda: self.api.create(rt, namespace, body, context, options)
            )
        if method == "PUT":
            body = await self._body(request, rt)
            absent = self.api.stored(rt, namespace, info.name) is None
            creating = not info.subresource and rt.create_on_update and absent
            attributes = self._attributes(request, rt, info, identity, "CREATE" if creating else "UPDATE", info.name)
            return await self._admitted(
                request,
                attributes,
                lambda: self.api.update(rt, namespace, info.name, body, info.subresource, context, options),
            )
        if method == "PATCH":
            raw = await read_body(request)
            creating = self.api.stored(rt, namespace, info.name) is None
            attributes = self._attributes(request, rt, info, identity, "CREATE" if creating else "UPDATE", info.name)
            return await self._admitted(
                request,
                attributes,
                lambda: self.api.patch(
                    rt,
                    namespace,
                    info.name,
                    request.headers.get("Content-Type", ""),
                    raw,
                    info.subresource,
                    context,
                    options,
                ),
            )
        if method == "DELETE":
            delete_options = await read_delete_options(request)
            if delete_options.get("dryRun"):
                # client-go sends a delete's dryRun in its DeleteOptions body, not the query
                options.dry_run = True
            if info.name:
                attributes = self._attributes(request, rt, info, identity, "DELETE", info.name, delete_options)
                return await self._admitted(
                    request,
                    attributes,
                    lambda: self.api.delete(rt, namespace, info.name, delete_options, options.dry_run),
                )
            return await self._delete_collection(
                request, rt, info, identity, info.namespace if rt.namespaced else "", delete_options, options
            )
        raise method_not_allowed()

    def _attributes(
        self,
        request: web.Request,
        rt: ResourceType,
        info: RequestInfo,
        identity: Identity,
        operation: str,
        name: str,
        delete_options: Obj | None = None,
    ) -> webhooks.Attributes:
        """The admission attributes of a write, as kube-apiserver's handlers record them."""
        namespace = info.namespace if rt.namespaced else ""
        if rt.kind == "Namespace" and not rt.group:
            namespace = info.name  # a Namespace's own name, "" on create (as requestInfo has it)
        query = dict(request.query)
        kind = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}[operation]
        return webhooks.Attributes(
            operation=operation,
            rt=rt,
            subresource=info.subresource,
            namespace=namespace,
            name=name,
            user_info=identity.to_user_info(),
            dry_run=bool(query.get("dryRun") or (delete_options or {}).get("dryRun")),
            options=webhooks.options_object(kind, query, delete_options),
        )

    async def _admit_connect(
        self,
        request: web.Request,
        rt: ResourceType,
        info: RequestInfo,
        identity: Identity,
        options_object: Obj | None = None,
    ) -> None:
        """CONNECT admission of a proxy, exec, attach or portforward request: its options
        (``<Kind>ProxyOptions``, ``PodExecOptions``...) are the object."""
        if options_object is None:
            _, _, rest = request.path.partition(f"/{info.name}/proxy")
            options_object = {"kind": f"{rt.kind}ProxyOptions", "apiVersion": "v1", "path": rest or "/"}
        attributes = webhooks.Attributes(
            operation="CONNECT",
            rt=rt,
            subresource=info.subresource,
            namespace=info.namespace if rt.namespaced else "",
            name=info.name,
            user_info=identity.to_user_info(),
            dry_run=False,
            options=None,
            object_kind={"group": "", "version": "v1", "kind": options_object["kind"]},
        )
        await self.webhooks.admit_object(attributes, options_object, [])

    async def _pod_stream(
        self, request: web.Request, rt: ResourceType, info: RequestInfo, identity: Identity
    ) -> web.StreamResponse:
        """``pods/log``, ``pods/exec``, ``pods/attach`` and ``pods/portforward``: localkube
        is the kubelet of its simulated nodes and answers them itself."""
        from localkube import pod_connect, pod_exec, pod_logs, pod_portforward

        store = self.api.store
        if info.subresource == "log":
            if request.method not in ("GET", "HEAD"):
                raise method_not_allowed()
            interval = self.config.simulation.log_interval
            return await pod_logs.serve(store, request, info.namespace, info.name, interval)
        if request.method not in ("GET", "POST"):
            raise method_not_allowed()
        kind = POD_STREAMS[info.subresource]
        try:
            options = pod_connect.connect_options(kind, request.query)
            if info.subresource == "portforward":
                pod = pod_portforward.check(store, info.namespace, info.name)
                await self._admit_connect(request, rt, info, identity, options)
                return await pod_portforward.serve(store, request, pod)
            found = pod_exec.check(store, info.namespace, info.name, request.query, info.subresource)
            await self._admit_connect(request, rt, info, identity, options)
            if info.subresource == "exec":
                return await pod_exec.serve_exec(store, request, found)
            interval = self.config.simulation.log_interval
            return await pod_exec.serve_attach(store, request, found, interval)
        except pod_connect.KubeletError as error:
            return error.response()

    async def _admitted(self, request: web.Request, attributes: webhooks.Attributes, write: Any) -> web.Response:
        """Run a write with the admission webhooks; their warnings reach the client either way."""
        warnings: list[str] = []
        try:
            result = await self.webhooks.run(attributes, write, warnings)
        except APIError as error:
            response = self._status_response(error, request)
            if warnings:
                response.headers["Warning"] = ", ".join(warning_header(w) for w in warnings)[:4096]
            return response
        if isinstance(result, dict):  # a subresource's own kind (a Scale)
            return self._respond(request, result, 200, warnings)
        return self._respond(request, result.obj, result.code, [*result.warnings, *warnings])

    async def _body(self, request: web.Request, rt: ResourceType) -> Any:
        raw = await read_body(request)
        media = (request.headers.get("Content-Type") or "application/json").split(";")[0].strip().lower()
        if media == protobuf.CONTENT_TYPE:
            try:
                return protobuf.decode(raw, rt)
            except (ValueError, IndexError, KeyError) as exc:  # truncated or malformed wire data
                what = f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}'
                raise bad_request(f"{what}: malformed protobuf data: {exc}") from None
        if media not in ("application/json", "application/yaml", ""):
            raise unsupported_media_type(BODY_TYPES)
        return decode_body(raw, media, f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}')

    # -- reads ---------------------------------------------------------------------------
    def _respond_object(self, request: web.Request, rt: ResourceType, obj: Obj) -> web.Response:
        mode, include = self._accept(request, protobuf.supported(rt))
        if mode == "table":
            meta = {"resourceVersion": obj["metadata"].get("resourceVersion", "")}
            return self._respond_raw(request, tablemod.table(rt, [obj], include, meta))
        if mode == "partial":
            return self._respond_raw(request, tablemod.partial_metadata(obj), include)
        return self._respond(request, obj)

    def _respond_raw(self, request: web.Request, obj: Obj, include: str = "") -> web.Response:
        if include == "protobuf":  # PartialObjectMetadata(List), which has a message
            return web.Response(body=protobuf.encode(obj), content_type=protobuf.CONTENT_TYPE)
        return web.Response(body=_dump(obj), content_type=JSON)

    def _selectors(self, request: web.Request, rt: ResourceType) -> tuple[list[Any], list[Any]]:
        labels = parse_label_selector(request.query.get("labelSelector", ""))
        fields = parse_field_selector(
            request.query.get("fieldSelector", ""), field_supported(rt.kind, rt.selectable_fields)
        )
        return labels, fields

    def _proxy_target(self) -> proxy.Apiserver:
        return proxy.Apiserver(self.api, self.config.host, self.port)

    def _matches(self, rt: ResourceType, obj: Obj, labels: list[Any], fields: list[Any]) -> bool:
        return labels_match(labels, obj["metadata"].get("labels")) and fields_match(fields, obj)

    async def _list(self, request: web.Request, rt: ResourceType, namespace: str) -> web.Response:
        labels, fields = self._selectors(request, rt)
        query = request.query
        match = query.get("resourceVersionMatch", "")
        rv_param = query.get("resourceVersion", "")
        problem = list_options_problem(match, rv_param, query.get("continue", ""))
        if problem is not None:
            raise invalid("ListOptions", "meta.k8s.io", "", [problem])
        selected = (lambda o: self._matches(rt, o, labels, fields)) if labels or fields else None
        page = await paging.list_page(self.store, rt.storage_key, namespace, query, selected)
        meta: Obj = {"resourceVersion": str(page.rv)}
        if page.continue_token:
            meta["continue"] = page.continue_token
            if page.remaining is not None:
                meta["remainingItemCount"] = page.remaining
        views = await self._list_views(rt, page.items)
        mode, include = self._accept(request, protobuf.supported(rt))
        if mode == "table":
            return self._respond_raw(request, tablemod.table(rt, views, include, meta))
        if mode == "partial":
            return self._respond_raw(
                request,
                {
                    "kind": "PartialObjectMetadataList",
                    "apiVersion": "meta.k8s.io/v1",
                    "metadata": meta,
                    "items": [tablemod.partial_metadata(v) for v in views],
                },
                include,
            )
        if not rt.custom:
            for view in views:
                view.pop("apiVersion", None)
                view.pop("kind", None)
        body = {"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": meta, "items": views}
        if mode == "json" and not truthy(request.query.get("pretty")):
            return await self._respond_list_json(body)
        return self._respond(request, body)

    async def _list_views(self, rt: ResourceType, items: list[Obj]) -> list[Obj]:
        """The page's objects as served: copies, CRD defaults applied (see :func:`in_slices`)."""
        schema = rt.schema if rt.custom else None

        def view(obj: Obj) -> Obj:
            shown = self.api._view(rt, obj)
            if schema is not None:
                apply_defaults(shown, schema)
            return shown

        return await in_slices(items, view)

    async def _respond_list_json(self, body: Obj) -> web.Response:
        """``body`` as compact JSON, its items encoded a slice at a time (see :func:`in_slices`)."""
        head = _dump({**body, "items": []})[: -len("[]}")]
        encoded = await in_slices(body["items"], _dump)
        return web.Response(status=200, body=head + b"[" + b",".join(encoded) + b"]}", content_type=JSON)

    # -- watch ---------------------------------------------------------------------------
    async def _watch(
        self, request: web.Request, rt: ResourceType, namespace: str, identity: Identity
    ) -> web.StreamResponse:
        labels, fields = self._selectors(request, rt)
        options = watch_options(request.query)
        mode, include = self._accept(request, protobuf.supported(rt))
        matches = functools.partial(self._matches, rt, labels=labels, fields=fields)
        # an exact name or namespace narrows which events are queued for the watch at all
        exact = {f.field: f.value for f in fields if f.equal and f.field in ("metadata.name", "metadata.namespace")}
        if not namespace and rt.namespaced:
            namespace = exact.get("metadata.namespace", "")
        name = exact.get("metadata.name", "")
        return await self.watches.serve(request, rt, namespace, matches, options, mode, include, name)

    async def _delete_collection(
        self,
        request: web.Request,
        rt: ResourceType,
        info: RequestInfo,
        identity: Identity,
        namespace: str,
        options_body: Obj,
        options: WriteOptions,
    ) -> web.Response:
        labels, fields = self._selectors(request, rt)
        deleted = []
        warnings: list[str] = []
        for obj in self.store.items(rt.storage_key, namespace or None):
            if not self._matches(rt, obj, labels, fields):
                continue
            meta = obj["metadata"]
            # kube-apiserver admits each item with the collection request's attributes: no name
            attributes = self._attributes(request, rt, info, identity, "DELETE", "", options_body)
            if rt.namespaced:
                attributes.namespace = meta.get("namespace", "")
            item_warnings: list[str] = []
            try:
                result = await self.webhooks.run(
                    attributes,
                    functools.partial(
                        self.api.delete, rt, meta.get("namespace", ""), meta["name"], options_body, options.dry_run
                    ),
                    item_warnings,
                )
            except APIError as error:
                if error.code == 404:
                    continue  # deleted meanwhile, while an earlier item's webhooks answered
                raise
            finally:
                warnings.extend(item_warnings)
            deleted.append(self.api._view(rt, obj) if result.obj.get("kind") == "Status" else result.obj)
        body = {
            "kind": rt.list_kind,
            "apiVersion": rt.api_version,
            "metadata": {"resourceVersion": str(self.store.rv)},
            "items": deleted,
        }
        return self._respond(request, body, 200, warnings)

    # -- non-resource paths ------------------------------------------------------------------
    async def _non_resource(self, request: web.Request, info: RequestInfo) -> web.Response:
        path = request.path.rstrip("/") or "/"
        if path in ("/healthz", "/livez", "/readyz"):
            return web.Response(text="ok", content_type="text/plain")
        if path == "/version":
            return web.Response(body=_dump(discovery.VERSION_INFO), content_type=JSON)
        if path == "/metrics":
            text = self.metrics.render() + self.webhooks.metrics.render() + self.flow.render()
            return web.Response(text=text, content_type="text/plain")
        if path in ("/api", "/apis"):
            mode, include = self._accept(request, encodable=True)
            if mode == "aggregated":
                return self._aggregated_discovery(request, path == "/api", include == "protobuf")
            if path == "/api":
                return self._discovery_doc(request, discovery.api_versions(f"{self.config.host}:{self.port}"))
            return self._discovery_doc(request, discovery.api_group_list(self.registry))
        if info.api_prefix == "api" and info.version and not info.parts:
            if info.version != "v1":
                raise resource_not_found()
            return self._discovery_doc(request, discovery.resource_list(self.registry, "", "v1"))
        if info.api_prefix == "apis" and info.group and not info.version:
            group_doc = discovery.api_group(self.registry, info.group)
            if group_doc is None:
                raise resource_not_found()
            return self._discovery_doc(request, group_doc)
        if info.api_prefix == "apis" and info.group and info.version and not info.parts:
            if not self.registry.resources(info.group, info.version):
                raise resource_not_found()
            return self._discovery_doc(request, discovery.resource_list(self.registry, info.group, info.version))
        if path == "/openapi/v2":
            from localkube import openapi_v2

            if any(kind in request.headers.get("Accept", "") for kind in openapi_v2.PROTOBUF_ACCEPTED):
                return web.Response(body=openapi_v2.document_protobuf(), content_type=openapi_v2.PROTOBUF)
            return web.Response(body=openapi_v2.document_json(), content_type=JSON)
        if path == "/openapi/v3":
            return web.Response(body=_dump(self._openapi.root()), content_type=JSON)
        if path.startswith("/openapi/v3/"):
            rest = path[len("/openapi/v3/") :].split("/")
            if rest[0] == "api" and len(rest) == 2:
                group, version = "", rest[1]
            elif rest[0] == "apis" and len(rest) == 3:
                group, version = rest[1], rest[2]
            else:
                raise resource_not_found()
            if not self.registry.resources(group, version):
                raise resource_not_found()
            return web.Response(text=self._openapi.document(group, version)[0], content_type=JSON)
        raise resource_not_found()

    def _aggregated_discovery(self, request: web.Request, core: bool, as_protobuf: bool) -> web.Response:
        """``/api`` or ``/apis`` as one aggregated document, with kube-apiserver's ``ETag``: a
        client that sends it back in ``If-None-Match`` gets 304 while the served set is the same
        (the document is encoded once per set: agents ask every 10 s)."""
        key = (self.registry.generation, core, as_protobuf)
        cached = self._discovery_cache.get(key)
        if cached is None:
            doc = discovery.aggregated(self.registry, core=core)
            if as_protobuf:
                body = protobuf.encode(doc)
                media = protobuf.CONTENT_TYPE + discovery.AGGREGATED_CONTENT_TYPE.removeprefix(JSON)
            else:
                body, media = _dump(doc), discovery.AGGREGATED_CONTENT_TYPE
            etag = f'"{hashlib.sha512(body).hexdigest().upper()}"'
            self._discovery_cache = {k: v for k, v in self._discovery_cache.items() if k[0] == key[0]}
            cached = self._discovery_cache[key] = (body, media, etag)
        body, media, etag = cached
        headers = {"Content-Type": media, "Vary": "Accept", "ETag": etag}
        if etag in (tag.strip() for tag in request.headers.get("If-None-Match", "").split(",")):
            return web.Response(status=304, headers={"Vary": "Accept", "ETag": etag})
        return web.Response(body=body, headers=headers)

    def _discovery_doc(self, request: web.Request, doc: Obj) -> web.Response:
        """A plain discovery document: meta.k8s.io/v1 messages, so protobuf when asked first."""
        if self._accepts_protobuf(request):
            body = protobuf.encode({"apiVersion": "v1", **doc})
            return web.Response(body=body, content_type=protobuf.CONTENT_TYPE)
        return web.Response(body=_dump(doc), content_type=JSON)

    # -- review APIs ----------------------------------------------------------------------------
    async def _pod_action(
        self, request: web.Request, info: RequestInfo, rt: ResourceType, identity: Identity
    ) -> web.Response:
        """POST pods/NAME/binding, bindings and pods/NAME/eviction, admitted by webhooks as a
        CREATE of their Eviction or Binding."""
        from localkube import pod_subresources

        if request.method != "POST":
            raise method_not_allowed()
        pods = self.registry.lookup("", "v1", "pods")
        pdbs = self.registry.lookup("policy", "v1", "poddisruptionbudgets")
        assert pods is not None and pdbs is not None
        body = await self._body(request, rt)
        warnings: list[str] = []
        if isinstance(body, dict):
            default_version = "policy/v1" if info.subresource == "eviction" else "v1"
            group, _, version = str(body.get("apiVersion") or default_version).rpartition("/")
            kind = "Eviction" if info.subresource == "eviction" else "Binding"
            name = info.name or str((body.get("metadata") or {}).get("name") or "")
            attributes = self._attributes(request, rt, info, identity, "CREATE", name)
            attributes.object_kind = {"group": group, "version": version, "kind": kind}
            try:
                body = await self.webhooks.admit_object(attributes, body, warnings)
            except APIError as error:
                response = self._status_response(error, request)
                if warnings:
                    response.headers["Warning"] = ", ".join(warning_header(w) for w in warnings)[:4096]
                return response
        if info.subresource == "eviction":
            status = pod_subresources.evict(
                self.api, pods, pdbs, info.namespace, info.name, body, write_options(request)
            )
        else:
            status = pod_subresources.bind(self.api, pods, info.namespace, info.name, body)
        return self._respond(request, status, 201, warnings)

    async def _review(
        self, request: web.Request, info: RequestInfo, rt: ResourceType, identity: Identity
    ) -> web.Response:
        if request.method != "POST" or info.name:
            raise method_not_allowed()
        body = await self._body(request, rt)
        if not isinstance(body, dict):
            raise bad_request("review body must be an object")
        from localkube.reviews import review

        result = review(self.authorizer, self.authenticator, rt, info.namespace, body, identity)
        return self._respond(request, result, 201)
