"""Every example of ``examples/`` run as its README says, with all members in push mode
(``--push-members 3``: the control plane works them, no agent); the scenarios are in ``scenarios.py``, shared with
the pull and other modules (one file per mode, so the modes' sandboxes run on separate workers)."""

from __future__ import annotations

import pytest

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

MODE = "push"
