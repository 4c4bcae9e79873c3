"""The agent's part of its Cluster object: the control plane created it when
it approved this cluster's certificate; the agent fills in what only it
knows (member API endpoint, cluster id = UID of the member's ``kube-system``
namespace, provider, region, zones) and refuses to act for a Cluster whose
id is another cluster's."""

from __future__ import annotations

import copy
from typing import Any

from agent.options import Options
from karmada.kube import KubeClient
from karmada.kube.resources import CLUSTERS, NAMESPACES

Obj = dict[str, Any]


class NotRegistered(Exception):
    """This cluster has no (or someone else's) Cluster object on the control plane."""


async def cluster_id(member: KubeClient) -> str:
    """Karmada's cluster id: the UID of ``kube-system``."""
    namespace = await member.get(NAMESPACES, "kube-system")
    return str(namespace["metadata"]["uid"])


def desired_spec(current: Obj, options: Options, identity: str) -> Obj:
    """The Cluster spec with the agent's facts applied (given values only)."""
    spec = copy.deepcopy(current)
    spec["syncMode"] = "Pull"
    spec["id"] = identity
    if options.cluster_api_endpoint:
        spec["apiEndpoint"] = options.cluster_api_endpoint
    if options.proxy_server_address:
        spec["proxyURL"] = options.proxy_server_address
    if options.cluster_provider:
        spec["provider"] = options.cluster_provider
    if options.cluster_region:
        spec["region"] = options.cluster_region
    if options.cluster_zones:
        spec["zones"] = list(options.cluster_zones)
        spec.pop("zone", None)
    return spec


async def ensure_cluster(control_plane: KubeClient, member: KubeClient, options: Options) -> Obj:
    """Bring the Cluster's spec up to date; NotRegistered when it cannot be this cluster's."""
    name = options.cluster_name
    cluster = await control_plane.get_or_none(CLUSTERS, name)
    if cluster is None:
        raise NotRegistered(
            f'cluster "{name}" is not registered on the control plane (never approved, or unregistered); '
            "register it with `kubectl karmada register`"
        )
    identity = await cluster_id(member)
    existing = (cluster.get("spec") or {}).get("id")
    if existing and existing != identity:
        raise NotRegistered(
            f'cluster "{name}" on the control plane belongs to another cluster (id {existing}, this one is '
            f"{identity}); choose another --cluster-name"
        )
    spec = desired_spec(cluster.get("spec") or {}, options, identity)
    if spec != cluster.get("spec"):
        cluster = await control_plane.update(CLUSTERS, {**cluster, "spec": spec})
    return cluster
