"""``plugins/karmada.yaml`` passes krew's manifest rules (those of krew's own validation:
apiVersion and kind, a safe name equal to the file's, a one-line shortDescription, a
``v``-prefixed semantic version, and per platform uri, a sha256 of 64 hex digits, bin,
non-empty files with from/to, an os/arch selector), and its sha256 is the archive's."""

from __future__ import annotations

import copy
import hashlib
import io
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.seeds import REPO_ROOT

PLUGINS = REPO_ROOT / "plugins"
MANIFEST = PLUGINS / "karmada.yaml"

_SAFE_NAME = re.compile(r"^[\w-]+$")
_WINDOWS_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)), *(f"LPT{i}" for i in range(1, 10))}
_SEMVER = re.compile(
    r"^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$"
)
_SHA256 = re.compile(r"^[a-f0-9]{64}$")


def krew_problems(manifest: Any, name: str) -> list[str]:
    """What krew's validation would reject in a manifest stored as ``<name>.yaml``."""
    if not isinstance(manifest, dict):
        return ["the manifest is not a YAML mapping"]
    found: list[str] = []
    if manifest.get("apiVersion") != "krew.googlecontainertools.github.com/v1alpha2":
        found.append(f"apiVersion={manifest.get('apiVersion')!r} is not supported")
    if manifest.get("kind") != "Plugin":
        found.append(f"kind={manifest.get('kind')!r}, only 'Plugin' is supported")
    if not _SAFE_NAME.match(name) or name.upper() in _WINDOWS_RESERVED:
        found.append(f"the plugin name {name!r} is not allowed")
    if (manifest.get("metadata") or {}).get("name") != name:
        found.append(f"plugin should be named {name!r}")
    spec = manifest.get("spec") or {}
    short = spec.get("shortDescription") or ""
    if not short:
        found.append("should have a short description")
    elif "\n" in short or "\r" in short:
        found.append("should not have line breaks in short description")
    platforms = spec.get("platforms") or []
    if not platforms:
        found.append("should have a platform specified")
    version = spec.get("version") or ""
    if not version:
        found.append("should have a version specified")
    elif not _SEMVER.match(version):
        found.append(f"version {version!r} is not a v-prefixed semantic version")
    for index, platform in enumerate(platforms):
        found.extend(f"platforms[{index}]: {p}" for p in _platform_problems(platform))
    return found


def _platform_problems(platform: dict[str, Any]) -> list[str]:
    found: list[str] = []
    if not platform.get("uri"):
        found.append("`uri` has to be set")
    sha = platform.get("sha256") or ""
    if not sha:
        found.append("`sha256` sum has to be set")
    elif not _SHA256.match(sha):
        found.append(f"`sha256` value {sha} is not valid")
    if not platform.get("bin"):
        found.append("`bin` has to be set")
    files = platform.get("files")
    if files is not None:
        if not files:
            found.append("`files` has to be unspecified or non-empty")
        found.extend("`files`: `from` and `to` have to be set" for f in files if not f.get("from") or not f.get("to"))
    selector = platform.get("selector")
    if not selector:
        found.append("a selector is required")
        return found
    labels, expressions = selector.get("matchLabels"), selector.get("matchExpressions")
    if not labels and not expressions:
        found.append("empty selector is not supported")
    keys = list(labels or {}) + [e.get("key") for e in expressions or []]
    found.extend(f"selector key {k!r} not supported" for k in keys if k not in ("os", "arch"))
    return found


def load() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    return data


def test_manifest_passes_krews_rules() -> None:
    assert krew_problems(load(), MANIFEST.stem) == []


def test_manifest_says_what_the_plugin_needs() -> None:
    spec = load()["spec"]
    assert "pip install karmada-py" in spec["caveats"]
    assert spec["platforms"][0]["bin"] == "kubectl-karmada"
    from karmada.version import __version__

    assert spec["version"] == f"v{__version__}"


def _broken(path: str, value: Any) -> dict[str, Any]:
    manifest = copy.deepcopy(load())
    node: Any = manifest
    keys = path.split(".")
    for key in keys[:-1]:
        node = node[int(key)] if key.isdigit() else node[key]
    if value is None:
        del node[keys[-1]]
    else:
        node[keys[-1]] = value
    return manifest


@pytest.mark.parametrize(
    ("path", "value", "problem"),
    [
        ("apiVersion", "krew.googlecontainertools.github.com/v1alpha1", "apiVersion="),
        ("kind", "Plugins", "kind="),
        ("metadata.name", "other", "plugin should be named 'karmada'"),
        ("spec.shortDescription", None, "should have a short description"),
        ("spec.shortDescription", "two\nlines", "should not have line breaks"),
        ("spec.version", "0.1.0", "not a v-prefixed semantic version"),
        ("spec.version", None, "should have a version specified"),
        ("spec.platforms", [], "should have a platform specified"),
        ("spec.platforms.0.uri", None, "`uri` has to be set"),
        ("spec.platforms.0.sha256", "ABC", "`sha256` value ABC is not valid"),
        ("spec.platforms.0.bin", None, "`bin` has to be set"),
        ("spec.platforms.0.files", [], "`files` has to be unspecified or non-empty"),
        ("spec.platforms.0.files", [{"from": "x"}], "`from` and `to` have to be set"),
        ("spec.platforms.0.selector", {"matchLabels": {"distro": "x"}}, "selector key 'distro' not supported"),
        ("spec.platforms.0.selector", {}, "a selector is required"),
    ],
)
def test_the_rules_catch_each_mistake(path: str, value: Any, problem: str) -> None:
    problems = krew_problems(_broken(path, value), "karmada")
    assert any(problem in p for p in problems), problems


@pytest.mark.parametrize("name", ["kubectl/karmada", "con", "a b"])
def test_unsafe_names(name: str) -> None:
    assert any("is not allowed" in p for p in krew_problems(load(), name))


def _archive() -> bytes:
    result = subprocess.run(
        [sys.executable, str(PLUGINS / "krew.py")], capture_output=True, text=True, check=True, cwd=REPO_ROOT
    )
    path = Path(result.stdout.splitlines()[0])
    return path.read_bytes()


def test_sha256_is_the_archives_and_the_build_is_reproducible() -> None:
    first, second = _archive(), _archive()
    assert first == second
    assert load()["spec"]["platforms"][0]["sha256"] == hashlib.sha256(first).hexdigest()
    check = subprocess.run([sys.executable, str(PLUGINS / "krew.py"), "--check"], check=False)
    assert check.returncode == 0


def test_archive_holds_what_files_name_and_the_launcher_runs_the_plugin(tmp_path: Path) -> None:
    with tarfile.open(fileobj=io.BytesIO(_archive())) as tar:
        assert sorted(tar.getnames()) == ["LICENSE", "kubectl-karmada"]
        tar.extractall(tmp_path, filter="data")
    platform = load()["spec"]["platforms"][0]
    assert {f["from"] for f in platform["files"]} == {"LICENSE", "kubectl-karmada"}
    launcher = tmp_path / platform["bin"]
    assert os.access(launcher, os.X_OK)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = subprocess.run([str(launcher), "--help"], capture_output=True, text=True, env=env, check=False)
    assert result.returncode == 0 and "kubectl karmada" in result.stdout
    bare = subprocess.run(
        [str(launcher), "--help"], capture_output=True, text=True, env={"PATH": str(tmp_path)}, check=False
    )
    assert bare.returncode != 0
