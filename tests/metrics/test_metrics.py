"""The instrumentation: work queues, reconciles, API requests, scheduling and the
``/metrics`` server, read back from the process's registry."""

from __future__ import annotations

import argparse
import asyncio
import itertools
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp
import pytest

from karmada import metrics
from karmada.kube import KubeClient, KubeError, from_kubeconfig
from karmada.kube.controller import Controller
from karmada.kube.resources import CONFIGMAPS
from karmada.kube.workqueue import WorkQueue
from tests.servers import ServerThread

_names = itertools.count()


def sample(metric: str, /, **labels: str) -> float:
    return metrics.REGISTRY.get_sample_value(metric, labels) or 0.0


def unique(prefix: str) -> str:
    """A queue or controller name of this test alone: the registry lives as long as the process."""
    return f"{prefix}-{next(_names)}"


# operations on a fresh queue -> (depth, adds, retries) after them
QUEUE_CASES = [
    (["add a"], (1, 1, 0)),
    (["add a", "add a"], (1, 1, 0)),  # a dirty key is queued once, counted once
    (["add a", "add b"], (2, 2, 0)),
    (["add a", "get", "done"], (0, 1, 0)),
    (["add a", "get", "add a"], (0, 2, 0)),  # held by a worker: dirty, not yet queued
    (["add a", "get", "add a", "done"], (1, 2, 0)),  # done() queues it again
    (["rate-limited a"], (0, 0, 1)),  # waiting out its backoff: not in the queue yet
]


@pytest.mark.parametrize(("operations", "expected"), QUEUE_CASES)
async def test_queue_depth_adds_and_retries(operations: list[str], expected: tuple[int, int, int]) -> None:
    name = unique("queue")
    queue: WorkQueue[str] = WorkQueue(name=name)
    held: list[str] = []
    for operation in operations:
        verb, _, key = operation.partition(" ")
        if verb == "add":
            queue.add(key)
        elif verb == "get":
            held.append(await queue.get())
        elif verb == "done":
            queue.done(held.pop())
        else:
            queue.add_rate_limited(key)
    got = (
        sample("workqueue_depth", name=name),
        sample("workqueue_adds_total", name=name),
        sample("workqueue_retries_total", name=name),
    )
    assert got == expected
    await queue.shutdown()


async def test_queue_durations_are_observed_per_key() -> None:
    name = unique("durations")
    queue: WorkQueue[str] = WorkQueue(name=name)
    queue.add("a")
    await asyncio.sleep(0.02)
    key = await queue.get()
    await asyncio.sleep(0.02)
    queue.done(key)
    assert sample("workqueue_queue_duration_seconds_count", name=name) == 1
    assert sample("workqueue_queue_duration_seconds_sum", name=name) >= 0.02
    assert sample("workqueue_work_duration_seconds_count", name=name) == 1
    assert sample("workqueue_work_duration_seconds_sum", name=name) >= 0.02


async def test_unnamed_queue_exports_nothing() -> None:
    before = metrics.render()
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    await queue.get()
    assert metrics.render() == before


async def test_reconcile_results_and_errors_by_controller() -> None:
    name = unique("controller")
    outcomes = {"ok": None, "later": 30.0}
    seen = asyncio.Event()

    async def reconcile(key: str) -> float | None:
        if key == "last":
            seen.set()
        if key in ("boom", "gone"):
            if key == "gone":
                raise KubeError(404, "NotFound", "gone")
            raise RuntimeError("bad object")
        return outcomes.get(key)

    controller: Controller[str] = Controller(name, reconcile)
    controller.start()
    for key in ("ok", "later", "boom", "gone", "last"):
        controller.enqueue(key)
    await asyncio.wait_for(seen.wait(), 5)
    await controller.stop(grace=0.1)
    assert sample("controller_runtime_reconcile_total", controller=name, result="success") >= 2  # ok, last
    assert sample("controller_runtime_reconcile_total", controller=name, result="requeue_after") == 1
    errors = sample("controller_runtime_reconcile_total", controller=name, result="error")
    assert errors >= 2  # boom and gone, maybe once more each after their 5 ms backoff
    assert sample("controller_runtime_reconcile_errors_total", controller=name) == errors
    assert sample("controller_runtime_reconcile_time_seconds_count", controller=name) >= 5
    assert sample("workqueue_retries_total", name=name) == errors


async def test_requests_count_by_code_method_and_host(localkube: ServerThread, workdir: Path) -> None:
    config = from_kubeconfig(localkube.kubeconfig(workdir))
    host = urlsplit(config.server).netloc
    ok = sample("rest_client_requests_total", code="200", method="GET", host=host)
    missing = sample("rest_client_requests_total", code="404", method="GET", host=host)
    timed = sample("rest_client_request_duration_seconds_count", verb="GET", host=host)
    async with KubeClient(config) as client:
        await client.list(CONFIGMAPS, "default")
        assert await client.get_or_none(CONFIGMAPS, "absent", "default") is None
    assert sample("rest_client_requests_total", code="200", method="GET", host=host) == ok + 1
    assert sample("rest_client_requests_total", code="404", method="GET", host=host) == missing + 1
    assert sample("rest_client_request_duration_seconds_count", verb="GET", host=host) == timed + 2


async def test_unanswered_request_counts_as_error_code(workdir: Path, localkube: ServerThread) -> None:
    config = from_kubeconfig(localkube.kubeconfig(workdir))
    config.server = "https://127.0.0.1:1"  # nothing listens there
    before = sample("rest_client_requests_total", code="<error>", method="GET", host="127.0.0.1:1")
    async with KubeClient(config) as client:
        with pytest.raises(KubeError):
            await client.list(CONFIGMAPS, "default")
    assert sample("rest_client_requests_total", code="<error>", method="GET", host="127.0.0.1:1") == before + 1


@pytest.mark.parametrize(
    ("schedule_type", "failed", "result"),
    [
        (metrics.RECONCILE_SCHEDULE, False, "scheduled"),
        (metrics.RECONCILE_SCHEDULE, True, "error"),
        (metrics.SCALE_SCHEDULE, False, "scheduled"),
    ],
)
def test_schedule_attempts_and_latency(schedule_type: str, failed: bool, result: str) -> None:
    labels = {"result": result, "schedule_type": schedule_type}
    attempts = sample("karmada_scheduler_schedule_attempts_total", **labels)
    timed = sample("karmada_scheduler_e2e_scheduling_duration_seconds_count", **labels)
    metrics.observe_schedule(schedule_type, 0.003, failed=failed)
    assert sample("karmada_scheduler_schedule_attempts_total", **labels) == attempts + 1
    assert sample("karmada_scheduler_e2e_scheduling_duration_seconds_count", **labels) == timed + 1
    # Karmada's buckets: 1 ms doubling, 15 of them
    assert sample("karmada_scheduler_e2e_scheduling_duration_seconds_bucket", le="0.004", **labels) >= 1


@pytest.mark.parametrize(
    ("text", "valid"),
    [(":8080", True), ("127.0.0.1:0", True), ("0", True), ("[::1]:9", True), ("8080", False), (":x", False)],
)
def test_metrics_bind_address(text: str, valid: bool) -> None:
    if valid:
        assert metrics.metrics_address(text) == text
    else:
        with pytest.raises(argparse.ArgumentTypeError, match="--metrics-bind-address"):
            metrics.metrics_address(text)


@pytest.mark.parametrize("program", ["controlplane", "agent", "webhook"])
def test_programs_take_karmadas_flag_and_default(program: str) -> None:
    import importlib

    parser = importlib.import_module(f"{program}.cli").build_parser()
    required = ["--cluster-name=member1"] if program == "agent" else []
    assert parser.parse_args(required).metrics_bind_address == ":8080"
    assert parser.parse_args([*required, "--metrics-bind-address=0"]).metrics_bind_address == "0"
    with pytest.raises(SystemExit):
        parser.parse_args([*required, "--metrics-bind-address=nowhere"])


async def test_served_in_prometheus_text_format() -> None:
    name = unique("served")
    WorkQueue[str](name=name).add("a")
    async with metrics.serve("127.0.0.1:0", "test") as port:
        assert port
        async with aiohttp.ClientSession() as session, session.get(f"http://127.0.0.1:{port}/metrics") as response:
            assert response.status == 200
            assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
            text = await response.text()
    assert f'workqueue_depth{{name="{name}"}} 1.0' in text
    assert "# TYPE rest_client_requests_total counter" in text


async def test_zero_disables_and_a_taken_port_is_survived() -> None:
    async with metrics.serve("0", "test") as port:
        assert port is None
    # the second address is the port the first one bound: evaluated once the first is entered
    async with (
        metrics.serve("127.0.0.1:0", "first") as taken,
        metrics.serve(f"127.0.0.1:{taken}", "second") as second,
    ):
        assert taken and second is None


@pytest.mark.parametrize("name", ["karmada-controlplane", "karmada-webhook", "karmada-agent"])
def test_deployments_serve_metrics_on_karmadas_port(name: str) -> None:
    from tests.deploy.test_manifests import agent_documents, deploy_documents, deployments

    (deployment,) = [d for d in deployments(deploy_documents() + agent_documents()) if d["metadata"]["name"] == name]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert "--metrics-bind-address=:8080" in container["command"]
    assert {p["name"]: p["containerPort"] for p in container["ports"]}["metrics"] == 8080
