"""The binding controller's parsed models (Clusters, override policies): parsed once per
resourceVersion; a version the model refuses keeps the last valid one. Offline."""

from __future__ import annotations

from typing import Any

from controlplane.binding_controller import Models
from karmada.api.cluster import Cluster
from karmada.kube import Informer, KubeClient
from karmada.kube.config import ClusterConfig
from karmada.kube.resources import CLUSTERS


def test_the_binding_controller_keeps_a_clusters_last_valid_version() -> None:
    """A Cluster version the model refuses does not make it vanish from the Works' view."""
    client = KubeClient(ClusterConfig(server="http://127.0.0.1:9"))  # never contacted
    informer = Informer(client, CLUSTERS)
    clusters = Models(informer, Cluster)
    valid: dict[str, Any] = {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": "m1", "resourceVersion": "1", "labels": {"env": "prod"}},
        "spec": {"syncMode": "Pull"},
    }
    informer.store(valid)
    first = clusters.get("m1")
    assert first is not None and first.metadata.labels == {"env": "prod"}
    newer = {**valid, "metadata": {**valid["metadata"], "resourceVersion": "2"}, "spec": {"syncMode": "Hybrid"}}
    informer.store(newer)
    assert clusters.get("m1") is first
    never = {**newer, "metadata": {"name": "m2", "resourceVersion": "3"}}
    informer.store(never)
    assert clusters.get("m2") is None
