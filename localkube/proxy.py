"""The ``proxy`` subresource of Services, Pods and Nodes (kube-apiserver's connect handlers).

``/api/v1/namespaces/NS/services/[SCHEME:]NAME[:PORT]/proxy/PATH`` and the same
for ``pods`` forward any request to the object's address with kube-apiserver's
rules: the address comes from the Service's ``Endpoints`` (only addresses whose
``targetRef`` names a Pod of the namespace carrying that IP, as
pkg/registry/core/service/storage ``ResourceLocation`` checks) or from the Pod's
``status.podIPs`` and its first ``containerPort``, or from the Node's preferred
address and kubelet port (https, or the scheme asked for another port); the backend path is the
cleaned rest of the request path (a trailing slash kept), an empty path on
GET/HEAD redirects to ``.../proxy/``, the query goes as is, hop-by-hop headers
and the client's credentials stay behind, ``X-Forwarded-For`` and
``X-Forwarded-Uri`` are added, same-host redirects are rewritten under the
proxy prefix, CORS headers of the backend are dropped and its status and body
pass through (k8s.io/apimachinery pkg/util/proxy).

Where localkube deliberately differs from kube-apiserver:

- it dials only loopback addresses: any other address exists only in the
  simulation, so a request to it fails as an unreachable dial would (503);
- a Pod on a loopback address, or a Node's loopback address with a port other
  than its kubelet's, is proxied (kube-apiserver refuses addresses that are not
  global unicast with 400 ``address not allowed``), since loopback is all
  localkube can reach; it presents no client certificate to a kubelet;
- the ``default/kubernetes`` Service's endpoint, localkube itself, is proxied
  although it names no Pod (kube-apiserver's endpoint reconciler writes it
  without a ``targetRef`` and its proxy then answers 503);
- no protocol upgrades (WebSocket, SPDY) and no rewriting of links inside
  ``text/html`` bodies.

Reaching loopback needs the right to write a Pod's or Node's status (or to be
localkube's own Service), which kube-apiserver grants only to kubelets and
cluster admins; a simulated Pod's address is never loopback.

Concurrency: a proxied request runs in its request's task on the server's loop
and opens its own client session, closed once the backend's answer has been
streamed to the client.
"""

from __future__ import annotations

import copy
import errno
import ipaddress
import posixpath
import random
import socket
import ssl
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit, urlunsplit

import aiohttp
from aiohttp import web
from multidict import CIMultiDict
from yarl import URL

from localkube.errors import APIError, bad_request, method_not_allowed, not_found
from localkube.requestinfo import RequestInfo

if TYPE_CHECKING:
    from localkube.api import ResourceAPI


@dataclass(frozen=True)
class Apiserver:
    """What proxying needs of the server: its objects, and where it listens."""

    api: ResourceAPI
    host: str
    port: int


Obj = dict[str, Any]

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
# RFC 7230 hop-by-hop headers, which Go's ReverseProxy removes both ways
HOP_BY_HOP = (
    "Connection",
    "Proxy-Connection",
    "Keep-Alive",
    "Proxy-Authenticate",
    "Proxy-Authorization",
    "Te",
    "Trailer",
    "Transfer-Encoding",
    "Upgrade",
)
CORS = (
    "Access-Control-Allow-Credentials",
    "Access-Control-Allow-Headers",
    "Access-Control-Allow-Methods",
    "Access-Control-Allow-Origin",
)
KUBERNETES = ("default", "kubernetes")
DIAL_TIMEOUT = 30.0  # kube-apiserver's proxy dialer
PATH_SAFE = "/:@!$&'()*+,;=-._~"


def service_unavailable(message: str) -> APIError:
    return APIError(503, "ServiceUnavailable", message)


@dataclass
class Location:
    """Where a proxied request goes."""

    scheme: str
    host: str
    port: str  # may be empty (the scheme's default) or a service name such as "http"

    def netloc(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}" if self.port else host


def split_scheme_name_port(ident: str) -> tuple[str, str, str] | None:
    """``NAME``, ``NAME:PORT`` or ``SCHEME:NAME:PORT`` (apimachinery's SplitSchemeNamePort)."""
    parts = ident.split(":")
    if len(parts) == 1:
        scheme, name, port = "", parts[0], ""
    elif len(parts) == 2:
        scheme, name, port = "", parts[0], parts[1]
    elif len(parts) == 3:
        scheme, name, port = parts
    else:
        return None
    if not name or scheme not in ("", "http", "https"):
        return None
    return scheme, name, port


def advertised_address(host: str) -> str:
    """The IP localkube names as its own in ``default/kubernetes``: the listening address,
    or loopback when it listens on every address or on a name."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return "127.0.0.1"
    return "127.0.0.1" if ip.is_unspecified else str(ip)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _valid_address(apiserver: Apiserver, namespace: str, service: str, address: Obj) -> bool:
    ref = address.get("targetRef")
    if ref is None:
        return (namespace, service) == KUBERNETES and address.get("ip") == advertised_address(apiserver.host)
    if ref.get("namespace") != namespace or ref.get("kind", "Pod") != "Pod":
        return False
    pod = apiserver.api.store.get("/pods", namespace, ref.get("name", ""))
    if pod is None:
        return False
    ips = [entry.get("ip") for entry in (pod.get("status") or {}).get("podIPs") or []]
    return address.get("ip") in ips


def service_location(apiserver: Apiserver, namespace: str, ident: str) -> Location:
    """The endpoint a Service proxy request goes to (the service storage's ResourceLocation)."""
    split = split_scheme_name_port(ident)
    if split is None:
        raise bad_request(f'invalid service request "{ident}"')
    scheme, name, port = split
    if port.isdigit():
        svc = apiserver.api.store.get("/services", namespace, name)
        if svc is None:
            raise not_found("services", "", name)
        declared = [p for p in (svc.get("spec") or {}).get("ports") or [] if p.get("port") == int(port)]
        if not declared:
            raise service_unavailable(f'no service port {int(port)} found for service "{name}"')
        port = declared[0].get("name", "")
    endpoints = apiserver.api.store.get("/endpoints", namespace, name)
    if endpoints is None:
        raise not_found("endpoints", "", name)
    subsets = endpoints.get("subsets") or []
    if not subsets:
        raise service_unavailable(f'no endpoints available for service "{name}"')
    start = random.randrange(len(subsets))  # kube picks a subset and an address at random too
    for i in range(len(subsets)):
        subset = subsets[(start + i) % len(subsets)]
        addresses = subset.get("addresses") or []
        if not addresses:
            continue
        for subset_port in subset.get("ports") or []:
            if subset_port.get("name", "") != port:
                continue
            first = random.randrange(len(addresses))
            for j in range(len(addresses)):
                address = addresses[(first + j) % len(addresses)]
                if _valid_address(apiserver, namespace, name, address):
                    return Location(scheme, address["ip"], str(subset_port.get("port", "")))
    raise service_unavailable(f'no endpoints available for service "{ident}"')


def _global_unicast(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Go's ``net.IP.IsGlobalUnicast`` (private ranges count as global)."""
    broadcast = ip == ipaddress.IPv4Address("255.255.255.255")
    return not (ip.is_unspecified or ip.is_loopback or ip.is_link_local or ip.is_multicast or broadcast)


def pod_location(apiserver: Apiserver, namespace: str, ident: str) -> Location:
    """The address a Pod proxy request goes to (pkg/registry/core/pod ResourceLocation)."""
    split = split_scheme_name_port(ident)
    if split is None:
        raise bad_request(f'invalid pod request "{ident}"')
    scheme, name, port = split
    pod = apiserver.api.store.get("/pods", namespace, name)
    if pod is None:
        raise not_found("pods", "", name)
    if not port:
        for container in (pod.get("spec") or {}).get("containers") or []:
            ports = container.get("ports") or []
            if ports:
                port = str(ports[0].get("containerPort", ""))
                break
    status = pod.get("status") or {}
    pod_ips = status.get("podIPs") or []
    pod_ip = pod_ips[0].get("ip", "") if pod_ips else status.get("podIP", "")
    try:
        ip = ipaddress.ip_address(pod_ip)
    except ValueError:
        raise bad_request("address not allowed") from None
    if not (_global_unicast(ip) or ip.is_loopback):
        raise bad_request("address not allowed")
    return Location(scheme, pod_ip, port)


# kube-apiserver's --kubelet-preferred-address-types default, and the kubelet's default port
PREFERRED_ADDRESS_TYPES = ("Hostname", "InternalDNS", "InternalIP", "ExternalDNS", "ExternalIP")
KUBELET_PORT = 10250


def _preferred_address(node: Obj) -> str | None:
    """pkg/util/node GetPreferredNodeAddress: the first address of the first preferred type."""
    addresses = (node.get("status") or {}).get("addresses") or []
    for kind in PREFERRED_ADDRESS_TYPES:
        for address in addresses:
            if address.get("type") == kind and address.get("address"):
                return str(address["address"])
        hostname = (node["metadata"].get("labels") or {}).get("kubernetes.io/hostname")
        if kind == "Hostname" and hostname:
            return str(hostname)
    return None


def node_location(apiserver: Apiserver, ident: str) -> Location:
    """The kubelet (or, for another port, any server) on a Node (the node storage's ResourceLocation)."""
    split = split_scheme_name_port(ident)
    if split is None:
        raise bad_request(f'invalid node request "{ident}"')
    scheme, name, port = split
    node = apiserver.api.store.get("/nodes", "", name)
    if node is None:
        raise not_found("nodes", "", name)
    host = _preferred_address(node)
    if host is None:
        known = " ".join(
            f"{{{a.get('type', '')} {a.get('address', '')}}}" for a in (node.get("status") or {}).get("addresses") or []
        )
        message = f"no preferred addresses found; known addresses: [{known}]"
        raise APIError(500, "InternalError", f"Internal error occurred: {message}")
    endpoint = ((node.get("status") or {}).get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}
    kubelet_port = str(endpoint.get("Port") or KUBELET_PORT)
    if not port or port == kubelet_port:
        return Location("https", host, kubelet_port)
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        ip = None  # a name: localkube resolves none but localhost, so forward() refuses it as unreachable
    if ip is not None and not (_global_unicast(ip) or ip.is_loopback):
        raise bad_request("address not allowed")
    return Location(scheme, host, port)


# -- forwarding ----------------------------------------------------------------------
def _clean(path: str) -> str:
    """Go's ``path.Join("", p)``: cleaned, no trailing slash, "" for ""."""
    return posixpath.normpath(path).replace("//", "/") if path else ""


def backend_path(request_path: str, subpath_parts: list[str]) -> str:
    """The backend's path: the parts after ``proxy``, cleaned, with the request's trailing slash."""
    sub = "/".join(subpath_parts)
    if sub and not sub.startswith("/"):
        sub = "/" + sub
    if request_path.endswith("/") and not sub.endswith("/"):
        sub += "/"
    path = _clean(sub)
    if request_path.endswith("/") and not path.endswith("/"):
        path += "/"
    return path


def _dial_error(location: Location, exc: BaseException) -> APIError:
    target = f"dial tcp {location.netloc()}"
    os_error = getattr(exc, "os_error", None)
    if isinstance(os_error, OSError) and os_error.errno == errno.ECONNREFUSED:
        return service_unavailable(f"error trying to reach service: {target}: connect: connection refused")
    return service_unavailable(f"error trying to reach service: {target}: {exc}")


def _port_number(location: Location) -> int:
    scheme = location.scheme or "http"
    if not location.port:
        return 443 if scheme == "https" else 80
    if location.port.isdigit():
        return int(location.port)
    try:  # Go's dialer resolves service names (/etc/services) the same way
        return socket.getservbyname(location.port, "tcp")
    except OSError:
        raise service_unavailable(
            f"error trying to reach service: dial tcp: lookup tcp/{location.port}: unknown port"
        ) from None


def _upstream_headers(request: web.Request, forwarded_uri: str) -> CIMultiDict[str]:
    headers: CIMultiDict[str] = CIMultiDict(request.headers)
    listed = [h.strip() for h in request.headers.get("Connection", "").split(",") if h.strip()]
    # the credentials were for localkube: its authentication filter drops them once used
    for name in (*HOP_BY_HOP, *listed, "Authorization", "Content-Length"):
        headers.popall(name, None)
    prior = ", ".join(request.headers.getall("X-Forwarded-For", []))
    client = request.remote or ""
    headers.popall("X-Forwarded-For", None)
    headers["X-Forwarded-For"] = f"{prior}, {client}" if prior else client
    headers["X-Forwarded-Uri"] = forwarded_uri
    return headers


def rewrite_location(value: str, backend_netloc: str, request_host: str, prefix: str) -> str:
    """A backend's same-host redirect, moved under the proxy prefix (apimachinery's rewriteURL)."""
    parts = urlsplit(value)
    different_host = parts.netloc != "" and parts.netloc not in (backend_netloc, request_host)
    if different_host or not parts.path.startswith("/"):
        return value
    scheme, netloc = parts.scheme, parts.netloc
    if netloc != request_host:
        scheme, netloc = "", ""
    path = parts.path
    if not path.startswith(prefix):
        path = posixpath.join(prefix, path.lstrip("/"))
        path = _clean(path) + ("/" if parts.path.endswith("/") else "")
    return urlunsplit((scheme, netloc, path, parts.query, parts.fragment))


async def forward(request: web.Request, location: Location, path: str) -> web.StreamResponse:
    """Send the request to ``location`` + ``path`` and stream the answer back."""
    if path == "" and request.method in ("GET", "HEAD"):
        query = f"?{request.query_string}" if request.query_string else ""
        return web.Response(status=301, headers={"Location": request.path + "/" + query})
    if not _loopback(location.host):
        raise service_unavailable(
            f"error trying to reach service: dial tcp {location.netloc()}: localkube reaches only loopback addresses"
        )
    scheme = location.scheme or "http"
    port = _port_number(location)
    host = f"[{location.host}]" if ":" in location.host else location.host
    prefix = request.path[: len(request.path) - len(path)] if path and request.path.endswith(path) else request.path
    forwarded_uri = _clean(prefix + path) + ("/" if path.endswith("/") else "") if path else _clean(prefix)
    # Go sends the path escaped (URL.EscapedPath) and the raw query unchanged
    url = f"{scheme}://{host}:{port}{quote(path or '/', safe=PATH_SAFE)}"
    raw_query = request.raw_path.partition("?")[2]
    if raw_query:
        url += "?" + raw_query
    body = await request.read()
    headers = _upstream_headers(request, forwarded_uri)
    skip = [h for h in ("User-Agent", "Accept-Encoding") if h not in request.headers]
    # kube-apiserver's proxy transport does not verify backends' certificates
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=DIAL_TIMEOUT)
    async with aiohttp.ClientSession(timeout=timeout, auto_decompress=False) as session:
        try:
            upstream = await session.request(
                request.method,
                URL(url, encoded=True),
                headers=headers,
                data=body if body else None,
                ssl=context if scheme == "https" else False,
                allow_redirects=False,
                skip_auto_headers=skip,
            )
        except (aiohttp.ClientError, OSError) as exc:
            raise _dial_error(location, exc) from None
        async with upstream:
            response = web.StreamResponse(status=upstream.status, reason=upstream.reason)
            listed = [h.strip() for h in upstream.headers.get("Connection", "").split(",") if h.strip()]
            dropped = {h.lower() for h in (*HOP_BY_HOP, *listed, *CORS)}
            for name, value in upstream.headers.items():
                if name.lower() in dropped:
                    continue
                if name.lower() == "location":
                    response.headers.add(name, rewrite_location(value, f"{host}:{port}", request.host, prefix))
                else:
                    response.headers.add(name, value)
            await response.prepare(request)
            if request.method != "HEAD":
                try:
                    async for chunk in upstream.content.iter_any():
                        await response.write(chunk)
                except aiohttp.ClientError:
                    # the backend broke off mid-answer: so does the client's connection, as
                    # Go's ReverseProxy aborts its handler, rather than end a truncated body cleanly
                    if request.transport is not None:
                        request.transport.close()
                    return response
            await response.write_eof()
            return response


def connect_info(info: RequestInfo) -> RequestInfo:
    """kube-apiserver's RequestInfo of a proxy request: the subresource is the one
    segment ``proxy`` (the rest is the backend's path) and the verb follows the
    method, OPTIONS having none (only a ``*`` rule allows it)."""
    if info.subresource.partition("/")[0] == "proxy" and info.name:
        info.subresource = "proxy"
        if info.method.upper() == "OPTIONS":
            info.verb = ""
    return info


def _subpath(info: RequestInfo) -> list[str]:
    parts = list(info.parts)
    if parts and parts[0] == "namespaces" and len(parts) > 2:
        parts = parts[2:]
    return parts[3:]  # resource, name, "proxy"


async def serve(apiserver: Apiserver, request: web.Request, info: RequestInfo) -> web.StreamResponse:
    """Answer a ``services/NAME/proxy``, ``pods/NAME/proxy`` or ``nodes/NAME/proxy`` request."""
    if request.method not in METHODS:
        raise method_not_allowed()
    if info.resource == "services":
        location = service_location(apiserver, info.namespace, info.name)
    elif info.resource == "pods":
        location = pod_location(apiserver, info.namespace, info.name)
    elif info.resource == "nodes":
        location = node_location(apiserver, info.name)
    else:
        raise method_not_allowed()
    return await forward(request, location, backend_path(request.path, _subpath(info)))


# -- the kubernetes Service ----------------------------------------------------------
def kubernetes_endpoints(host: str, port: int) -> tuple[Obj, Obj]:
    """``default/kubernetes`` Endpoints and EndpointSlice pointing at localkube, as
    kube-apiserver's endpoint reconciler writes them (no targetRef)."""
    endpoints = {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {
            "name": "kubernetes",
            "namespace": "default",
            "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"},
        },
        "subsets": [{"addresses": [{"ip": host}], "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}],
    }
    family = "IPv6" if ":" in host else "IPv4"
    endpoint_slice = {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": "kubernetes",
            "namespace": "default",
            "labels": {"kubernetes.io/service-name": "kubernetes"},
        },
        "addressType": family,
        "endpoints": [{"addresses": [host], "conditions": {"ready": True}}],
        "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
    }
    return endpoints, endpoint_slice


def reconcile_kubernetes_service(apiserver: Apiserver) -> None:
    """Point ``default/kubernetes`` (its targetPort, Endpoints and EndpointSlice) at
    the address and port localkube now listens on."""
    from localkube.api import WriteOptions
    from localkube.kinds import Context

    context = Context(user="system:apiserver", groups=["system:masters"])
    svc_rt = apiserver.api.registry.lookup("", "v1", "services")
    ep_rt = apiserver.api.registry.lookup("", "v1", "endpoints")
    slice_rt = apiserver.api.registry.lookup("discovery.k8s.io", "v1", "endpointslices")
    assert svc_rt is not None and ep_rt is not None and slice_rt is not None
    svc = apiserver.api.store.get(svc_rt.storage_key, *KUBERNETES)
    if svc is not None:
        ports = (svc.get("spec") or {}).get("ports") or []
        if any(p.get("name") == "https" and p.get("targetPort") != apiserver.port for p in ports):
            updated = copy.deepcopy(svc)
            for p in updated["spec"]["ports"]:
                if p.get("name") == "https":
                    p["targetPort"] = apiserver.port
            apiserver.api.update(svc_rt, "default", "kubernetes", updated, "", context, WriteOptions())
    for rt, desired in zip(
        (ep_rt, slice_rt), kubernetes_endpoints(advertised_address(apiserver.host), apiserver.port), strict=True
    ):
        current = apiserver.api.store.get(rt.storage_key, *KUBERNETES)
        if current is None:
            apiserver.api.create(rt, "default", desired, context, WriteOptions())
            continue
        updated = copy.deepcopy(current)
        updated.update({k: v for k, v in desired.items() if k != "metadata"})
        if updated != current:
            apiserver.api.update(rt, "default", "kubernetes", updated, "", context, WriteOptions())
