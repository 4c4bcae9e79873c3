"""``pods/log`` of simulated containers, read with the real kubectl (``logs``, ``-f``,
``--tail``, ``--timestamps``, ``-c``, ``--since``, ``--limit-bytes``) and raw requests
for kube's errors; the pure parts (the simulated log, option filtering) in tables."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import yaml
from multidict import MultiDict

from localkube import pod_logs
from localkube.errors import APIError
from localkube.simulation import SimulationConfig
from tests.localkube.running_pods import background, hold_waiting, pod, read_lines, run_pod
from tests.servers import Kubectl, Raw, ServerThread, start_server

INTERVAL = 0.2
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z ")


@pytest.fixture(scope="module")
def simulated() -> Iterator[ServerThread]:
    config = SimulationConfig(nodes=1, node_prefix="logs", log_interval=INTERVAL, shutdown_seconds=0.2)
    yield from start_server(port=0, simulation=config)


@pytest.fixture(scope="module")
def web(kubectl: Kubectl) -> dict[str, Any]:
    return run_pod(kubectl, pod("web", [{"name": "web", "image": "nginx", "ports": [{"containerPort": 8080}]}]))


@pytest.fixture(scope="module")
def multi(kubectl: Kubectl) -> dict[str, Any]:
    return run_pod(kubectl, pod("multi", [{"name": "a", "image": "busybox"}, {"name": "b", "image": "alpine"}]))


def test_a_running_container_logs_its_start_then_ticks(kubectl: Kubectl, web: dict[str, Any]) -> None:
    time.sleep(3 * INTERVAL)
    lines = kubectl("logs", "web").stdout.splitlines()
    assert lines[:2] == ["starting container web (image nginx)", "web: listening on port 8080"]
    assert lines[2:5] == ["web: tick 1", "web: tick 2", "web: tick 3"]


def test_tail_timestamps_and_limit_bytes(kubectl: Kubectl, web: dict[str, Any]) -> None:
    time.sleep(2 * INTERVAL)
    tail = kubectl("logs", "web", "--tail=2").stdout.splitlines()
    assert len(tail) == 2 and all(line.startswith("web: tick ") for line in tail)
    stamped = kubectl("logs", "web", "--timestamps", "--tail=3").stdout.splitlines()
    assert len(stamped) == 3 and all(TIMESTAMP.match(line) for line in stamped)
    assert kubectl("logs", "web", "--limit-bytes=8").stdout == "starting"


def test_since_keeps_the_recent_lines(kubectl: Kubectl, web: dict[str, Any]) -> None:
    recent = kubectl("logs", "web", "--since=1s").stdout.splitlines()
    assert recent and all(line.startswith("web: tick ") for line in recent)
    assert len(recent) <= 1 / INTERVAL + 1


def test_container_of_a_multi_container_pod(kubectl: Kubectl, multi: dict[str, Any]) -> None:
    assert kubectl("logs", "multi", "-c", "b").stdout.startswith("starting container b (image alpine)\n")
    unknown = kubectl("logs", "multi", "-c", "zz", check=False)
    assert unknown.returncode == 1 and "container zz is not valid for pod multi" in unknown.stderr


def test_follow_streams_new_lines(kubectl: Kubectl, web: dict[str, Any]) -> None:
    with background(kubectl, "logs", "-f", "web", "--tail=1") as follow:
        first, *later = read_lines(follow, 4)
    numbers = [int(line.rsplit(" ", 1)[1]) for line in [first, *later]]
    assert numbers == list(range(numbers[0], numbers[0] + 4))


def test_follow_ends_when_the_pod_goes(kubectl: Kubectl) -> None:
    run_pod(kubectl, pod("brief", [{"name": "brief", "image": "busybox"}]))
    with background(kubectl, "logs", "-f", "brief") as follow:
        read_lines(follow, 3)
        kubectl("delete", "pod", "brief", "--wait=false")
        assert follow.wait(timeout=10) == 0


async def test_errors_as_kube_gives_them(kubectl: Kubectl, sim_raw: Raw, multi: dict[str, Any]) -> None:
    run_pod(kubectl, pod("creating", [{"name": "c", "image": "busybox"}]))
    hold_waiting(kubectl, "creating")
    base = "/api/v1/namespaces/default/pods"
    cases = [
        ("/missing/log", 404, 'pods "missing" not found'),
        ("/multi/log", 400, "a container name must be specified for pod multi, choose one of: [a b]"),
        ("/multi/log?container=zz", 400, "container zz is not valid for pod multi"),
        ("/multi/log?container=a&previous=true", 400, 'previous terminated container "a" in pod "multi" not found'),
        ("/creating/log", 400, 'container "c" in pod "creating" is waiting to start: ContainerCreating'),
        ("/multi/log?container=a&tailLines=-1", 422, "tailLines: Invalid value: -1: must be greater than or equal"),
        ("/multi/log?container=a&limitBytes=0", 422, "limitBytes: Invalid value: 0: must be greater than 0"),
        ("/multi/log?container=a&sinceSeconds=0", 422, "sinceSeconds: Invalid value: 0: must be greater than 0"),
    ]
    for path, code, message in cases:
        status, body, _ = await sim_raw.request("GET", base + path)
        assert (status, message in str(body)) == (code, True), (path, body)
    status, body, headers = await sim_raw.request("GET", base + "/multi/log?container=a&tailLines=1")
    assert status == 200 and headers["Content-Type"].startswith("text/plain") and body.startswith("a: ")


async def test_an_unscheduled_pod_has_an_empty_log(kubectl: Kubectl, sim_raw: Raw) -> None:
    manifest = pod("nowhere", [{"name": "idle", "image": "busybox"}], nodeSelector={"no": "such-node"})
    kubectl("apply", "-f", "-", stdin=yaml.safe_dump(manifest))
    status, body, _ = await sim_raw.request("GET", "/api/v1/namespaces/default/pods/nowhere/log")
    assert (status, body) == (200, "")


# -- the pure parts ------------------------------------------------------------------------
START = datetime(2024, 5, 1, 10, 0, 0, tzinfo=UTC)
CONTAINER = {"name": "app", "image": "busybox"}


def _at(seconds: float) -> datetime:
    return START + timedelta(seconds=seconds)


@pytest.mark.parametrize(
    ("elapsed", "texts"),
    [
        (-1, []),
        (0, ["starting container app (image busybox)", "app: running"]),
        (4.9, ["starting container app (image busybox)", "app: running"]),
        (10, ["starting container app (image busybox)", "app: running", "app: tick 1", "app: tick 2"]),
    ],
)
def test_the_simulated_log(elapsed: float, texts: list[str]) -> None:
    assert [line.text for line in pod_logs.lines_until(CONTAINER, START, 5.0, _at(elapsed))] == texts


def test_the_log_keeps_its_last_lines() -> None:
    lines = pod_logs.lines_until(CONTAINER, START, 1.0, _at(5000))
    assert len(lines) == pod_logs.MAX_LINES
    assert lines[-1].text == "app: tick 5000" and lines[-1].at == _at(5000)
    assert pod_logs.line_count(START, 1.0, _at(5000)) == 5002


LINES = [pod_logs.LogLine(_at(s), f"line {s}") for s in range(10)]


@pytest.mark.parametrize(
    ("query", "kept"),
    [
        ({}, list(range(10))),
        ({"tailLines": "3"}, [7, 8, 9]),
        ({"tailLines": "0"}, []),
        ({"sinceSeconds": "3"}, [7, 8, 9]),
        ({"sinceTime": "2024-05-01T10:00:08Z"}, [8, 9]),
        ({"tailLines": "5", "sinceSeconds": "2"}, [8, 9]),
    ],
)
def test_options_filter_lines(query: dict[str, str], kept: list[int]) -> None:
    options = pod_logs.parse_options(MultiDict(query), "p")
    assert [line.text for line in pod_logs.select(LINES, options, _at(10))] == [f"line {s}" for s in kept]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"sinceSeconds": "5", "sinceTime": "2024-05-01T10:00:08Z"}, "at most one of `sinceTime` or `sinceSeconds`"),
        ({"tailLines": "x"}, 'strconv.ParseInt: parsing "x": invalid syntax'),
        ({"follow": "yes"}, 'strconv.ParseBool: parsing "yes": invalid syntax'),
    ],
)
def test_options_refused(query: dict[str, str], message: str) -> None:
    with pytest.raises(APIError) as caught:
        pod_logs.parse_options(MultiDict(query), "p")
    assert message in caught.value.message


def test_timestamps_have_nine_fraction_digits() -> None:
    at = START + timedelta(microseconds=123456)
    assert pod_logs.format_timestamp(at) == "2024-05-01T10:00:00.123456000Z"
    assert pod_logs.render([pod_logs.LogLine(at, "x")], True) == b"2024-05-01T10:00:00.123456000Z x\n"
