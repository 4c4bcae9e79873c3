"""Running the examples as a user would: ``kubectl karmada local up`` in a
home directory of the test's own, the README's shell blocks as written, and
the real ``kubectl`` against the kubeconfigs the sandbox writes.

Each example README (``examples/<folder>/README.md``) has ``## Setup``,
``## Run``, ``## Scale`` and ``## Clean up`` sections (Setup and Scale
optional), each with one ``sh`` code block; :func:`readme_blocks` finds them
and :meth:`LocalSandbox.sh` runs their lines with ``HOME`` pointing at the
test's directory, so ``~/.karmada-local`` means the test's sandbox.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tests.programs import kubectl, program_env
from tests.seeds import REPO_ROOT

EXAMPLES_DIR = REPO_ROOT / "examples"
DEFAULT_DIR = ".karmada-local"

_SECTION = re.compile(r"^## (?P<heading>.+?)\s*\n+```sh\n(?P<body>.*?)^```", re.MULTILINE | re.DOTALL)


def example_folders() -> list[str]:
    """Every example folder, sorted."""
    return sorted(p.name for p in EXAMPLES_DIR.iterdir() if (p / "README.md").is_file())


def readme_blocks(folder: str) -> dict[str, list[str]]:
    """The command lines of each ``## Heading`` + ``sh`` block of an example's README."""
    text = (EXAMPLES_DIR / folder / "README.md").read_text(encoding="utf-8")
    blocks: dict[str, list[str]] = {}
    for match in _SECTION.finditer(text):
        lines = [line.split("  #", 1)[0].strip() for line in match.group("body").splitlines()]
        blocks[match.group("heading")] = [line for line in lines if line and not line.startswith("#")]
    return blocks


def _run(
    args: list[str], env: dict[str, str], timeout: float, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=timeout, check=False, cwd=cwd)


class LocalSandbox:
    """A sandbox in ``<home>/<directory>``, driven through kubectl."""

    def __init__(self, home: Path, directory: str = DEFAULT_DIR) -> None:
        self.home = home
        self.dir = home / directory
        self.env = {**program_env(), "HOME": str(home)}
        self.env.pop("KUBECONFIG", None)

    def sh(self, line: str, timeout: float = 120) -> str:
        """One command line of a README, from the repository's root, as a user's shell runs it."""
        result = _run(["bash", "-c", line], self.env, timeout, cwd=REPO_ROOT)
        if result.returncode != 0:
            raise AssertionError(f"`{line}` failed ({result.returncode}):\n{result.stdout}{result.stderr}")
        return str(result.stdout)

    def run_block(self, folder: str, heading: str) -> None:
        """Every line of one README section (none when the README has no such section)."""
        for line in readme_blocks(folder).get(heading, []):
            self.sh(line)

    def up(self, *flags: str) -> None:
        self.sh(" ".join(["kubectl karmada local up --dir", str(self.dir), *flags]), timeout=180)

    def down(self) -> None:
        self.sh(f"kubectl karmada local down --dir {self.dir}")

    def _kubectl(self, kubeconfig: str, *args: str) -> subprocess.CompletedProcess[str]:
        command = [kubectl(), f"--kubeconfig={self.dir / kubeconfig}", f"--cache-dir={self.home / 'cache'}", *args]
        return _run(command, self.env, 30)

    def karmada(self, *args: str) -> str:
        """kubectl against the Karmada API server; an error fails the test with kubectl's message."""
        result = self._kubectl("karmada.config", *args)
        if result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({result.returncode}):\n{result.stderr}")
        return str(result.stdout)

    def present(self, cluster: str, refs: list[str], namespace: str = "default") -> list[str]:
        """Which of ``refs`` (``kind/name``) exist in a member: one kubectl call for all of them."""
        args = ["get", *refs, "-n", namespace, "-o", "name", "--ignore-not-found"]
        result = self._kubectl("members.config", "--context", cluster, *args)
        if result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} in {cluster} failed:\n{result.stderr}")
        return result.stdout.split()

    def get(self, cluster: str | None, resource: str, name: str, namespace: str = "default") -> dict[str, Any] | None:
        """An object in a member (``cluster``) or on the control plane (None); None when it does not exist."""
        args = ["get", resource, name, "-n", namespace, "-o", "json", "--ignore-not-found"]
        if cluster is None:
            result = self._kubectl("karmada.config", *args)
        else:
            result = self._kubectl("members.config", "--context", cluster, *args)
        if result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} in {cluster or 'karmada'} failed:\n{result.stderr}")
        found: dict[str, Any] | None = json.loads(result.stdout) if result.stdout.strip() else None
        return found


def wait_for_state(observe: Callable[[], Any], expected: Any, what: str, timeout: float = 30) -> Any:
    """Poll ``observe`` until it returns ``expected`` (then once more a moment later, so a
    state that only passes through does not count); on timeout say what was awaited and
    what was seen last."""
    deadline = time.monotonic() + timeout
    seen: Any = None
    while True:
        seen = observe()
        if seen == expected:
            time.sleep(1)
            seen = observe()
            if seen == expected:
                return seen
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}: want {expected}, last seen {seen}")
        time.sleep(0.5)


def wait_until(check: Callable[[], Any], what: str, timeout: float = 30, last: Callable[[], Any] | None = None) -> Any:
    """Poll ``check`` until it is truthy; on timeout say what was awaited (and ``last()``, when given)."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            seen = f"; last seen {last()}" if last else ""
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}{seen}")
        time.sleep(0.5)


def sandbox_at(home: Path, directory: str = DEFAULT_DIR, *flags: str) -> Iterator[LocalSandbox]:
    """Bring a sandbox up for a fixture, and down after it."""
    sandbox = LocalSandbox(home, directory)
    sandbox.up(*flags)
    try:
        yield sandbox
    finally:
        sandbox.down()
