"""``pods/portforward``: the real kubectl's SPDY-over-WebSocket port-forward to a
simulated Pod whose containerPorts echo, the kubelet's WebSocket channel protocol with
an aiohttp client, kube's errors, and the SPDY frames in a table."""

from __future__ import annotations

import asyncio
import json
import re
import socket
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest
import yaml

from localkube import spdy
from localkube.simulation import SimulationConfig
from tests.localkube.running_pods import background, pod, read_lines, run_pod
from tests.servers import Kubectl, Raw, ServerThread, start_server

FORWARDING = re.compile(r"Forwarding from 127\.0\.0\.1:(\d+) -> (\d+)")
PORTFORWARD = "/api/v1/namespaces/default/pods/web/portforward"


@pytest.fixture(scope="module")
def simulated() -> Iterator[ServerThread]:
    yield from start_server(port=0, simulation=SimulationConfig(nodes=1, node_prefix="pf", shutdown_seconds=0.2))


@pytest.fixture(scope="module")
def web(kubectl: Kubectl) -> dict[str, Any]:
    ports = [{"containerPort": 8080}, {"containerPort": 9090, "name": "metrics"}]
    return run_pod(kubectl, pod("web", [{"name": "web", "image": "nginx", "ports": ports}]))


def _local_ports(lines: list[str]) -> dict[int, int]:
    """kubectl's ``Forwarding from`` lines: remote port -> local port (IPv4)."""
    return {int(m[2]): int(m[1]) for line in lines if (m := FORWARDING.search(line))}


def _echo(port: int, payload: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(payload)
        conn.shutdown(socket.SHUT_WR)
        got = b""
        while chunk := conn.recv(65536):
            got += chunk
        return got


def test_kubectl_port_forward_echoes(kubectl: Kubectl, web: dict[str, Any]) -> None:
    with background(kubectl, "port-forward", "pod/web", ":8080", ":9090") as forward:
        local = _local_ports(read_lines(forward, 4))  # IPv4 and IPv6 for each port
        assert set(local) == {8080, 9090}
        assert _echo(local[8080], b"hello over spdy") == b"hello over spdy"
        assert _echo(local[8080], b"twice") == b"twice"  # a second connection, new streams
        big = bytes(range(256)) * 200
        assert _echo(local[9090], big) == big
        assert forward.poll() is None


def test_a_port_nothing_listens_on(kubectl: Kubectl, web: dict[str, Any]) -> None:
    with background(kubectl, "port-forward", "pod/web", ":7070") as forward:
        local = _local_ports(read_lines(forward, 2))
        assert _echo(local[7070], b"anyone?") == b""
        assert forward.wait(timeout=10) == 1
        assert forward.stderr is not None
        stderr = forward.stderr.read()
    assert "error forwarding port 7070 to pod web, uid " in stderr and "lost connection to pod" in stderr


def test_errors_as_kube_gives_them(kubectl: Kubectl) -> None:
    unscheduled = pod("nowhere", [{"name": "idle", "image": "busybox"}], nodeSelector={"no": "such-node"})
    kubectl("apply", "-f", "-", stdin=yaml.safe_dump(unscheduled))
    missing = kubectl("port-forward", "pod/missing", ":8080", check=False)
    assert missing.returncode == 1 and 'pods "missing" not found' in missing.stderr
    with background(kubectl, "port-forward", "pod/nowhere", ":8080") as forward:
        # kubectl gets the Pod first, and refuses one that is not Running itself
        assert forward.wait(timeout=10) == 1
        assert forward.stderr is not None
        assert "pod is not running" in forward.stderr.read()


async def test_websocket_channels(sim_raw: Raw, web: dict[str, Any]) -> None:
    url = sim_raw.url + PORTFORWARD + "?ports=8080&ports=7070"
    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(url, protocols=("v4.channel.k8s.io",), ssl=sim_raw.context) as ws,
    ):
        assert ws.protocol == "v4.channel.k8s.io"
        first = [(await ws.receive_bytes()) for _ in range(5)]
        # data and error channel of each port open with the port, little-endian; 7070 then fails
        assert first[:4] == [b"\x00\x90\x1f", b"\x01\x90\x1f", b"\x02\x9e\x1b", b"\x03\x9e\x1b"]
        assert first[4].startswith(b"\x03error forwarding port 7070 to pod web")
        await ws.send_bytes(b"\x00ping")
        assert await ws.receive_bytes() == b"\x00ping"
    async with aiohttp.ClientSession() as session:
        spdy_headers = {"Connection": "Upgrade", "Upgrade": "SPDY/3.1"}
        async with session.post(sim_raw.url + PORTFORWARD, headers=spdy_headers, ssl=sim_raw.context) as response:
            body = json.loads(await response.text())
            assert response.status == 400 and "SPDY/3.1 upgrades are not supported" in body["message"]
        async with session.get(sim_raw.url + PORTFORWARD, ssl=sim_raw.context) as response:
            assert (response.status, json.loads(await response.text())["message"]) == (400, "Upgrade request required")
    await asyncio.sleep(0.05)  # the connections are closed: let their TLS shutdown finish


# -- SPDY/3.1 frames ------------------------------------------------------------------------------
def test_spdy_frames_round_trip_byte_by_byte() -> None:
    client, server = spdy.Session(), spdy.Session()
    headers = {"streamtype": ["data"], "port": ["8080"], "requestid": ["0"]}
    wire = client.syn_stream(1, headers) + client.syn_stream(3, {"streamtype": ["error"]}, fin=True)
    wire += spdy.Session.data(1, b"abc", fin=True) + client.ping(7)
    frames = [frame for byte in wire for frame in server.feed(bytes([byte]))]
    assert [(f.kind, f.stream_id, f.fin) for f in frames] == [
        (spdy.SYN_STREAM, 1, False),
        (spdy.SYN_STREAM, 3, True),
        (spdy.DATA, 1, True),
        (spdy.PING, 0, False),
    ]
    assert frames[0].headers == headers and frames[1].headers == {"streamtype": ["error"]}
    assert frames[2].data == b"abc" and frames[3].raw == client.ping(7)
    reply = client.feed(server.syn_reply(1, {"a": ["b", "c"]}))
    assert (reply[0].kind, reply[0].stream_id, reply[0].headers) == (spdy.SYN_REPLY, 1, {"a": ["b", "c"]})


@pytest.mark.parametrize(
    "wire",
    [
        b"\x80\x02\x00\x01\x00\x00\x00\x0a" + bytes(10),  # SPDY/2
        b"\x80\x03\x00\x01\x00\x00\x00\x0e" + bytes(10) + b"nope",  # not zlib
    ],
)
def test_spdy_refuses_what_it_cannot_read(wire: bytes) -> None:
    with pytest.raises(spdy.ProtocolError):
        spdy.Session().feed(wire)
