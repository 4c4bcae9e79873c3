"""The test plays the kubelet: a pod's Secret volumes written where it mounts them
(mapped into a temporary directory), its container's command run as a process with
only paths and listen addresses changed. What installers deploy into a host cluster
is so run here, with no containers, from the objects as they were applied."""

from __future__ import annotations

import base64
import json
import random
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from localkube.process import READY_PREFIX
from tests.programs import BIN_DIR, Background, free_port
from tests.pullmode import wait_for
from tests.servers import Kubectl

Obj = dict[str, Any]
APISERVER_SERVICE = "karmada-apiserver.karmada-system.svc"  # what the components' kubeconfigs name


@dataclass
class Pod:
    """What the kubelet would run: the command with each mount mapped to a local directory,
    and ``flags`` replaced (``--flag`` -> new value)."""

    command: list[str]
    mounts: dict[str, Path]
    log: Path
    flags: dict[str, str] = field(default_factory=dict)

    def args(self) -> list[str]:
        return [str(BIN_DIR / self.command[0]), *(self._arg(arg) for arg in self.command[1:])]

    def _arg(self, arg: str) -> str:
        flag, _, value = arg.partition("=")
        if flag in self.flags:
            return f"{flag}={self.flags[flag]}"
        for mount_path, local in self.mounts.items():
            if value == mount_path or value.startswith(mount_path + "/"):
                return f"{flag}={local}{value[len(mount_path) :]}"
        return arg

    def start(self) -> Background:
        return Background(self.args(), self.log).start()

    def serve(self) -> tuple[Background, str]:
        """A localkube started, and its URL once it says it serves."""
        offset = len(self.log.read_text()) if self.log.exists() else 0
        program = self.start()

        def url() -> str | None:
            for line in self.log.read_text(errors="replace")[offset:].splitlines():
                if line.startswith(READY_PREFIX):
                    return line[len(READY_PREFIX) :].strip()
            assert program.running, self.log.read_text(errors="replace")
            return None

        return program, str(wait_for(url, timeout=30, what="localkube to serve"))

    def release(self) -> None:
        """Make the read-only mounts removable again."""
        for local in self.mounts.values():
            local.chmod(0o700)


def pod_of(
    template: Obj,
    secrets: Mapping[str, Obj],
    root: Path,
    *,
    claims: frozenset[str] = frozenset(),
    flags: Mapping[str, str] | None = None,
) -> Pod:
    """The one container of a pod template, its Secret volumes from ``secrets`` (by name),
    ``claims`` and emptyDirs as empty directories under ``root``."""
    pod = template["spec"]
    (container,) = pod["containers"]
    volumes = {v["name"]: v for v in pod.get("volumes") or []}
    mounts: dict[str, Path] = {}
    root.mkdir(parents=True, exist_ok=True)
    for mount in container.get("volumeMounts") or []:
        local = root / mount["name"]
        local.mkdir(mode=0o700)
        volume = volumes.get(mount["name"], {})
        if "secret" in volume:
            secret = secrets[volume["secret"]["secretName"]]
            items = volume["secret"].get("items") or [{"key": k, "path": k} for k in secret["data"]]
            for item in items:
                path = local / item["path"]
                path.write_bytes(base64.b64decode(secret["data"][item["key"]]))
                path.chmod(volume["secret"].get("defaultMode", 0o644))
            if mount.get("readOnly"):
                local.chmod(0o555)
        else:
            assert mount["name"] in claims or "emptyDir" in volume, mount
        mounts[mount["mountPath"]] = local
    return Pod(container["command"], mounts, root / f"{container['name']}.log", dict(flags or {}))


def free_node_port() -> int:
    """A free loopback port in the node port range (30000-32767), from a random start."""
    start = random.randrange(2768)
    for offset in range(2768):
        port = 30000 + (start + offset) % 2768
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AssertionError("no free port in the node port range")


class HostKubelet:
    """Runs what init (or the Helm chart) deployed into the host, from the objects as they are
    stored: karmada-apiserver on the advertised address and node port, the components with the
    Service name in their kubeconfigs pointed at that address."""

    def __init__(self, host: Kubectl, root: Path, node_port: int, webhook_port: int) -> None:
        self.host = host
        self.root = root
        self.node_port = node_port
        self.webhook_port = webhook_port
        self.programs: list[Background] = []
        self.pods: list[Pod] = []
        self.starts = 0

    def _get(self, kind: str, name: str) -> Obj | None:
        result = self.host("get", kind, name, "-n", "karmada-system", "-o", "json", check=False)
        return json.loads(result.stdout) if result.returncode == 0 else None

    def _secrets(self, template: Obj) -> dict[str, Obj] | None:
        secrets = {}
        for volume in template["spec"].get("volumes") or []:
            if "secret" in volume:
                name = volume["secret"]["secretName"]
                secret = self._get("secret", name)
                if secret is None:
                    return None
                secrets[name] = secret
        return secrets

    def _pod(self, kind: str, name: str, flags: dict[str, str]) -> Pod:
        def ready() -> tuple[Obj, dict[str, Obj]] | None:
            obj = self._get(kind, name)
            secrets = self._secrets(obj["spec"]["template"]) if obj else None
            return (obj, secrets) if obj and secrets is not None else None

        obj, secrets = wait_for(ready, timeout=60, what=f"{kind} {name} and its Secrets")
        claims = frozenset(c["metadata"]["name"] for c in obj["spec"].get("volumeClaimTemplates") or [])
        self.starts += 1
        pod = pod_of(obj["spec"]["template"], secrets, self.root / f"{name}-{self.starts}", claims=claims, flags=flags)
        self.pods.append(pod)
        return pod

    def _resolve(self, pod: Pod) -> None:
        """The cluster's DNS and Service routing: the component's kubeconfig names the API
        server's Service; here that is the advertised address (the name still checked)."""
        (config_dir,) = [local for path, local in pod.mounts.items() if path == "/etc/karmada/config"]
        path = config_dir / "karmada.config"
        config = yaml.safe_load(path.read_text())
        cluster = config["clusters"][0]["cluster"]
        assert cluster["server"] == f"https://{APISERVER_SERVICE}:5443"
        cluster["server"] = f"https://127.0.0.1:{self.node_port}"
        cluster["tls-server-name"] = APISERVER_SERVICE
        config_dir.chmod(0o700)
        path.chmod(0o600)
        path.write_text(yaml.safe_dump(config))
        config_dir.chmod(0o555)

    def run_apiserver(self) -> Background:
        pod = self._pod("statefulset", "karmada-apiserver", {"--host": "127.0.0.1", "--port": str(self.node_port)})
        # the volume outlives the pod: every start uses the first one's
        data = [local for path, local in self.pods[0].mounts.items() if path == "/var/lib/karmada-apiserver"]
        pod.mounts["/var/lib/karmada-apiserver"] = data[0]
        program, url = pod.serve()
        assert url == f"https://127.0.0.1:{self.node_port}"
        self.programs.append(program)
        return program

    def run_component(self, name: str, *extra: str) -> Background:
        flags = {"--health-probe-bind-address": f"127.0.0.1:{free_port()}", "--metrics-bind-address": "0"}
        if name == "karmada-webhook":
            flags |= {"--bind-address": "127.0.0.1", "--secure-port": str(self.webhook_port)}
        pod = self._pod("deployment", name, flags)
        self._resolve(pod)
        pod.command = [*pod.command, *extra]
        program = pod.start()
        self.programs.append(program)
        return program

    def stop(self) -> None:
        for program in reversed(self.programs):
            program.stop()
        for pod in self.pods:
            pod.release()
