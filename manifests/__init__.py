"""Data shipped with the programs: CRDs (generated from ``karmada.api``), and,
in later releases, RBAC and Deployments for real host clusters.

This package holds files only; :func:`crds_dir` locates them in an installed
copy as well as in a checkout.
"""

from pathlib import Path

__all__ = ["crd_files", "crds_dir"]


def crds_dir() -> Path:
    """The directory holding one CustomResourceDefinition YAML file per kind."""
    return Path(__file__).parent / "crds"


def crd_files() -> list[Path]:
    """Every CRD file, in a stable order."""
    return sorted(crds_dir().glob("*.yaml"))
