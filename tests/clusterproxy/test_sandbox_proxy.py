"""The cluster proxy as a user meets it: ``kubectl karmada local up`` with a Pull member
(reached over its agent's tunnel) and a Push member (reached directly), then the real
kubectl through ``proxy-config`` kubeconfigs and ``kubectl karmada logs/exec/attach``:
get, apply, watch, logs -f, exec with stdin and exit codes, attach, port-forward; RBAC
on both sides (a token reviewed, clusters/proxy on the control plane, the member's own
rules for the impersonated caller); the tunnel refusing certificates of other clusters;
and the tunnel coming back after the control plane is killed."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml

from tests.examples.sandbox import LocalSandbox, wait_until
from tests.programs import free_port, kubectl

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


class Proxied:
    def __init__(self, sandbox: LocalSandbox) -> None:
        self.sandbox = sandbox
        self.home = sandbox.home

    def sh(self, line: str, timeout: float = 60) -> str:
        return self.sandbox.sh(line, timeout)

    def run(self, *args: str, stdin: str | None = None, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(args), input=stdin, capture_output=True, text=True, env=self.sandbox.env, timeout=timeout, check=False
        )

    def kubectl(self, config: Path | str, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return self.run(kubectl(), f"--kubeconfig={config}", f"--cache-dir={self.home / 'cache'}", *args, **kwargs)

    def member(self, cluster: str, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        """kubectl straight to the member (the sandbox's own kubeconfig of it)."""
        return self.kubectl(self.sandbox.dir / "members.config", "--context", cluster, *args, **kwargs)

    def config(self, cluster: str) -> Path:
        path = self.home / f"{cluster}.proxy.config"
        path.write_text(self.sh(f"kubectl karmada proxy-config {cluster}"))
        return path


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxied]:
    sandbox = LocalSandbox(tmp_path_factory.mktemp("home"))
    sandbox.up("--member member1", "--member member2:push")
    try:
        yield Proxied(sandbox)
    finally:
        sandbox.down()


def running_pod(proxied: Proxied, config: Path, app: str) -> str:
    def pod() -> str | None:
        got = proxied.kubectl(config, "get", "pods", "-l", f"app={app}", "-o", "json")
        items = json.loads(got.stdout or "{}").get("items") or []
        ready = [p for p in items if (p.get("status") or {}).get("phase") == "Running"]
        return str(ready[0]["metadata"]["name"]) if ready else None

    return str(wait_until(pod, f"a running pod of {app}", timeout=30))


@pytest.mark.parametrize("cluster", ["member1", "member2"])
def test_kubectl_works_in_the_member_through_the_proxy(proxied: Proxied, cluster: str) -> None:
    config = proxied.config(cluster)
    nodes = proxied.kubectl(config, "get", "nodes", "-o", "name")
    assert nodes.returncode == 0, nodes.stderr
    assert nodes.stdout.split() == [f"node/{cluster}-{n}" for n in (1, 2, 3)]
    manifest = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: via-proxy\ndata:\n  cluster: {cluster}\n"
    applied = proxied.kubectl(config, "apply", "--server-side", "-f", "-", stdin=manifest)
    assert applied.returncode == 0, applied.stderr
    direct = proxied.member(cluster, "get", "configmap", "via-proxy", "-o", "jsonpath={.data.cluster}")
    assert direct.stdout == cluster
    whoami = proxied.kubectl(config, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
    assert whoami.stdout == "kubernetes-admin"  # the caller, impersonated: not the agent, not the impersonator


def test_a_watch_streams_through_the_tunnel(proxied: Proxied) -> None:
    config = proxied.config("member1")
    command = [kubectl(), f"--kubeconfig={config}", "get", "configmaps", "-w", "-o", "name", "--request-timeout=0"]
    env = proxied.sandbox.env
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env) as watch:
        try:
            assert watch.stdout is not None
            time.sleep(1)
            for n in range(3):
                assert proxied.member("member1", "create", "configmap", f"watched-{n}").returncode == 0
            seen: set[str] = set()
            deadline = time.monotonic() + 20
            while len(seen) < 3 and time.monotonic() < deadline:
                line = watch.stdout.readline().strip()
                if line.startswith("configmap/watched-"):
                    seen.add(line)
            assert seen == {f"configmap/watched-{n}" for n in range(3)}
        finally:
            watch.kill()


def test_logs_exec_attach_and_port_forward(proxied: Proxied) -> None:
    config = proxied.config("member1")
    assert proxied.kubectl(config, "create", "deployment", "web", "--image=nginx", "--port=8080").returncode == 0
    pod = running_pod(proxied, config, "web")
    logs = proxied.sh(f"kubectl karmada logs -C member1 {pod}")
    assert logs.startswith("starting container nginx (image nginx)\n")
    follow = proxied.run("timeout", "12", "kubectl", "karmada", "logs", "-C", "member1", pod, "-f", "--tail=1")
    ticks = [line for line in follow.stdout.splitlines() if ": tick " in line]
    assert len(ticks) >= 2, follow.stdout + follow.stderr  # new lines arrive while following
    assert proxied.sh(f"kubectl karmada exec -C member1 {pod} -- echo hello") == "hello\n"
    failed = proxied.run("kubectl", "karmada", "exec", "-C", "member1", pod, "--", "false")
    assert failed.returncode == 1 and "command terminated with exit code 1" in failed.stderr
    shell = proxied.run("kubectl", "karmada", "exec", "-i", "-C", "member1", pod, "--", "sh", stdin="echo $HOSTNAME\n")
    assert shell.returncode == 0 and shell.stdout == f"{pod}\n", shell.stderr
    attach = proxied.run("timeout", "8", "kubectl", "karmada", "attach", "-C", "member1", pod)
    assert ": tick " in attach.stdout, attach.stdout + attach.stderr
    port = free_port()
    command = [kubectl(), f"--kubeconfig={config}", "port-forward", f"pod/{pod}", f"{port}:8080"]
    env = proxied.sandbox.env
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env) as forward:
        try:
            assert forward.stdout is not None
            assert "Forwarding from 127.0.0.1" in forward.stdout.readline()
            with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
                connection.sendall(b"through the tunnel")
                assert connection.recv(100) == b"through the tunnel"
        finally:
            forward.kill()


def test_rbac_on_the_control_plane_then_in_the_member(proxied: Proxied) -> None:
    """A service account of the control plane, by token: 403 without clusters/proxy; with it,
    the member's RBAC decides for the impersonated account; a role there opens it."""
    karmada = proxied.sandbox.dir / "karmada.config"
    assert proxied.kubectl(karmada, "create", "serviceaccount", "viewer").returncode == 0
    token = proxied.kubectl(karmada, "create", "token", "viewer").stdout.strip()
    config = yaml.safe_load(proxied.config("member1").read_text())
    config["users"][0]["user"] = {"token": token}
    path = proxied.home / "viewer.proxy.config"
    path.write_text(yaml.safe_dump(config))
    denied = proxied.kubectl(path, "get", "pods")
    assert denied.returncode != 0
    assert (
        'clusters.cluster.karmada.io "member1" is forbidden: User "system:serviceaccount:default:viewer" '
        'cannot get resource "clusters/proxy"'
    ) in denied.stderr
    grant = [
        ["create", "clusterrole", "proxy-member1", "--verb=get,create", "--resource=clusters/proxy"],
        ["create", "clusterrolebinding", "proxy-member1", "--clusterrole=proxy-member1"],
    ]
    grant[0].append("--resource-name=member1")
    grant[1].append("--serviceaccount=default:viewer")
    for args in grant:
        assert proxied.kubectl(karmada, *args).returncode == 0
    user = "system:serviceaccount:default:viewer"

    def member_says() -> str | None:
        said = proxied.kubectl(path, "get", "pods", "-n", "default").stderr
        return said if "forbidden" in said and "clusters/proxy" not in said else None  # past the proxy's cache

    said = wait_until(member_says, "the member's refusal")
    assert f'pods is forbidden: User "{user}" cannot list resource "pods"' in said
    assert proxied.member("member1", "create", "role", "pod-reader", "--verb=list", "--resource=pods").returncode == 0
    bound = proxied.member("member1", "create", "rolebinding", "pod-reader", "--role=pod-reader", f"--user={user}")
    assert bound.returncode == 0
    listed = proxied.kubectl(path, "get", "pods", "-n", "default", "-o", "name")
    assert listed.returncode == 0, listed.stderr
    other = proxied.kubectl(path, "get", "secrets", "-n", "default")
    assert f'secrets is forbidden: User "{user}"' in other.stderr  # still only what the member granted


def _agent_ssl(proxied: Proxied, cluster: str) -> ssl.SSLContext:
    config = yaml.safe_load((proxied.sandbox.dir / cluster / "karmada-agent.kubeconfig").read_text())
    user, server = config["users"][0]["user"], config["clusters"][0]["cluster"]
    directory = proxied.home / f"{cluster}-agent-cert"
    directory.mkdir(mode=0o700, exist_ok=True)
    (directory / "tls.crt").write_bytes(base64.b64decode(user["client-certificate-data"]))
    key = directory / "tls.key"
    key.write_bytes(base64.b64decode(user["client-key-data"]))
    os.chmod(key, 0o600)
    context = ssl.create_default_context(cadata=base64.b64decode(server["certificate-authority-data"]).decode())
    context.load_cert_chain(directory / "tls.crt", key)
    return context


async def test_a_tunnel_opens_only_with_that_clusters_agent_certificate(proxied: Proxied) -> None:
    ports = json.loads((proxied.sandbox.dir / "ports.json").read_text())
    base = f"https://127.0.0.1:{ports['karmada-cluster-proxy']}/tunnel"
    context = _agent_ssl(proxied, "member1")
    async with aiohttp.ClientSession() as session:
        for target, code in (("member2", 403), ("member3", 403)):
            async with session.get(f"{base}/{target}", ssl=context, headers={"Upgrade": "websocket"}) as answer:
                assert answer.status == code, await answer.text()
                assert "may not open the tunnel" in (await answer.json())["message"]
        plain = ssl.create_default_context()  # no client certificate at all
        plain.check_hostname = False
        plain.verify_mode = ssl.CERT_NONE
        async with session.get(f"{base}/member1", ssl=plain) as answer:
            assert answer.status == 401
    await asyncio.sleep(0.1)  # the closed TLS connections finish closing before the test's loop ends


def test_the_tunnel_comes_back_after_the_control_plane_is_killed(proxied: Proxied) -> None:
    config = proxied.config("member1")
    run = proxied.sandbox.dir / "run"
    before = json.loads((run / "karmada-controlplane.json").read_text())
    os.kill(before["pid"], signal.SIGKILL)

    def answered() -> bool:
        state = json.loads((run / "karmada-controlplane.json").read_text())
        got = proxied.kubectl(config, "get", "namespace", "default", "-o", "name", "--request-timeout=3s")
        return state["pid"] != before["pid"] and got.returncode == 0 and got.stdout.strip() == "namespace/default"

    wait_until(answered, "the proxy to answer through a new tunnel", timeout=60)


def test_karmada_get_reads_members_live_through_the_proxy(proxied: Proxied) -> None:
    """Without the members' own kubeconfigs (a copy of the control plane's kubeconfig elsewhere),
    ``kubectl karmada get --live`` reads each member through the proxy, as the user."""
    elsewhere = proxied.home / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    config = elsewhere / "karmada.config"
    config.write_text((proxied.sandbox.dir / "karmada.config").read_text())
    for cluster in ("member1", "member2"):
        manifest = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: live-{cluster}\n"
        assert proxied.member(cluster, "apply", "-f", "-", stdin=manifest).returncode == 0
    got = proxied.run("kubectl", "karmada", "get", "configmaps", "--all-clusters", "--live", f"--kubeconfig={config}")
    assert got.returncode == 0, got.stderr
    rows = {tuple(line.split()[:2]) for line in got.stdout.splitlines()[1:]}
    assert {("live-member1", "member1"), ("live-member2", "member2")} <= rows, got.stdout


def test_exec_in_a_push_member_goes_direct(proxied: Proxied) -> None:
    """A Push member's WebSocket is joined to the caller's in the proxy (no tunnel involved)."""
    config = proxied.config("member2")
    assert proxied.kubectl(config, "create", "deployment", "pushed-web", "--image=nginx").returncode == 0
    pod = running_pod(proxied, config, "pushed-web")
    assert proxied.sh(f"kubectl karmada exec -C member2 {pod} -- echo pushed") == "pushed\n"
    failed = proxied.run("kubectl", "karmada", "exec", "-C", "member2", pod, "--", "sh", "-c", "exit 3")
    assert failed.returncode == 3, failed.stderr
