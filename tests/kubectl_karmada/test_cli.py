"""The plugin and the programs, run the way users run them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from karmada.version import __version__
from tests.programs import BIN_DIR, kubectl, run


def test_kubectl_finds_the_plugin() -> None:
    result = run([kubectl(), "plugin", "list"])
    assert str(BIN_DIR / "kubectl-karmada") in result.stdout


def test_help_through_kubectl() -> None:
    result = run([kubectl(), "karmada", "--help"])
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: kubectl karmada")
    assert "validate" in result.stdout


def test_version_through_kubectl() -> None:
    # the control plane's version needs a server (test_version.py); --client needs none
    result = run([kubectl(), "karmada", "version", "--client"])
    assert result.returncode == 0
    assert result.stdout.strip() == f"Client Version: v{__version__}"


# what a command loads when it runs; --help and version --client need none of it (a check of
# modules, not of time: benchmarks/README.md has the timings)
HEAVY = (
    *("asyncio", "ssl", "yaml", "aiohttp", "pydantic", "cryptography", "kubernetes_asyncio", "lupa"),
    *("prometheus_client", "karmada.api", "karmada.kube", "kubectl_karmada.multicluster"),
)


@pytest.mark.parametrize("argv", [["--help"], ["get", "--help"], ["version", "--client"]])
def test_help_and_client_version_load_no_library(argv: list[str]) -> None:
    probe = (
        "import contextlib, io, sys\n"
        "from kubectl_karmada.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        f"    main({argv!r})\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    result = run([sys.executable, "-c", probe])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize("program", ["kubectl-karmada", "karmada-controlplane", "karmada-agent", "localkube"])
def test_every_program_has_help_and_version(program: str) -> None:
    helped = run([str(BIN_DIR / program), "--help"])
    assert helped.returncode == 0 and helped.stdout.startswith("usage:")
    versioned = run([str(BIN_DIR / program), "--version"])
    assert versioned.returncode == 0 and versioned.stdout.strip().endswith(__version__)


def test_validate_accepts_good_yaml(tmp_path: Path) -> None:
    good = tmp_path / "policy.yaml"
    good.write_text(
        """\
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: nginx-propagation
spec:
  resourceSelectors:
    - apiVersion: apps/v1
      kind: Deployment
      name: nginx
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
"""
    )
    result = run([kubectl(), "karmada", "validate", "-f", str(good)])
    assert result.returncode == 0, result.stderr
    assert "PropagationPolicy/nginx-propagation valid" in result.stdout
    assert "Deployment/nginx skipped (not a Karmada kind)" in result.stdout


def test_validate_names_bad_fields_and_fails() -> None:
    bad = """\
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: p}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement:
    replicaScheduling: {replicaSchedulingType: Split}
"""
    result = run([kubectl(), "karmada", "validate", "-f", "-"], stdin=bad)
    assert result.returncode == 1
    assert (
        "error: -: PropagationPolicy/p: spec.placement.replicaScheduling.replicaSchedulingType: "
        'must be one of Duplicated, Divided (got "Split")'
    ) in result.stderr


def test_validate_reports_missing_files() -> None:
    result = run([kubectl(), "karmada", "validate", "-f", "/nonexistent/policy.yaml"])
    assert result.returncode == 1
    assert "/nonexistent/policy.yaml: No such file or directory" in result.stderr
