"""``kubectl karmada version``: client and control-plane versions; exit 1 when the control plane is away."""

from __future__ import annotations

import json
from pathlib import Path

from karmada.version import __version__
from tests.servers import Plugin


def test_client_and_control_plane(plugin: Plugin) -> None:
    out = plugin("version").stdout.splitlines()
    assert out[0] == f"Client Version: v{__version__}"
    assert out[1].startswith("Control Plane API Server Version: v1.32")
    data = json.loads(plugin("version", "-o", "json").stdout)
    assert data["clientVersion"]["gitVersion"] == f"v{__version__}" and data["controlPlaneVersion"]["apiServer"]


def test_client_only_and_unreachable(tmp_path: Path) -> None:
    config = tmp_path / "gone.config"
    config.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: gone\nclusters: [{name: gone, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "contexts: [{name: gone, context: {cluster: gone, user: u}}]\nusers: [{name: u, user: {token: x}}]\n"
    )
    bare = Plugin(config)
    assert bare("version", "--client").stdout == f"Client Version: v{__version__}\n"
    away = bare("version", check=False)
    assert away.returncode == 1 and away.stderr.startswith("error: the control plane did not answer")
    assert away.stdout == f"Client Version: v{__version__}\n"
