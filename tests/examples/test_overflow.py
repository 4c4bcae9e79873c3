"""The clusterAffinities overflow example in a sandbox of its own: the seed
names its clusters idc-cluster1, cloud-cluster1 and cloud-cluster2, and the
README starts a sandbox with those members, small enough to fill (2 nodes of
1 CPU each: 19 replicas of 100m beside the agent's 100m).

Expected (reference 5.6, overflow tiers filled in order, each with
min(remaining, tier capacity)): 6 replicas fit the IDC, all there; scaled to
30, the IDC keeps its 6 and takes what room it has left, the rest overflows
to the cloud tier.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.examples.sandbox import LocalSandbox, readme_blocks, wait_for_state, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

FOLDER = "cluster-affinities-overflow"
IDC, CLOUD = "idc-cluster1", ("cloud-cluster1", "cloud-cluster2")
TIMEOUT = 45


@pytest.fixture(scope="module")
def idc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSandbox]:
    """The README's own sandbox command, run as written (its ``~`` is the module's home)."""
    (command,) = readme_blocks(FOLDER)["Sandbox"]
    sandbox = LocalSandbox(tmp_path_factory.mktemp("home"), ".karmada-idc")
    sandbox.sh(command, timeout=180)
    try:
        yield sandbox
    finally:
        sandbox.down()


def _replicas(sandbox: LocalSandbox) -> dict[str, int | None]:
    def one(cluster: str) -> int | None:
        found = sandbox.get(cluster, "deployment", "nginx")
        return None if found is None else int(found["spec"].get("replicas", 1))

    return {cluster: one(cluster) for cluster in (IDC, *CLOUD)}


def test_the_sandbox_has_the_seeds_clusters(idc: LocalSandbox) -> None:
    assert idc.karmada("get", "clusters", "-o", "name").split() == [
        f"cluster.cluster.karmada.io/{c}" for c in sorted((IDC, *CLOUD))
    ]


def test_idc_first_then_overflow(idc: LocalSandbox) -> None:
    # Run and Scale, as the README; its Clean up would take the sandbox down, the fixture does that
    idc.run_block(FOLDER, "Run")
    wait_for_state(
        lambda: _replicas(idc),
        {IDC: 6, CLOUD[0]: None, CLOUD[1]: None},
        "all 6 nginx replicas in idc-cluster1, none in the cloud",
        TIMEOUT,
    )
    idc.run_block(FOLDER, "Scale")

    def overflowed() -> Any:
        seen = _replicas(idc)
        cloud = sum(seen[c] or 0 for c in CLOUD)
        # the IDC never loses replicas on a scale up, and cannot hold all 30 (19 at most, a few more
        # if its resource summary is read before the first 6 are counted)
        ok = (seen[IDC] or 0) >= 6 and cloud >= 5 and (seen[IDC] or 0) + cloud == 30
        return seen if ok else None

    wait_until(
        overflowed,
        "30 replicas: the IDC first, the rest overflowing to the cloud clusters",
        TIMEOUT,
        lambda: _replicas(idc),
    )
