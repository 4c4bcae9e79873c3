"""Objects by their own apiVersion/kind: apply (server-side), delete and wait,
the way ``kubectl apply -f`` and ``kubectl delete -f`` treat a manifest."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from karmada.kube.client import KubeClient, KubeError, Request
from karmada.kube.resources import Resource, ResourceMapper

Obj = dict[str, Any]


async def resource_of(mapper: ResourceMapper, obj: Obj) -> Resource:
    """The resource serving ``obj``'s apiVersion and kind."""
    return await mapper.resource_for(obj["apiVersion"], obj["kind"])


def _namespace(resource: Resource, obj: Obj) -> str | None:
    return obj["metadata"].get("namespace") or "default" if resource.namespaced else None


async def apply_object(client: KubeClient, mapper: ResourceMapper, obj: Obj, manager: str) -> Obj:
    """Create or update ``obj`` by server-side apply, owning what it sets."""
    resource = await resource_of(mapper, obj)
    return await client.apply(resource, obj, _namespace(resource, obj), manager=manager)


async def delete_if_present(client: KubeClient, resource: Resource, name: str, namespace: str | None = None) -> bool:
    """Delete one object (background); False when it was already gone."""
    try:
        await client.delete(resource, name, namespace)
    except KubeError as exc:
        if exc.not_found:
            return False
        raise
    return True


async def delete_object(client: KubeClient, mapper: ResourceMapper, obj: Obj) -> bool:
    """Delete ``obj`` (foreground); False when it was already gone or its kind is not served."""
    try:
        resource = await resource_of(mapper, obj)
        await client.delete(resource, obj["metadata"]["name"], _namespace(resource, obj), propagation="Foreground")
    except KubeError as exc:
        if exc.not_found:
            return False
        raise
    except LookupError:
        return False
    return True


async def wait_until(check: Callable[[], Any], timeout: float, interval: float = 0.2, what: str = "condition") -> Any:
    """Await ``check()`` until it returns a truthy value; TimeoutError naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        result = await check()
        if result:
            return result
        if time.monotonic() >= deadline:
            raise TimeoutError(f"timed out after {timeout:g}s waiting for {what}")
        await asyncio.sleep(interval)


async def wait_gone(client: KubeClient, mapper: ResourceMapper, obj: Obj, timeout: float) -> None:
    """Wait until ``obj`` no longer exists (finalizers done)."""
    try:
        resource = await resource_of(mapper, obj)
    except LookupError:
        return
    name, namespace = obj["metadata"]["name"], _namespace(resource, obj)

    async def gone() -> bool:
        return await client.get_or_none(resource, name, namespace) is None

    await wait_until(gone, timeout, what=f"{resource.plural}/{name} to be deleted")


async def service_account_token(client: KubeClient, namespace: str, account: str, seconds: int) -> str:
    """A token of ``namespace/account`` from the TokenRequest API, valid ``seconds``."""
    request = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {"expirationSeconds": seconds},
    }
    path = f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token"
    answer = await client.execute(Request("POST", path, {}, request))
    return str(answer["status"]["token"])
