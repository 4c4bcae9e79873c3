"""``/metrics`` of the sandbox's programs while a workload propagates: the
control plane's and an agent's metrics are there, named as Karmada names them,
and they move."""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.examples.sandbox import LocalSandbox, sandbox_at, wait_until

pytestmark = pytest.mark.slow

_SAMPLE = re.compile(r"^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?P<labels>\{[^}]*\})? (?P<value>\S+)$", re.MULTILINE)


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSandbox]:
    yield from sandbox_at(tmp_path_factory.mktemp("home"), ".karmada-local", "--members", "2")


def metrics_port(sandbox_dir: Path, program: str) -> int:
    port: int = json.loads((sandbox_dir / "ports.json").read_text())[f"{program}-metrics"]
    return port


def scrape(port: int) -> str:
    """``curl http://127.0.0.1:<port>/metrics``."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        return str(response.read().decode())


def total(text: str, metric: str, /, **labels: str) -> float:
    """The sum of the samples of ``metric`` whose labels include ``labels``."""
    found = 0.0
    for match in _SAMPLE.finditer(text):
        if match.group("name") != metric:
            continue
        have = match.group("labels") or ""
        if all(f'{key}="{value}"' in have for key, value in labels.items()):
            found += float(match.group("value"))
    return found


def test_control_plane_and_agent_metrics_move_while_a_workload_propagates(sandbox: LocalSandbox) -> None:
    control_plane = metrics_port(sandbox.dir, "karmada-controlplane")
    agent = metrics_port(sandbox.dir, "karmada-agent-member1")
    before = scrape(control_plane)
    agent_before = scrape(agent)
    sandbox.run_block("static-weight", "Run")
    try:
        wait_until(
            lambda: (sandbox.get("member1", "deployment", "nginx") or {}).get("spec", {}).get("replicas") == 2,
            "nginx in member1 with 2 replicas",
            60,
        )

        def scheduled() -> float:
            return total(
                scrape(control_plane),
                "karmada_scheduler_schedule_attempts_total",
                result="scheduled",
                schedule_type="ReconcileSchedule",
            )

        wait_until(lambda: scheduled() >= 1, "a scheduling attempt on /metrics", 30)
        after = scrape(control_plane)
        for name, labels in [
            ("workqueue_adds_total", {"name": "scheduler"}),
            ("workqueue_queue_duration_seconds_count", {"name": "scheduler"}),
            ("workqueue_work_duration_seconds_count", {"name": "binding-controller"}),
            ("controller_runtime_reconcile_total", {"controller": "scheduler", "result": "success"}),
            ("controller_runtime_reconcile_time_seconds_count", {"controller": "binding-controller"}),
            ("rest_client_requests_total", {"method": "PATCH"}),
            ("rest_client_request_duration_seconds_count", {"verb": "GET"}),
            ("karmada_scheduler_e2e_scheduling_duration_seconds_count", {"result": "scheduled"}),
        ]:
            assert total(after, name, **labels) > total(before, name, **labels), f"{name}{labels} did not move"
        assert "# TYPE workqueue_depth gauge" in after
        assert "# TYPE controller_runtime_reconcile_errors_total counter" in after
        assert "# TYPE workqueue_retries_total counter" in after

        def applied() -> float:
            return total(scrape(agent), "work_sync_workload_duration_seconds_count", result="success")

        wait_until(
            lambda: applied() > total(agent_before, "work_sync_workload_duration_seconds_count"), "a Work apply", 30
        )
        agent_after = scrape(agent)
        for name, labels in [
            ("workqueue_adds_total", {"name": "execution"}),
            ("controller_runtime_reconcile_total", {"controller": "execution", "result": "success"}),
            ("rest_client_requests_total", {"code": "200"}),
        ]:
            assert total(agent_after, name, **labels) > total(agent_before, name, **labels), (
                f"agent {name} did not move"
            )
    finally:
        sandbox.sh(
            "kubectl --kubeconfig ~/.karmada-local/karmada.config delete -f examples/static-weight/ --ignore-not-found"
        )
