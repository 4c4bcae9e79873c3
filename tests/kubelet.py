"""The test plays the kubelet: a pod's Secret volumes written where it mounts them
(mapped into a temporary directory), its container's command run as a process with
only paths and listen addresses changed. What installers deploy into a host cluster
is so run here, with no containers, from the objects as they were applied."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localkube.process import READY_PREFIX
from tests.programs import BIN_DIR, Background
from tests.pullmode import wait_for

Obj = dict[str, Any]


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
