"""Every example of ``examples/`` run as its README says, with all members in
pull mode (an agent each); the scenarios are in ``scenarios.py``, which the
push and mixed modules run too. Here also: each README has its blocks, and the
API server accepts every example's YAML (validation does not depend on how
members are worked, so one mode is enough).
"""

from __future__ import annotations

import pytest

from tests.examples.sandbox import LocalSandbox, example_folders, readme_blocks
from tests.examples.scenarios import (  # noqa: F401 (collected by pytest here)
    example,
    test_aggregated,
    test_cluster_affinity_fields,
    test_cluster_affinity_labels,
    test_cluster_tolerations,
    test_complete_example,
    test_duplicated,
    test_override_per_region,
    test_override_policy,
    test_propagate_deps_configmap_follows,
    test_propagate_deps_deployment,
    test_spread_constraints,
    test_static_weight,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

MODE = "pull"


def test_readmes_have_run_and_clean_up() -> None:
    for folder in example_folders():
        blocks = readme_blocks(folder)
        assert blocks.get("Run"), f"examples/{folder}/README.md has no ## Run sh block"
        assert blocks.get("Clean up"), f"examples/{folder}/README.md has no ## Clean up sh block"
        assert f"examples/{folder}/" in " ".join(blocks["Run"]), f"{folder}: Run applies another folder"


# the API server's own validation does not depend on how members are worked: one mode is enough
@pytest.mark.parametrize("folder", example_folders())
def test_server_accepts_the_yaml(sandbox: LocalSandbox, folder: str) -> None:
    # works without the propagation controllers: the API server's own validation of every document
    out = sandbox.karmada("apply", "--dry-run=server", "-f", f"examples/{folder}/")
    assert "(server dry run)" in out and "error" not in out.lower()
