"""``pods/exec`` and ``pods/attach`` over WebSocket, driven by the real kubectl (its
exit codes, stdin, attach's stream) and by an aiohttp client (the channel protocols,
the SPDY refusal); the simulated shell's parsing and commands in tables."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml

from localkube import container_shell
from localkube.simulation import SimulationConfig
from tests.localkube.running_pods import background, hold_waiting, pod, read_lines, run_pod
from tests.servers import Kubectl, Raw, ServerThread, start_server

INTERVAL = 0.2
EXEC = "/api/v1/namespaces/default/pods/web/exec"


@pytest.fixture(scope="module")
def simulated() -> Iterator[ServerThread]:
    config = SimulationConfig(nodes=1, node_prefix="exec", log_interval=INTERVAL, shutdown_seconds=0.2)
    yield from start_server(port=0, simulation=config)


@pytest.fixture(scope="module")
def web(kubectl: Kubectl) -> dict[str, Any]:
    container = {"name": "web", "image": "nginx", "env": [{"name": "GREETING", "value": "hello there"}]}
    return run_pod(kubectl, pod("web", [container]))


@pytest.fixture(scope="module")
def multi(kubectl: Kubectl) -> dict[str, Any]:
    containers: list[dict[str, Any]] = [
        {"name": "a", "image": "busybox", "stdin": True},
        {"name": "b", "image": "alpine"},
    ]
    return run_pod(kubectl, pod("multi", containers))


@pytest.mark.parametrize(
    ("command", "stdout", "code"),
    [
        (["echo", "hi", "there"], "hi there\n", 0),
        (["hostname"], "web\n", 0),
        (["printenv", "GREETING"], "hello there\n", 0),
        (["cat", "/etc/hostname"], "web\n", 0),
        (["false"], "", 1),
        (["sh", "-c", "echo $HOSTNAME; exit 3"], "web\n", 3),
        (["/bin/sh", "-c", "false || echo fell $?"], "fell 1\n", 0),
    ],
)
def test_exec_runs_the_command(
    kubectl: Kubectl, web: dict[str, Any], command: list[str], stdout: str, code: int
) -> None:
    result = kubectl("exec", "web", "--", *command, check=False)
    assert (result.stdout, result.returncode) == (stdout, code), result.stderr
    if code:
        assert f"command terminated with exit code {code}" in result.stderr


def test_exec_env_is_the_containers(kubectl: Kubectl, web: dict[str, Any]) -> None:
    env = dict(line.split("=", 1) for line in kubectl("exec", "web", "--", "env").stdout.splitlines())
    assert env["GREETING"] == "hello there" and env["HOSTNAME"] == "web"
    assert env["KUBERNETES_SERVICE_PORT"] == "443" and env["KUBERNETES_SERVICE_HOST"]
    assert env["PATH"].startswith("/usr/local/sbin:")


def test_exec_failures_reach_kubectl(kubectl: Kubectl, web: dict[str, Any]) -> None:
    missing = kubectl("exec", "web", "--", "cat", "/etc/nope", check=False)
    assert missing.returncode == 1 and "cat: /etc/nope: No such file or directory" in missing.stderr
    unknown = kubectl("exec", "web", "--", "frobnicate", check=False)
    assert unknown.returncode == 1
    assert 'exec: "frobnicate": executable file not found in $PATH' in unknown.stderr


def test_exec_shell_reads_stdin(kubectl: Kubectl, web: dict[str, Any]) -> None:
    script = "echo one\nhostname && echo two\ncat /etc/hostname\nexit 4\necho never\n"
    result = kubectl("exec", "-i", "web", "--", "sh", stdin=script, check=False)
    assert (result.stdout, result.returncode) == ("one\nweb\ntwo\nweb\n", 4)
    ended = kubectl("exec", "-i", "web", "--", "sh", stdin="echo last\n")
    assert ended.stdout == "last\n"  # the end of stdin ends the shell
    assert kubectl("exec", "-i", "web", "--", "cat", stdin="a\nb\n").stdout == "a\nb\n"


def test_attach_streams_new_log_lines_and_echoes_stdin(kubectl: Kubectl, multi: dict[str, Any]) -> None:
    with background(kubectl, "attach", "multi", "-c", "a") as attach:
        ticks = read_lines(attach, 2)
    assert all(line.startswith("a: tick ") for line in ticks)
    with background(kubectl, "attach", "-i", "multi", "-c", "a", stdin=True) as attach:
        assert attach.stdin is not None
        attach.stdin.write("hello\n")
        attach.stdin.flush()
        seen = read_lines(attach, 3)
    assert "hello" in seen


def test_errors_as_kube_gives_them(kubectl: Kubectl, multi: dict[str, Any]) -> None:
    run_pod(kubectl, pod("creating", [{"name": "c", "image": "busybox"}]))
    hold_waiting(kubectl, "creating")
    unscheduled = pod("nowhere", [{"name": "idle", "image": "busybox"}], nodeSelector={"no": "such-node"})
    kubectl("apply", "-f", "-", stdin=yaml.safe_dump(unscheduled))
    cases = [
        (["exec", "multi", "-c", "zz", "--", "true"], "container zz is not valid for pod multi"),
        (["exec", "creating", "--", "true"], 'container not found ("c")'),
        (["exec", "nowhere", "--", "true"], "pod nowhere does not have a host assigned"),
        (["attach", "creating"], 'container not found ("c")'),
        (["exec", "missing", "--", "true"], 'pods "missing" not found'),
    ]
    for args, message in cases:
        result = kubectl(*args, check=False, timeout=20)
        assert result.returncode != 0 and message in result.stderr, (args, result.stderr)


def test_exec_needs_the_right(simulated: ServerThread, kubectl: Kubectl, workdir: Path, web: dict[str, Any]) -> None:
    rules = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]
    grant = [{"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["get"]}]
    for user, extra in (("pod-reader", []), ("ws-execer", grant)):
        kubectl("create", "role", user, "--verb=get", "--resource=pods")
        role = json.loads(kubectl("get", "role", user, "-o", "json").stdout)
        role["rules"] = rules + extra
        kubectl("replace", "-f", "-", stdin=json.dumps(role))
        kubectl("create", "rolebinding", user, f"--role={user}", f"--user={user}")
    reader = Kubectl(simulated.kubeconfig(workdir, "pod-reader", []), workdir / "cache")
    refused = reader("exec", "web", "--", "true", check=False)
    assert refused.returncode == 1
    assert 'User "pod-reader" cannot create resource "pods/exec" in API group ""' in refused.stderr
    # kube 1.32 authorizes a WebSocket exec (a GET) as verb get
    execer = Kubectl(simulated.kubeconfig(workdir, "ws-execer", []), workdir / "cache")
    assert execer("exec", "web", "--", "echo", "allowed").stdout == "allowed\n"


# -- the wire, with an aiohttp client ------------------------------------------------------------
async def _exec(raw: Raw, query: str, protocol: str, stdin: bytes = b"") -> tuple[str, dict[int, bytes], list[Any]]:
    frames: dict[int, bytes] = {}
    texts: list[Any] = []
    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(raw.url + EXEC + "?" + query, protocols=(protocol,), ssl=raw.context) as ws,
    ):
        if stdin:
            await ws.send_bytes(b"\x00" + stdin)
            await ws.send_bytes(b"\xff\x00")  # v5: stdin closed
        async for message in ws:
            if message.type == aiohttp.WSMsgType.BINARY:
                frames[message.data[0]] = frames.get(message.data[0], b"") + message.data[1:]
            elif message.type == aiohttp.WSMsgType.TEXT:
                texts.append(message.data)
        protocol = ws.protocol or ""
    await asyncio.sleep(0.05)  # the connection is closed: let its TLS shutdown finish
    return protocol, frames, texts


async def test_channel_protocols(sim_raw: Raw, web: dict[str, Any]) -> None:
    protocol, frames, _ = await _exec(sim_raw, "command=sh&command=-c&command=exit+2&stdout=1", "v4.channel.k8s.io")
    status = json.loads(frames[3])
    assert protocol == "v4.channel.k8s.io"
    assert (status["status"], status["reason"]) == ("Failure", "NonZeroExitCode")
    assert status["details"]["causes"] == [{"reason": "ExitCode", "message": "2"}]
    _, frames, _ = await _exec(sim_raw, "command=sh&stdin=1&stdout=1", "v5.channel.k8s.io", b"echo via-stdin\n")
    assert frames[1] == b"via-stdin\n" and json.loads(frames[3]) == {"metadata": {}, "status": "Success"}
    _, frames, _ = await _exec(sim_raw, "command=echo&command=x&stdout=1&tty=1", "v5.channel.k8s.io")
    assert frames[1] == b"x\r\n"
    _, _, texts = await _exec(sim_raw, "command=echo&command=b64&stdout=1", "base64.channel.k8s.io")
    assert "1" + base64.b64encode(b"b64\n").decode() in texts


async def test_no_spdy_and_no_plain_requests(sim_raw: Raw, web: dict[str, Any]) -> None:
    headers = [("Connection", "Upgrade"), ("Upgrade", "SPDY/3.1"), ("X-Stream-Protocol-Version", "v4.channel.k8s.io")]
    status, body, _ = await sim_raw.request("POST", EXEC + "?command=true&stdout=1", extra_headers=headers)
    assert status == 400 and "SPDY/3.1 is not supported" in body["message"]
    status, body, _ = await sim_raw.request("GET", EXEC + "?command=true&stdout=1")
    assert (status, body["message"]) == (400, "Upgrade request required")
    status, body, _ = await sim_raw.request("GET", EXEC + "?stdout=1")
    assert (status, body["message"]) == (400, "you must specify at least 1 command")


# -- the simulated shell --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("line", "parsed"),
    [
        ("echo a", [("", "echo a")]),
        ("echo a; echo b", [("", "echo a"), ("", " echo b")]),
        ("true && echo yes || echo no", [("", "true "), ("&&", " echo yes "), ("||", " echo no")]),
        ("echo 'a;b' \"c&&d\"", [("", "echo 'a;b' \"c&&d\"")]),
        ("echo a # note; echo b", [("", "echo a ")]),
        ("echo a#b", [("", "echo a#b")]),
        ("  ", []),
    ],
)
def test_shell_splits_statements(line: str, parsed: list[tuple[str, str]]) -> None:
    assert container_shell.split_statements(line) == parsed


@pytest.mark.parametrize(
    ("text", "argv"),
    [
        ("echo $HOME ${USER}x", ["echo", "/root", "rootx"]),
        ("echo '$HOME' \"$HOME\"", ["echo", "$HOME", "/root"]),
        ("echo $? $UNSET.", ["echo", "3", "."]),
        ("printf 'a b'", ["printf", "a b"]),
    ],
)
def test_shell_expands_and_quotes(text: str, argv: list[str]) -> None:
    assert container_shell.words(text, {"HOME": "/root", "USER": "root"}, 3) == argv


async def _shell(argv: list[str], stdin: list[str] | None = None) -> tuple[str, str, int]:
    out: list[bytes] = []
    err: list[bytes] = []
    lines = list(stdin or [])

    async def write_out(data: bytes) -> None:
        out.append(data)

    async def write_err(data: bytes) -> None:
        err.append(data)

    async def read_line() -> str | None:
        return lines.pop(0) if lines else None

    view = container_shell.Container([("A", "1")], "host", {"/etc/hostname": "host\n"})
    code = await container_shell.Shell(view, write_out, write_err, read_line).run(argv)
    return b"".join(out).decode(), b"".join(err).decode(), code


@pytest.mark.parametrize(
    ("argv", "stdin", "expected"),
    [
        (["echo", "-n", "x"], None, ("x", "", 0)),
        (["printenv", "A", "B"], None, ("1\n", "", 1)),
        (["sh", "-c", "nope"], None, ("", "sh: nope: not found\n", 127)),
        (["sh", "-c", "echo 'open"], None, ("", "sh: syntax error: unterminated quoted string\n", 2)),
        (["sh"], ["echo $A", "exit 5", "echo after"], ("1\n", "", 5)),
        (
            ["bash", "-c", "cat /etc/hostname /x; echo $?"],
            None,
            ("host\n1\n", "cat: /x: No such file or directory\n", 0),
        ),
        (["sleep", "0"], None, ("", "", 0)),
        (["sh", "-c", "exit"], None, ("", "", 0)),
    ],
)
async def test_shell_commands(argv: list[str], stdin: list[str] | None, expected: tuple[str, str, int]) -> None:
    assert await _shell(argv, stdin) == expected


async def test_an_unknown_command_is_the_runtimes_failure() -> None:
    with pytest.raises(container_shell.NotFound):
        await _shell(["nope"])
