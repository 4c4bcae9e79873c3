"""Pods the simulation runs, for the tests of the Pod connect subresources (log,
exec, attach, portforward), and the real kubectl left running in the background."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import yaml

from tests.programs import kubectl as kubectl_binary
from tests.programs import program_env
from tests.servers import Kubectl


def pod(name: str, containers: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": containers, **spec}}


def run_pod(kubectl: Kubectl, manifest: dict[str, Any]) -> dict[str, Any]:
    """Create the Pod and wait until the simulated kubelet runs it."""
    kubectl("apply", "-f", "-", stdin=yaml.safe_dump(manifest))
    name = manifest["metadata"]["name"]
    kubectl("wait", "--for=jsonpath={.status.phase}=Running", f"pod/{name}", "--timeout=20s", timeout=30)
    return dict(json.loads(kubectl("get", "pod", name, "-o", "json").stdout))


def hold_waiting(kubectl: Kubectl, name: str) -> None:
    """Report the Pod's containers as still being created (the kubelet has not started them);
    the phase stays Running, or the simulated kubelet would start the Pod again."""
    current = json.loads(kubectl("get", "pod", name, "-o", "json").stdout)
    waiting = {"waiting": {"reason": "ContainerCreating"}}
    for status in current["status"]["containerStatuses"]:
        status.update({"state": waiting, "ready": False, "started": False})
    kubectl("replace", "--subresource=status", "-f", "-", stdin=json.dumps(current))


@contextmanager
def background(kubectl: Kubectl, *args: str, stdin: bool = False) -> Iterator[subprocess.Popen[str]]:
    """The real kubectl running until the block ends (then terminated)."""
    command = [kubectl_binary(), f"--kubeconfig={kubectl.kubeconfig}", f"--cache-dir={kubectl.cache_dir}", *args]
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=program_env(),
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
        try:
            process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


def read_lines(process: subprocess.Popen[str], count: int, timeout: float = 15) -> list[str]:
    """The next ``count`` lines the process writes to stdout (fails after ``timeout``)."""
    import queue
    import threading

    lines: queue.Queue[str] = queue.Queue()
    assert process.stdout is not None
    stdout = process.stdout

    def reader() -> None:
        for _ in range(count):
            line = stdout.readline()
            if not line:
                break
            lines.put(line.rstrip("\n"))

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    thread.join(timeout)
    got = []
    while not lines.empty():
        got.append(lines.get())
    assert len(got) == count, f"got {got} of {count} lines; stderr so far unknown"
    return got
