"""``kubectl explain`` of Karmada kinds shows Karmada's field descriptions: the CRDs
``init`` installs carry them and localkube publishes the schemas through OpenAPI."""

from __future__ import annotations

import pytest

from tests.servers import Kubectl, Plugin


@pytest.fixture(scope="module")
def installed(plugin: Plugin) -> None:
    assert plugin("init", "--apiserver", "external").returncode == 0


@pytest.mark.parametrize(
    ("field", "phrase"),
    [
        ("propagationpolicy.spec.placement.clusterAffinities", "scheduling restrictions to multiple cluster"),
        ("propagationpolicy.spec.placement.clusterTolerations", "ClusterTolerations represents the tolerations."),
        ("clusterpropagationpolicy.spec.placement.spreadConstraints", "SpreadConstraints represents"),
        ("overridepolicy.spec.overrideRules.overriders.imageOverrider", "ImageOverrider represents the rules"),
        ("resourcebinding.spec.clusters", "Clusters represents target member clusters where the resource"),
        ("work.spec.workload", "Workload represents the manifest workload"),
        ("cluster.spec.syncMode", "SyncMode describes how a cluster syncs resources from karmada control plane."),
    ],
)
def test_field_descriptions(installed: None, admin: Kubectl, field: str, phrase: str) -> None:
    result = admin("explain", field)
    assert result.returncode == 0, result.stderr
    assert phrase in " ".join(result.stdout.split())
    assert "<no description>" not in result.stdout.split("FIELDS:")[0]


def test_recursive_explain_lists_nested_fields(installed: None, admin: Kubectl) -> None:
    result = admin("explain", "propagationpolicy.spec.placement", "--recursive")
    assert result.returncode == 0, result.stderr
    for name in ("clusterAffinities", "overflowAffinities", "staticWeightList", "clusterTolerations"):
        assert name in result.stdout
