"""``unregister``: remove a pull-mode member cluster from its control plane and
the agent from the member.

On the control plane the Works in ``karmada-es-<cluster>`` are deleted first
(the agent, still running, removes what they created), then the Cluster; the
control plane's cluster controller removes the execution namespace and the
agent's RBAC before letting the Cluster go. Control-plane credentials are an
administrator's kubeconfig or, by default, the agent's own (read from its
Secret in the member): an agent may delete its own Cluster and Works.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from karmada.api.names import execution_space
from karmada.kube import KubeClient, KubeError, ResourceMapper, from_kubeconfig_bytes
from karmada.kube.objects import delete_object, wait_until
from karmada.kube.resources import CLUSTERS, SECRETS, WORKS
from karmada.registration.member import KUBECONFIG_SECRET, AgentSettings, member_objects
from karmada.registration.register import RegistrationError

Obj = dict[str, Any]


@dataclass
class UnregisterOptions:
    cluster_name: str
    namespace: str = "karmada-system"
    wait: float = 60.0
    dry_run: bool = False


async def agent_control_plane_client(member: KubeClient, namespace: str) -> KubeClient:
    """A client with the agent's own control-plane credentials, from its Secret in the member."""
    secret = await member.get_or_none(SECRETS, KUBECONFIG_SECRET, namespace)
    data = ((secret or {}).get("data") or {}).get(KUBECONFIG_SECRET)
    if not data:
        raise RegistrationError(
            f"no agent kubeconfig in Secret {namespace}/{KUBECONFIG_SECRET} of this cluster; "
            "pass the control plane's kubeconfig with --karmada-kubeconfig"
        )
    return KubeClient(from_kubeconfig_bytes(base64.b64decode(data)))


async def unregister(
    member: KubeClient, control_plane: KubeClient, options: UnregisterOptions, say: Callable[[str], None]
) -> None:
    """Remove the cluster's Works and Cluster, then the agent from the member."""
    name = options.cluster_name
    cluster = await control_plane.get_or_none(CLUSTERS, name)
    if cluster is not None and (cluster.get("spec") or {}).get("syncMode") != "Pull":
        raise RegistrationError(f'cluster "{name}" is not in Pull mode: it was joined, not registered')
    if options.dry_run:
        say(f"would delete the Works in {execution_space(name)}, Cluster {name}, and the agent in the member")
        return
    if cluster is None:
        say(f"cluster {name} is not registered on the control plane; cleaning up the member only")
    else:
        space = execution_space(name)
        works = await _list_or_empty(control_plane, space)
        for work in works:
            await _delete(control_plane, WORKS, work["metadata"]["name"], space)
        if works:
            say(f"deleting {len(works)} Works in {space}")

            async def works_gone() -> bool:
                return not await _list_or_empty(control_plane, space)

            await wait_until(works_gone, options.wait, what=f"the Works in {space} to be deleted")
        await _delete(control_plane, CLUSTERS, name, None)

        async def cluster_gone() -> bool:
            try:
                return await control_plane.get_or_none(CLUSTERS, name) is None
            except KubeError as exc:
                # with the agent's credentials: its access is removed in the last step of the removal
                if exc.status == 403:
                    return True
                raise

        await wait_until(cluster_gone, options.wait, what=f"Cluster {name} to be removed by the control plane")
        say(f"cluster {name} removed from the control plane")
    mapper = ResourceMapper(member)
    settings = AgentSettings(cluster_name=name, cluster_api_endpoint="", namespace=options.namespace)
    for obj in reversed(member_objects(settings, {})):
        if obj["kind"] == "Namespace":
            continue  # the agent's namespace may hold other things; register did not always create it
        if await delete_object(member, mapper, obj):
            say(f"[member] {obj['kind'].lower()}/{obj['metadata']['name']} deleted")
    say(f"cluster({name}) is unregistered successfully")


async def _list_or_empty(client: KubeClient, namespace: str) -> list[Obj]:
    try:
        return list((await client.list(WORKS, namespace)).get("items") or [])
    except KubeError as exc:
        if exc.not_found or exc.status == 403:
            return []
        raise


async def _delete(client: KubeClient, resource: Any, name: str, namespace: str | None) -> None:
    try:
        await client.delete(resource, name, namespace)
    except KubeError as exc:
        if not exc.not_found:
            raise
