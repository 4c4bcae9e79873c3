"""Data shipped with the programs: CRDs (generated from ``karmada.api``), the
control plane's namespaces and bootstrap RBAC (``kubectl karmada init``), and
its Deployment and RBAC for a real host cluster (``init --apiserver external --deploy``),
and what ``init`` deploys into a host beside a dedicated API server (``host/``).

This package holds files only; the functions locate them in an installed copy
as well as in a checkout, and read their YAML documents.
"""

from pathlib import Path
from typing import Any

import yaml

__all__ = ["controlplane_files", "crd_files", "crds_dir", "deploy_files", "host_dir", "host_files", "load_documents"]

_HERE = Path(__file__).parent


def crds_dir() -> Path:
    """The directory holding one CustomResourceDefinition YAML file per kind."""
    return _HERE / "crds"


def crd_files() -> list[Path]:
    """Every CRD file, in a stable order."""
    return sorted(crds_dir().glob("*.yaml"))


def controlplane_files() -> list[Path]:
    """Namespaces and bootstrap RBAC every control plane needs, in apply order."""
    return sorted((_HERE / "controlplane").glob("*.yaml"))


def deploy_files() -> list[Path]:
    """The control plane's own RBAC and Deployment for a host cluster, in apply order."""
    return sorted((_HERE / "deploy").glob("*.yaml"))


def host_dir() -> Path:
    """What ``init`` deploys into a host cluster for each dedicated API server layout."""
    return _HERE / "host"


def host_files() -> list[Path]:
    """One file per layout: localkube, kube, kube-ha."""
    return sorted(host_dir().glob("*.yaml"))


def load_documents(path: Path) -> list[dict[str, Any]]:
    """The non-empty YAML documents of one file."""
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]
