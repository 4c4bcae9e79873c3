"""How a proxied request travels on a tunnel stream, both ends' view.

The control plane sends the request's pseudo-headers (``:method``, ``:path``
with its query, ``:authority`` the cluster's name), the caller's headers that
may travel (never its credentials nor hop-by-hop headers, nor its own
``Impersonate-*``), and who the caller is, as the ``impersonate-*`` headers the
member will be sent. A WebSocket request adds ``karmada-upgrade: websocket``
and answers ``karmada-upgraded: websocket`` with the protocol the member chose.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from urllib.parse import quote

from karmada.tunnel.link import Headers

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "http2-settings",
    }
)
WEBSOCKET_HEADERS = frozenset({"sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions"})
CREDENTIALS = frozenset({"authorization", "cookie"})
UPGRADE = "karmada-upgrade"
UPGRADED = "karmada-upgraded"
PROTOCOL = "sec-websocket-protocol"
IMPERSONATE_USER = "impersonate-user"
IMPERSONATE_GROUP = "impersonate-group"
IMPERSONATE_UID = "impersonate-uid"
IMPERSONATE_EXTRA = "impersonate-extra-"
# groups every authenticated caller has; the member adds them itself (kube refuses none, Karmada skips them)
IMPLIED_GROUPS = frozenset({"system:authenticated", "system:unauthenticated"})


@dataclass(frozen=True)
class Caller:
    """Who sent a proxied request, as the control plane authenticated them."""

    user: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()  # sorted (key, values): callers are dictionary keys

    def impersonation(self) -> Headers:
        """The member's ``Impersonate-*`` headers for this caller."""
        headers: Headers = [(IMPERSONATE_USER, self.user)]
        headers += [(IMPERSONATE_GROUP, group) for group in self.groups if group not in IMPLIED_GROUPS]
        if self.uid:
            headers.append((IMPERSONATE_UID, self.uid))
        for key, values in self.extra:
            # kube's rule: the key is percent-encoded in the header name
            headers += [(IMPERSONATE_EXTRA + quote(key.lower(), safe=""), value) for value in values]
        return headers


def forwardable(headers: Headers) -> Headers:
    """The caller's headers that go on to the member."""
    out = []
    for name, value in headers:
        lower = name.lower()
        if lower in HOP_BY_HOP or lower in CREDENTIALS or lower in WEBSOCKET_HEADERS or lower.startswith(":"):
            continue
        if lower.startswith(("impersonate-", "karmada-", "x-remote-")):
            continue
        out.append((lower, value))
    return out


def request_headers(
    method: str, path_qs: str, cluster: str, headers: Headers, caller: Caller, websocket: bool = False
) -> Headers:
    sent: Headers = [(":method", method), (":scheme", "https"), (":authority", cluster), (":path", path_qs)]
    sent += forwardable(headers)
    sent += caller.impersonation()
    if websocket:
        sent.append((UPGRADE, "websocket"))
    return sent


def response_headers(status: int, headers: Headers) -> Headers:
    """A member's answer as it goes back through the tunnel."""
    sent: Headers = [(":status", str(status))]
    for name, value in headers:
        lower = name.lower()
        if lower in HOP_BY_HOP or lower in WEBSOCKET_HEADERS:
            continue
        sent.append((lower, value))
    return sent


def status_body(code: int, reason: str, message: str) -> bytes:
    """A ``metav1.Status`` failure, as the API server words its own errors."""
    return json.dumps(
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": reason,
            "code": code,
        }
    ).encode()


def split_request(headers: Headers) -> tuple[str, str, Headers, Headers, bool]:
    """On the agent: method, path, the headers to send the member (caller's and impersonation)
    and the impersonation alone, and whether a WebSocket is asked for."""
    method = path = ""
    forwarded: Headers = []
    impersonation: Headers = []
    websocket = False
    for name, value in headers:
        if name == ":method":
            method = value
        elif name == ":path":
            path = value
        elif name.startswith(":"):
            continue
        elif name == UPGRADE:
            websocket = value == "websocket"
        elif name.startswith("impersonate-"):
            impersonation.append((name, value))
        elif name not in HOP_BY_HOP and name not in CREDENTIALS:
            forwarded.append((name, value))
    return method, path, forwarded, impersonation, websocket
