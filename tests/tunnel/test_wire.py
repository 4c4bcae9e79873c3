"""What a proxied request carries on a tunnel stream, and what it may not."""

from __future__ import annotations

import pytest

from karmada.tunnel import wire
from karmada.tunnel.wire import Caller


@pytest.mark.parametrize(
    ("header", "kept"),
    [
        ("Accept", True),
        ("Content-Type", True),
        ("User-Agent", True),
        ("Sec-WebSocket-Protocol", True),  # the subprotocol the member must choose
        ("Authorization", False),  # the caller's credentials are the control plane's, never the member's
        ("Cookie", False),
        ("Impersonate-User", False),  # a caller cannot choose whom the member sees
        ("Impersonate-Group", False),
        ("Impersonate-Extra-Scopes", False),
        ("Impersonate-Uid", False),
        ("X-Remote-User", False),  # front-proxy headers a member might trust
        ("Karmada-Upgrade", False),  # the tunnel's own
        ("Connection", False),
        ("Upgrade", False),
        ("Transfer-Encoding", False),
        ("Host", False),
        ("Sec-WebSocket-Key", False),  # each hop's own handshake
        (":path", False),
    ],
)
def test_forwardable(header: str, kept: bool) -> None:
    assert bool(wire.forwardable([(header, "v")])) is kept


@pytest.mark.parametrize(
    ("caller", "expected"),
    [
        (Caller("alice"), [("impersonate-user", "alice")]),
        (
            Caller("alice", ("dev", "system:authenticated")),
            [("impersonate-user", "alice"), ("impersonate-group", "dev")],
        ),
        (
            Caller("system:serviceaccount:ns:sa", ("system:serviceaccounts",), uid="u-1"),
            [
                ("impersonate-user", "system:serviceaccount:ns:sa"),
                ("impersonate-group", "system:serviceaccounts"),
                ("impersonate-uid", "u-1"),
            ],
        ),
        (
            Caller("bob", extra=(("Scopes/Team A", ("x", "y")),)),
            [
                ("impersonate-user", "bob"),
                ("impersonate-extra-scopes%2Fteam%20a", "x"),
                ("impersonate-extra-scopes%2Fteam%20a", "y"),
            ],
        ),
    ],
)
def test_impersonation(caller: Caller, expected: list[tuple[str, str]]) -> None:
    assert caller.impersonation() == expected


def test_a_request_travels_with_its_caller_and_comes_out_the_same() -> None:
    caller = Caller("alice", ("dev",))
    headers = [("Accept", "application/json"), ("Authorization", "Bearer secret"), ("Impersonate-User", "root")]
    sent = wire.request_headers("GET", "/api/v1/pods?watch=1", "member1", headers, caller)
    assert sent[:4] == [
        (":method", "GET"),
        (":scheme", "https"),
        (":authority", "member1"),
        (":path", "/api/v1/pods?watch=1"),
    ]
    method, path, forwarded, impersonation, websocket = wire.split_request(sent)
    assert (method, path, websocket) == ("GET", "/api/v1/pods?watch=1", False)
    assert forwarded == [("accept", "application/json")]
    assert impersonation == [("impersonate-user", "alice"), ("impersonate-group", "dev")]
    assert "secret" not in repr(sent) and "root" not in repr(sent)


def test_a_websocket_request_says_so() -> None:
    sent = wire.request_headers(
        "GET", "/exec", "m", [("Sec-WebSocket-Protocol", "v5.channel.k8s.io")], Caller("a"), True
    )
    assert wire.split_request(sent)[4] is True


def test_answers_drop_hop_by_hop_headers() -> None:
    answer = wire.response_headers(200, [("Content-Type", "text/plain"), ("Transfer-Encoding", "chunked")])
    assert answer == [(":status", "200"), ("content-type", "text/plain")]
