"""A kubeconfig that reaches one member through the cluster proxy: the user's own
credentials for the Karmada control plane (certificate, token or exec plugin, as
their kubeconfig has them), and a server ending in ``.../clusters/NAME/proxy``.

kubectl then does in the member whatever ``clusters/proxy`` on the control plane
and the member's own RBAC allow.
"""

from __future__ import annotations

import base64
import copy
import os
from pathlib import Path
from typing import Any

import yaml

from karmada.clusterproxy.endpoint import Endpoint
from karmada.clusterproxy.server import PROXY_PREFIX

Obj = dict[str, Any]
PATH_KEYS = ("client-certificate", "client-key", "tokenFile")


class KubeconfigError(Exception):
    """The user's kubeconfig has no usable context."""


def proxy_path(cluster: str) -> str:
    return f"{PROXY_PREFIX}{cluster}/proxy"


def load_kubeconfigs(path: str | None) -> tuple[Obj, Path]:
    """The kubeconfig kubectl would read (``path``, else the first of ``$KUBECONFIG``, else
    ``~/.kube/config``) and its directory, for relative file names."""
    if not path:
        env = os.environ.get("KUBECONFIG", "")
        path = env.split(os.pathsep)[0] if env else str(Path.home() / ".kube" / "config")
    file = Path(path).expanduser()
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise KubeconfigError(f"cannot read {file}: {exc.strerror}") from None
    except yaml.YAMLError:
        raise KubeconfigError(f"{file} is not a kubeconfig (not YAML)") from None
    if not isinstance(data, dict):
        raise KubeconfigError(f"{file} is not a kubeconfig")
    return data, file.parent


def proxy_kubeconfig(kubeconfig: Obj, base: Path, context: str | None, cluster: str, endpoint: Endpoint) -> Obj:
    """The kubeconfig for ``cluster`` through the proxy, with the user of ``context``."""
    name = context or kubeconfig.get("current-context")
    entry = next((c for c in kubeconfig.get("contexts") or [] if c.get("name") == name), None)
    if entry is None:
        raise KubeconfigError(f'context "{name}" not found in the kubeconfig')
    user_name = (entry.get("context") or {}).get("user")
    user_entry = next((u for u in kubeconfig.get("users") or [] if u.get("name") == user_name), None)
    user = copy.deepcopy((user_entry or {}).get("user") or {})
    for key in PATH_KEYS:  # relative to the kubeconfig they came from
        if isinstance(user.get(key), str) and not Path(user[key]).is_absolute():
            user[key] = str((base / user[key]).resolve())
    target: Obj = {"server": endpoint.server.rstrip("/") + proxy_path(cluster)}
    if endpoint.ca_pem:
        target["certificate-authority-data"] = base64.b64encode(endpoint.ca_pem).decode()
    names = f"karmada-proxy-{cluster}"
    namespace = (entry.get("context") or {}).get("namespace")
    context_body: Obj = {"cluster": names, "user": names}
    if namespace:
        context_body["namespace"] = namespace
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": names, "cluster": target}],
        "users": [{"name": names, "user": user}],
        "contexts": [{"name": names, "context": context_body}],
        "current-context": names,
    }
