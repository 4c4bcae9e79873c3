"""The health monitor's bookkeeping (:class:`controlplane.cluster_health.ProbeTracker`):
probe times move on a new Ready condition or a changed Lease renewTime only, deadlines
come due once, and removal, updates and mode changes are kept track of."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from controlplane.cluster_health import ProbeTracker

T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
GRACE = datetime.timedelta(seconds=40)
STARTUP = datetime.timedelta(seconds=60)


def at(seconds: float) -> datetime.datetime:
    return T0 + datetime.timedelta(seconds=seconds)


def stamp(seconds: float) -> str:
    return at(seconds).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def cluster(name: str, ready: str | None = "True", mode: str = "Pull", created: float = 0) -> dict[str, Any]:
    conditions = [] if ready is None else [{"type": "Ready", "status": ready, "reason": "r", "message": "m"}]
    return {
        "metadata": {"name": name, "creationTimestamp": at(created).strftime("%Y-%m-%dT%H:%M:%SZ")},
        "spec": {"syncMode": mode},
        "status": {"conditions": conditions},
    }


def lease(name: str, renewed: float | None) -> dict[str, Any]:
    spec = {} if renewed is None else {"renewTime": stamp(renewed)}
    return {"metadata": {"name": name}, "spec": spec}


# each step: (second, action, argument); then the clusters due at the check times
CASES: list[tuple[str, list[tuple[float, str, Any]], dict[float, list[str]]]] = [
    (
        "a silent Ready cluster comes due after the grace period, once",
        [(0, "cluster", cluster("a"))],
        {39: [], 41: ["a"], 90: []},
    ),
    (
        "renewals keep it alive; silence after the last one",
        [(0, "cluster", cluster("a")), (10, "lease", lease("a", 10)), (20, "lease", lease("a", 20))],
        {50: [], 59: [], 61: ["a"]},
    ),
    (
        "a renewTime that did not move is no sign of life",
        [(0, "cluster", cluster("a")), (5, "lease", lease("a", 5)), (30, "lease", lease("a", 5))],
        {44: [], 46: ["a"]},
    ),
    (
        "an older renewTime counts too: the agent's clock was stepped back, and it renewed",
        [(0, "cluster", cluster("a")), (10, "lease", lease("a", 10)), (30, "lease", lease("a", 3))],
        {51: [], 69: [], 71: ["a"]},
    ),
    (
        "a renewTime an hour ahead, then back to the true time: both are renewals",
        [(0, "cluster", cluster("a")), (10, "lease", lease("a", 3610)), (30, "lease", lease("a", 30))],
        {51: [], 71: ["a"]},
    ),
    (
        "a Lease seen before its Cluster: the latest renewTime seen counts, even an older one",
        [
            (0, "lease", lease("a", 3600)),
            (5, "lease", lease("a", 5)),
            (10, "cluster", cluster("a")),
            (20, "lease", lease("a", 20)),
        ],
        {51: [], 59: [], 61: ["a"]},
    ),
    (
        "a Lease without renewTime is ignored",
        [(0, "cluster", cluster("a")), (30, "lease", lease("a", None))],
        {41: ["a"]},
    ),
    (
        "a changed Ready condition is a sign of life",
        [(0, "cluster", cluster("a")), (30, "cluster", cluster("a", ready="False"))],
        {41: [], 71: ["a"]},
    ),
    (
        "the same Ready condition again (a status write of other fields) is not",
        [(0, "cluster", cluster("a")), (30, "cluster", cluster("a"))],
        {41: ["a"]},
    ),
    (
        "never Ready: the startup grace period counts from creation",
        [(30, "cluster", cluster("a", ready=None, created=0))],
        {59: [], 61: ["a"]},
    ),
    (
        "push clusters are never judged",
        [(0, "cluster", cluster("a", mode="Push"))],
        {41: [], 100: []},
    ),
    (
        "a push cluster turned pull is judged from its last probe",
        [(0, "cluster", cluster("a", mode="Push")), (50, "cluster", cluster("a", mode="Pull"))],
        {51: ["a"]},
    ),
    (
        "a pull cluster turned push is no longer judged",
        [(0, "cluster", cluster("a")), (20, "cluster", cluster("a", mode="Push"))],
        {41: [], 100: []},
    ),
    (
        "a removed cluster is forgotten, its Lease with it",
        [(0, "cluster", cluster("a")), (10, "forget", "a"), (11, "lease", lease("a", 11))],
        {41: [], 100: []},
    ),
    (
        "a cluster added again after removal starts afresh",
        [(0, "cluster", cluster("a")), (10, "forget", "a"), (20, "cluster", cluster("a"))],
        {41: [], 61: ["a"]},
    ),
    (
        "a Lease seen before its Cluster counts from the Cluster's arrival",
        [(0, "lease", lease("a", 0)), (20, "cluster", cluster("a", ready=None, created=0))],
        {59: [], 79: [], 81: ["a"]},
    ),
    (
        "a Lease deleted before its Cluster arrives leaves no trace",
        [(0, "lease", lease("a", 0)), (1, "forget-lease", "a"), (20, "cluster", cluster("a", ready=None, created=0))],
        {59: [], 61: ["a"]},
    ),
    (
        "several clusters come due in deadline order, each on its own",
        [
            (0, "cluster", cluster("a")),
            (5, "cluster", cluster("b")),
            (10, "cluster", cluster("c")),
            (30, "lease", lease("b", 30)),
        ],
        {41: ["a"], 51: ["c"], 71: ["b"]},
    ),
    (
        "a failed write is retried at the next look",
        [(0, "cluster", cluster("a")), (42, "due", None), (42, "retry", "a")],
        {43: ["a"], 44: []},
    ),
    (
        "the monitor's own Unknown write does not move the probe",
        [(0, "cluster", cluster("a")), (41, "due", None), (41, "wrote", "a"), (42, "cluster", cluster("a", "Unknown"))],
        {100: []},
    ),
]


@pytest.mark.parametrize(("steps", "checks"), [(s, c) for _, s, c in CASES], ids=[c[0] for c in CASES])
def test_probe_tracker(steps: list[tuple[float, str, Any]], checks: dict[float, list[str]]) -> None:
    tracker = ProbeTracker(GRACE, STARTUP)
    events = sorted(
        [(t, 0, action, arg) for t, action, arg in steps] + [(t, 1, "check", names) for t, names in checks.items()],
        key=lambda e: (e[0], e[1]),
    )
    for second, _, action, arg in events:
        now = at(second)
        if action == "cluster":
            tracker.observe_cluster(arg, now)
        elif action == "lease":
            tracker.observe_lease(arg, now)
        elif action == "forget":
            tracker.forget(arg)
        elif action == "forget-lease":
            tracker.forget_lease(arg)
        elif action == "due":
            tracker.due(now)
        elif action == "retry":
            tracker.retry(arg, now)
        elif action == "wrote":
            tracker.wrote_ready(arg, {"type": "Ready", "status": "Unknown", "reason": "r", "message": "m"})
        else:
            assert tracker.due(now) == arg, f"due at {second}s"


def test_heap_stays_one_entry_per_cluster_under_renewals() -> None:
    """A thousand clusters renewing every 10 s for 10 minutes: each renewal is O(1) and the heap
    holds about one entry per cluster, not one per renewal."""
    tracker = ProbeTracker(GRACE, STARTUP)
    for i in range(1000):
        tracker.observe_cluster(cluster(f"m{i}"), at(0))
    for second in range(10, 600, 10):
        for i in range(1000):
            tracker.observe_lease(lease(f"m{i}", second), at(second))
        assert tracker.due(at(second)) == []
        assert tracker.queued() <= 1000
    assert len(tracker) == 1000
    assert sorted(tracker.due(at(700))) == sorted(f"m{i}" for i in range(1000))
    assert tracker.due(at(800)) == []


def test_creation_age_is_taken_from_the_wall_clock_when_now_is_another_clock() -> None:
    tracker = ProbeTracker(GRACE, STARTUP)
    # created 30 s ago by the wall clock; the tracker's own clock reads 1000
    tracker.observe_cluster(cluster("a", ready=None, created=0), at(1000), wall_now=at(30))
    assert tracker.due(at(1029)) == [] and tracker.due(at(1031)) == ["a"]
