"""``kubectl karmada top clusters`` from the Clusters' resource summaries, and ``top pods``
where member data is (or is not) reachable."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.examples.sandbox import LocalSandbox, sandbox_at
from tests.kubectl_karmada.inspection_helpers import ok, plugin, table

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSandbox]:
    # two members of 2 nodes with 4 CPUs, 8Gi and 10 pods each
    yield from sandbox_at(
        tmp_path_factory.mktemp("home"),
        ".karmada-local",
        "--members",
        "2",
        "--nodes-per-member",
        "2",
        "--node-cpu",
        "4",
        "--node-memory",
        "8Gi",
        "--node-pods",
        "10",
    )


def test_top_clusters(sandbox: LocalSandbox) -> None:
    rows = table(ok(sandbox, "top", "clusters"))
    assert rows[0] == [
        "NAME", "CPU(ALLOCATABLE)", "CPU(ALLOCATED)", "CPU(AVAILABLE)", "CPU%",
        "MEMORY(ALLOCATABLE)", "MEMORY(ALLOCATED)", "MEMORY(AVAILABLE)", "MEMORY%",
        "PODS(ALLOCATABLE)", "PODS(ALLOCATED)", "PODS(AVAILABLE)",
    ]  # fmt: skip
    by_name = {r[0]: r for r in rows[1:]}
    assert set(by_name) == {"member1", "member2"}
    for row in by_name.values():
        assert row[1] == "8" and row[5] == "16384Mi" and row[9] == "20"
        # the agent's own pod is allocated: allocatable = allocated + available
        assert int(row[10]) + int(row[11]) == 20 and int(row[10]) >= 1
    one = table(ok(sandbox, "top", "clusters", "member2"))
    assert [r[0] for r in one[1:]] == ["member2"]


def test_top_errors(sandbox: LocalSandbox) -> None:
    missing = plugin(sandbox, "top", "clusters", "nope")
    assert missing.returncode == 1 and "error: clusters don't exist: nope" in missing.stderr
    # the members are reachable (the sandbox's members.config) but serve no metrics API
    pods = plugin(sandbox, "top", "pods", "-C", "member1")
    assert pods.returncode == 1 and "error: cluster(member1): Metrics API not available" in pods.stderr
    unnamed = plugin(sandbox, "top", "pods")
    assert unnamed.returncode == 1 and "error: name member clusters with -C" in unnamed.stderr
    empty = sandbox.home / "no-members.config"
    empty.write_text("{}\n")
    unreachable = plugin(sandbox, "top", "pods", "-C", "member2", "--members-kubeconfig", str(empty))
    assert unreachable.returncode == 1 and "cluster(member2) is not reachable from here" in unreachable.stderr
