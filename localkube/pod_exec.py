"""``pods/exec`` and ``pods/attach`` over WebSocket, as the kubelet streams them.

The WebSocket subprotocols are kube's remote command channels:
``v5.channel.k8s.io`` and ``v4.channel.k8s.io`` (binary messages whose first
byte is the channel: 0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize; v5 adds
255, the client closing one of its streams), and the older
``channel.k8s.io`` and ``base64.channel.k8s.io`` (the error channel carries
plain text there; base64 sends text messages whose first character is the
channel digit). Query: ``command`` (repeated), ``container``, ``stdin``,
``stdout``, ``stderr``, ``tty``. When the command ends the error channel gets
a v1 Status (``Success``, or ``Failure`` with reason ``NonZeroExitCode`` and
the exit code as an ``ExitCode`` cause) and the connection closes, as
kubectl expects, so ``kubectl exec`` exits with the command's code.

exec runs :mod:`localkube.container_shell`. attach joins the container's main
process: its stdout gets the lines the container writes to its log from then
on (:mod:`localkube.pod_logs`), and each line written to its stdin is echoed
back on stdout, until the client goes or the Pod does.

Errors before the upgrade are kube's: the Pod (404), the container (400),
``pod X does not have a host assigned`` (400), and the kubelet's plain-text
500 ``container not found ("X")`` for a container that is not running.

Where localkube differs: no SPDY. kubectl 1.32 speaks WebSocket first and
falls back to SPDY/3.1 only when the upgrade fails; Python has no maintained
SPDY library, so an SPDY upgrade is answered with a 400 Status saying so (its
checks of Pod and container run first, so kubectl, which reports the
fallback's error, still shows kube's message). A TTY echoes nothing and has no
line discipline: output lines end in ``\\r\\n`` and stderr joins stdout. Env
values from ``valueFrom`` are not resolved.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from aiohttp import WSMsgType, web

from localkube.container_shell import PATH, Container, NotFound, Shell
from localkube.errors import APIError, bad_request
from localkube.pod_connect import (
    Target,
    parse_bool,
    require_host,
    require_running,
    same_pod,
    target,
)
from localkube.pod_logs import POLL_SECONDS, line_count, lines_until, next_line_at, render, started_at

Obj = dict[str, Any]

STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255
V5, V4 = "v5.channel.k8s.io", "v4.channel.k8s.io"
V1, BASE64 = "channel.k8s.io", "base64.channel.k8s.io"
PROTOCOLS = (V5, V4, V1, BASE64)
CLOSE_TIMEOUT = 2.0  # seconds to wait for the client's answer to our close frame


def no_spdy(what: str) -> APIError:
    return bad_request(
        f"localkube serves {what} over WebSocket only ({', '.join(PROTOCOLS)}): SPDY/3.1 is not supported"
    )


def check(store: Any, namespace: str, name: str, query: Any, subresource: str) -> Target:
    """What kube-apiserver and the kubelet check before they upgrade."""
    found = target(store, namespace, name, query.get("container", ""))
    if subresource == "exec" and not query.getall("command", []):
        raise bad_request("you must specify at least 1 command")
    require_host(found.pod)
    require_running(found)
    if not any(parse_bool(query, key) for key in ("stdin", "stdout", "stderr")):
        raise bad_request("you must specify at least 1 of stdin, stdout, stderr")
    return found


def upgrade_kind(request: web.Request) -> str:
    """``websocket``, ``spdy`` or ``""`` (not an upgrade)."""
    upgrade = request.headers.get("Upgrade", "").lower()
    if "websocket" in upgrade:
        return "websocket"
    if "spdy" in upgrade:
        return "spdy"
    return ""


async def upgrade(request: web.Request, what: str, protocols: tuple[str, ...]) -> web.WebSocketResponse:
    kind = upgrade_kind(request)
    if kind == "spdy":
        raise no_spdy(what)
    if kind != "websocket":
        raise bad_request("Upgrade request required")
    ws = web.WebSocketResponse(protocols=protocols, timeout=CLOSE_TIMEOUT, autoping=True)
    await ws.prepare(request)
    return ws


class Channels:
    """One remote command connection: the client's streams in, ours out."""

    def __init__(self, ws: web.WebSocketResponse, tty: bool) -> None:
        self.ws = ws
        self.protocol = ws.ws_protocol or V1
        self.tty = tty
        self._stdin: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._pending = b""
        self._eof = False
        self.gone = asyncio.Event()  # the client closed the connection

    async def write(self, channel: int, data: bytes) -> None:
        if self.ws.closed:
            return
        if self.tty and channel in (STDOUT, STDERR):
            channel = STDOUT
            data = data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
        with contextlib.suppress(ConnectionResetError, RuntimeError):
            if self.protocol == BASE64:
                await self.ws.send_str(str(channel) + base64.b64encode(data).decode())
            else:
                await self.ws.send_bytes(bytes([channel]) + data)

    async def stdout(self, data: bytes) -> None:
        await self.write(STDOUT, data)

    async def stderr(self, data: bytes) -> None:
        await self.write(STDERR, data)

    async def pump(self) -> None:
        """Read the client's messages until it goes: stdin, resizes, stream closes."""
        try:
            async for message in self.ws:
                if message.type == WSMsgType.BINARY:
                    raw: bytes = message.data
                elif message.type == WSMsgType.TEXT and self.protocol == BASE64:
                    text: str = message.data
                    if not text:
                        continue
                    raw = bytes([int(text[0])]) + base64.b64decode(text[1:])
                else:
                    continue
                if not raw:
                    continue
                channel, data = raw[0], raw[1:]
                if channel == STDIN and data:
                    self._stdin.put_nowait(data)
                elif channel == CLOSE and self.protocol == V5 and data[:1] == bytes([STDIN]):
                    self._stdin.put_nowait(None)
                # RESIZE: no terminal to resize
        finally:
            self._stdin.put_nowait(None)
            self.gone.set()

    async def read_line(self) -> str | None:
        """The next line of stdin without its end (``\n``, ``\r`` as a raw TTY sends it, or
        ``\r\n``), None once stdin has ended."""
        while True:
            for i, byte in enumerate(self._pending):
                if byte in (10, 13):
                    line, rest = self._pending[:i], self._pending[i + 1 :]
                    if byte == 13 and rest.startswith(b"\n"):
                        rest = rest[1:]
                    self._pending = rest
                    return line.decode(errors="replace")
            if self._eof:
                break
            chunk = await self._stdin.get()
            if chunk is None:
                self._eof = True
            else:
                self._pending += chunk
        if not self._pending:
            return None
        line, self._pending = self._pending, b""
        return line.decode(errors="replace")

    async def finish(self, status: Obj, text: str) -> None:
        """The command's outcome on the error channel, then the end of the connection."""
        if self.protocol in (V5, V4):
            await self.write(ERROR, json.dumps(status, separators=(",", ":")).encode())
        elif text:
            await self.write(ERROR, text.encode())
        with contextlib.suppress(ConnectionResetError, RuntimeError):
            await self.ws.close()


def success() -> Obj:
    return {"metadata": {}, "status": "Success"}


def exit_status(argv: list[str], code: int) -> tuple[Obj, str]:
    """The kubelet's Status of a command that exited with ``code`` (and v1's plain text)."""
    if code == 0:
        return success(), ""
    message = (
        f"command terminated with non-zero exit code: error executing command [{' '.join(argv)}], exit code {code}"
    )
    status = {
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]},
    }
    return status, message


def start_failure(name: str) -> tuple[Obj, str]:
    """What containerd answers when the executable is missing (an internal error for kube)."""
    message = (
        "Internal error occurred: error executing command in container: failed to exec in container:"
        f" failed to start exec: OCI runtime exec failed: exec failed: unable to start container process:"
        f' exec: "{name}": executable file not found in $PATH: unknown'
    )
    status = {"metadata": {}, "status": "Failure", "message": message, "reason": "InternalError", "code": 500}
    return status, message


def container_view(store: Any, found: Target, tty: bool) -> Container:
    """The environment and files a command in the container sees."""
    pod = found.pod
    meta = pod["metadata"]
    name, namespace = meta["name"], meta.get("namespace", "")
    env: list[tuple[str, str]] = [("PATH", PATH), ("HOSTNAME", name)]
    if tty:
        env.append(("TERM", "xterm"))
    for entry in found.container.get("env") or []:
        if "value" in entry or not entry.get("valueFrom"):
            env.append((str(entry.get("name", "")), str(entry.get("value", ""))))
    service = store.get("/services", "default", "kubernetes")
    host = ((service or {}).get("spec") or {}).get("clusterIP") or "10.96.0.1"
    env += [
        ("KUBERNETES_SERVICE_HOST", host),
        ("KUBERNETES_SERVICE_PORT", "443"),
        ("KUBERNETES_SERVICE_PORT_HTTPS", "443"),
        ("KUBERNETES_PORT", f"tcp://{host}:443"),
        ("KUBERNETES_PORT_443_TCP", f"tcp://{host}:443"),
        ("KUBERNETES_PORT_443_TCP_PROTO", "tcp"),
        ("KUBERNETES_PORT_443_TCP_PORT", "443"),
        ("KUBERNETES_PORT_443_TCP_ADDR", host),
        ("HOME", "/root"),
    ]
    pod_ip = (pod.get("status") or {}).get("podIP", "")
    hosts = (
        "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
        "fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n"
    )
    if pod_ip:
        hosts += f"{pod_ip}\t{name}\n"
    files = {
        "/etc/hostname": f"{name}\n",
        "/etc/hosts": hosts,
        "/etc/resolv.conf": (
            f"search {namespace}.svc.cluster.local svc.cluster.local cluster.local\n"
            "nameserver 10.96.0.10\noptions ndots:5\n"
        ),
        "/var/run/secrets/kubernetes.io/serviceaccount/namespace": namespace,
    }
    return Container(env, name, files)


async def _run_until_gone(channels: Channels, work: Any) -> Any:
    """Run ``work`` while the client stays; None when the client went first."""
    pump = asyncio.create_task(channels.pump())
    task = asyncio.ensure_future(work)
    gone = asyncio.create_task(channels.gone.wait())
    try:
        await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            return task.result()
        return None
    finally:
        for pending in (task, gone):
            pending.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(task, gone, return_exceptions=True)
        if not pump.done():
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pump


async def serve_exec(store: Any, request: web.Request, found: Target) -> web.StreamResponse:
    """``pods/NAME/exec``: run the command in the simulated shell."""
    ws = await upgrade(request, "pods/exec", PROTOCOLS)
    tty = parse_bool(request.query, "tty")
    channels = Channels(ws, tty)
    argv = list(request.query.getall("command", []))
    shell = Shell(container_view(store, found, tty), channels.stdout, channels.stderr, channels.read_line)

    async def command() -> tuple[Obj, str]:
        try:
            code = await shell.run(argv)
        except NotFound as missing:
            return start_failure(missing.name)
        return exit_status(argv, code)

    outcome = await _run_until_gone(channels, command())
    if outcome is not None:
        await channels.finish(*outcome)
    return ws


async def serve_attach(
    store: Any,
    request: web.Request,
    found: Target,
    interval: float,
    clock: Callable[[], datetime] | None = None,
) -> web.StreamResponse:
    """``pods/NAME/attach``: the container's new log lines, and its stdin echoed."""
    now_of = clock or (lambda: datetime.now(UTC))
    ws = await upgrade(request, "pods/attach", PROTOCOLS)
    channels = Channels(ws, parse_bool(request.query, "tty"))
    status = found.status() or {}
    started = (started_at(status) or (now_of(), None))[0]

    async def echo() -> None:
        while (line := await channels.read_line()) is not None:
            await channels.stdout(f"{line}\n".encode())
        await asyncio.Event().wait()  # stdin closed: the process goes on writing

    async def main_process() -> None:
        echoing = asyncio.create_task(echo())
        try:
            number = line_count(started, interval, now_of())
            while same_pod(store, found.pod):
                due = next_line_at(started, interval, number)
                while (wait := (due - now_of()).total_seconds()) > 0:
                    await asyncio.sleep(min(wait, POLL_SECONDS))
                    if not same_pod(store, found.pod):
                        return
                fresh = lines_until(found.container, started, interval, now_of(), number)
                number += len(fresh)
                await channels.stdout(render(fresh, False))
        finally:
            echoing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await echoing

    outcome = await _run_until_gone(channels, main_process())
    if outcome is not None or not channels.gone.is_set():
        await channels.finish(success(), "")
    return ws
