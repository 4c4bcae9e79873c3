"""Many independent API servers in one process, for simulating a fleet of member
clusters (``localkube serve --fleet FILE`` or ``--clusters N``).

Each cluster is a whole :class:`LocalKube`: its own port, store, CA, serving
certificate, service-account key, watches, controllers, simulation, data
directory and admin kubeconfig. They share only the event loop (and so the
CPU): a cluster never sees another's objects or accepts its credentials.

Start: every cluster's socket is bound first, so a port that is taken fails
the whole start, naming its cluster, before anything serves; then the
clusters start one after another on the one loop, each announced as it
serves. Stop: all at once (each waits briefly for its open connections), and
one sweep for the TLS connections still in their handshake, not one per
cluster.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localkube.meta import DNS1123_LABEL, DNS1123_SUBDOMAIN
from localkube.server import LocalKube, ServerConfig, abort_accepted_connections

ENTRY_FIELDS = ("name", "port", "dataDir", "kubeconfigOut", "nodeNamePrefix")


class FleetError(ValueError):
    """A fleet that cannot start: a bad fleet file, or a cluster that cannot serve (named)."""


@dataclass(frozen=True)
class ClusterSpec:
    """One cluster of a fleet: where it listens and keeps its files (``None``: nowhere)."""

    name: str
    port: int
    data_dir: Path | None = None
    kubeconfig_out: Path | None = None
    node_name_prefix: str | None = None


def _check_name(name: str) -> str | None:
    if len(name) > 63 or not DNS1123_LABEL.fullmatch(name):
        return "must be a lowercase RFC 1123 label (a-z, 0-9, '-', at most 63 characters)"
    return None


def parse_fleet(document: Any, base: Path, source: str = "fleet file") -> list[ClusterSpec]:
    """The clusters of a fleet document; relative paths are relative to ``base`` (the
    file's directory). Every problem names the entry and its field."""
    if not isinstance(document, dict) or set(document) != {"clusters"}:
        raise FleetError(f'{source}: must be an object with exactly one field, "clusters"')
    entries = document["clusters"]
    if not isinstance(entries, list) or not entries:
        raise FleetError(f"{source}: clusters: must be a non-empty list")
    specs: list[ClusterSpec] = []
    seen: dict[tuple[str, Any], int] = {}
    for index, entry in enumerate(entries):
        where = f"{source}: clusters[{index}]"
        if not isinstance(entry, dict):
            raise FleetError(f"{where}: must be an object")
        name = entry.get("name")
        if isinstance(name, str):
            where = f'{where} ("{name}")'
        unknown = sorted(set(entry) - set(ENTRY_FIELDS))
        if unknown:
            raise FleetError(f"{where}: {unknown[0]}: unknown field (known: {', '.join(ENTRY_FIELDS)})")
        if not isinstance(name, str):
            raise FleetError(f"{where}: name: required, a string")
        problem = _check_name(name)
        if problem:
            raise FleetError(f"{where}: name: {problem}")
        port = entry.get("port")
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise FleetError(f"{where}: port: required, an integer from 0 (any free port) to 65535")
        paths: dict[str, Path | None] = {}
        for field in ("dataDir", "kubeconfigOut"):
            value = entry.get(field)
            if value is None:
                paths[field] = None
            elif not isinstance(value, str) or not value:
                raise FleetError(f"{where}: {field}: must be a non-empty path")
            else:
                paths[field] = base / value  # an absolute value stays as it is
        prefix = entry.get("nodeNamePrefix")
        if prefix is not None and (not isinstance(prefix, str) or not DNS1123_SUBDOMAIN.fullmatch(prefix)):
            raise FleetError(f"{where}: nodeNamePrefix: must be a lowercase RFC 1123 subdomain")
        for field, value in (("name", name), ("port", port or None), *paths.items()):
            if value is None:
                continue
            earlier = seen.setdefault((field, value), index)
            if earlier != index:
                raise FleetError(f"{where}: {field}: {value} is already clusters[{earlier}]'s")
        specs.append(ClusterSpec(name, port, paths["dataDir"], paths["kubeconfigOut"], prefix))
    return specs


def load_fleet(path: Path) -> list[ClusterSpec]:
    """The clusters of a fleet file (JSON)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise FleetError(f"{path}: {exc.strerror or exc}") from exc
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise FleetError(f"{path}: not JSON: {exc}") from exc
    return parse_fleet(document, path.resolve().parent, str(path))


def numbered(
    count: int, prefix: str, base_port: int, data_dir: Path | None, kubeconfig_dir: Path | None
) -> list[ClusterSpec]:
    """``--clusters N``: PREFIX1..N on ports BASE..BASE+N-1 (all any free port when BASE is 0),
    data in ``data_dir/NAME``, kubeconfigs ``kubeconfig_dir/NAME.kubeconfig``."""
    if count < 1:
        raise FleetError("--clusters: must be at least 1")
    problem = _check_name(f"{prefix}{count}")
    if problem:
        raise FleetError(f"--cluster-name-prefix: {prefix}{count} {problem}")
    if base_port and base_port + count - 1 > 65535:
        raise FleetError(f"--port: {base_port} + {count} clusters passes port 65535")
    specs = []
    for number in range(1, count + 1):
        name = f"{prefix}{number}"
        specs.append(
            ClusterSpec(
                name,
                base_port + number - 1 if base_port else 0,
                data_dir / name if data_dir is not None else None,
                kubeconfig_dir / f"{name}.kubeconfig" if kubeconfig_dir is not None else None,
            )
        )
    return specs


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``, as aiohttp's own site would make it."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


class Fleet:
    """The clusters of one process; ``configure`` makes each one's :class:`ServerConfig`."""

    def __init__(self, specs: list[ClusterSpec], configure: Callable[[ClusterSpec], ServerConfig]) -> None:
        self.specs = specs
        self.configure = configure
        self.servers: dict[str, LocalKube] = {}

    async def start(self, on_serving: Callable[[ClusterSpec, LocalKube], None] = lambda _s, _k: None) -> None:
        """Bind every port, then start each cluster; on any failure, stop those started and
        raise :class:`FleetError` naming the cluster."""
        sockets: dict[str, socket.socket] = {}
        try:
            for spec in self.specs:
                config = self.configure(spec)
                try:
                    sockets[spec.name] = _bind(config.host, spec.port)
                except OSError as exc:
                    raise FleetError(
                        f"cluster {spec.name}: cannot listen on {config.host}:{spec.port}: {exc.strerror or exc}"
                    ) from exc
            for spec in self.specs:
                try:
                    server = LocalKube(self.configure(spec))
                    await server.start(sock=sockets.pop(spec.name))
                    self.servers[spec.name] = server
                    if spec.kubeconfig_out is not None:
                        server.write_kubeconfig(spec.kubeconfig_out)
                except (OSError, ValueError) as exc:
                    raise FleetError(f"cluster {spec.name}: {exc}") from exc
                on_serving(spec, server)
        except BaseException:
            for sock in sockets.values():
                sock.close()
            await self.stop()
            raise

    async def stop(self) -> None:
        """Stop every cluster (concurrently: each waits up to half a second for its connections)."""
        servers = list(self.servers.values())
        self.servers.clear()
        results = await asyncio.gather(*(s.stop(abort_connections=False) for s in servers), return_exceptions=True)
        with contextlib.suppress(RuntimeError):
            abort_accepted_connections({s.port for s in servers})
        for result in results:
            if isinstance(result, BaseException) and not isinstance(result, Exception):
                raise result
