"""The interpreter with webhooks: awaitable operations over the synchronous layers.

Karmada's order for every operation: a ResourceInterpreterCustomization (Lua),
then an interpreter webhook, then the shipped third-party scripts, then the
native rules. :class:`AsyncInterpreter` keeps that order: when the kind has a
customization for the operation, or no webhook registers it, the answer comes
from :class:`~karmada.interpreter.customized.CustomizedInterpreter` at once
(no I/O, no task switch); otherwise the hook is called over HTTP, awaited in
the calling reconcile, so no blocking call runs on the event loop and the
other reconciles go on meanwhile.

Configurations arrive through :meth:`AsyncInterpreter.on_event` (an informer
handler), so an applied, changed or deleted ResourceInterpreterWebhookConfiguration
applies to the next call, with no restart. A failing hook raises
:class:`~karmada.interpreter.webhook.WebhookError` (a ``ValueError``): the
caller fails the one object it interprets, as for a failing Lua script.
"""

from __future__ import annotations

import asyncio
import copy
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from karmada.interpreter.customized import CustomizedInterpreter
from karmada.interpreter.native import Operation
from karmada.interpreter.webhook import (
    INVALID,
    Attributes,
    InterpreterHook,
    Response,
    context_request,
    first_relevant,
    hooks_of,
    patched,
    service_url,
    verify_response,
)
from karmada.interpreter_webhooks.client import WebhookClient

if TYPE_CHECKING:  # the API models load pydantic, which an agent never needs (its memory)
    from karmada.api.binding import AggregatedStatusItem, ReplicaRequirements
    from karmada.api.interpreter import DependentObjectReference

Obj = dict[str, Any]
# (namespace, name) -> the control plane's Service, or None when it has none
ServiceLookup = Callable[[str, str], Awaitable[Obj | None]]


def _gvk(obj: Mapping[str, Any]) -> tuple[str, str]:
    return str(obj.get("apiVersion", "")), str(obj.get("kind", ""))


async def _no_services(namespace: str, name: str) -> Obj | None:
    return None


class RevisedReplicas:
    """ReviseReplica answers computed ahead (by a webhook), for the synchronous Work rendering."""

    def __init__(self, revised: Mapping[int, Obj | Exception]) -> None:
        self.revised = dict(revised)

    def hook_enabled(self, api_version: str, kind: str, operation: Any) -> bool:
        return operation is Operation.REVISE_REPLICA

    def revise_replica(self, obj: Mapping[str, Any], count: int) -> Obj:
        answer = self.revised.get(count)
        if answer is None:
            raise ValueError(f"no revision of {count} replicas was asked of the interpreter webhook")
        if isinstance(answer, Exception):
            raise answer
        return copy.deepcopy(answer)


class AsyncInterpreter:
    """CustomizedInterpreter's operations, awaitable, with interpreter webhooks between Lua and the rest."""

    def __init__(
        self,
        customized: CustomizedInterpreter | None = None,
        *,
        services: ServiceLookup | None = None,
        client: WebhookClient | None = None,
    ) -> None:
        self.customized = customized or CustomizedInterpreter()
        self.services = services or _no_services
        self.client = client or WebhookClient()
        self.hooks: list[InterpreterHook] = []
        self.watched: list[Any] = []  # informers feeding on_event and the customizations (their owner starts them)
        self._configurations: dict[str, Mapping[str, Any]] = {}

    # -- configurations --------------------------------------------------------------------
    def on_event(self, event: str, obj: Obj, old: Obj | None = None) -> None:
        """Informer handler for ResourceInterpreterWebhookConfigurations."""
        name = str((obj.get("metadata") or {}).get("name", ""))
        if event == "DELETED":
            self._configurations.pop(name, None)
        else:
            self._configurations[name] = obj
        self.hooks = hooks_of(self._configurations.values())

    def load(self, configurations: Iterable[Mapping[str, Any]]) -> None:
        """Replace every configuration (for callers without an informer)."""
        self._configurations = {str((c.get("metadata") or {}).get("name", "")): c for c in configurations}
        self.hooks = hooks_of(self._configurations.values())

    async def wait_synced(self, timeout: float) -> None:
        """Wait until customizations and configurations are listed (both known before the first answer)."""
        for informer in self.watched:
            await informer.wait_synced(timeout)

    def webhook(self, api_version: str, kind: str, operation: Operation) -> InterpreterHook | None:
        """The hook answering ``operation`` for the kind (None when a customization answers first, or none does)."""
        if self.customized.customization(api_version, kind, operation) is not None:
            return None
        return first_relevant(self.hooks, api_version, kind, operation)

    def hook_enabled(self, api_version: str, kind: str, operation: Operation) -> bool:
        """Whether some layer answers ``operation`` for the kind."""
        return (
            self.customized.hook_enabled(api_version, kind, operation)
            or first_relevant(self.hooks, api_version, kind, operation) is not None
        )

    # -- one call ----------------------------------------------------------------------------
    async def _url(self, hook: InterpreterHook) -> str:
        config = hook.client_config
        service = config.get("service")
        if isinstance(service, Mapping):  # the Service takes precedence over a URL, as in Karmada
            namespace, name = str(service.get("namespace", "")), str(service.get("name", ""))
            try:
                return service_url(service, await self.services(namespace, name))
            except ValueError as exc:
                raise hook.error(f"could not get REST client: {exc}") from None
        url = config.get("url")
        if not url:
            raise hook.error("could not get REST client: clientConfig has neither url nor service")
        return str(url)

    async def call(self, hook: InterpreterHook, attributes: Attributes) -> Response:
        """Ask ``hook`` and check its answer."""
        uid = str(uuid.uuid4())
        body = context_request(hook, attributes, uid)
        answer = await self.client.post(hook, await self._url(hook), body)
        return verify_response(hook, uid, attributes.operation, answer)

    # -- the operations ------------------------------------------------------------------------
    async def a_get_replicas(self, obj: Mapping[str, Any]) -> tuple[int, ReplicaRequirements | None]:
        """InterpretReplica."""
        hook = self.webhook(*_gvk(obj), Operation.INTERPRET_REPLICA)
        if hook is None:
            return self.customized.get_replicas(obj)
        response = await self.call(hook, Attributes(Operation.INTERPRET_REPLICA, obj))
        return response.replicas, response.replica_requirements

    async def a_revise_replica(self, obj: Mapping[str, Any], count: int) -> Obj:
        """ReviseReplica (the webhook answers with a JSON patch)."""
        hook = self.webhook(*_gvk(obj), Operation.REVISE_REPLICA)
        if hook is None:
            return self.customized.revise_replica(obj, count)
        response = await self.call(hook, Attributes(Operation.REVISE_REPLICA, obj, replicas=count))
        return patched(hook, obj, response)

    async def reviser(self, template: Mapping[str, Any], counts: Iterable[int]) -> Any:
        """What Work rendering revises replicas with: the synchronous layers, or, when a webhook
        answers for the kind, its answers for ``counts`` asked now, concurrently."""
        if self.webhook(*_gvk(template), Operation.REVISE_REPLICA) is None:
            return self.customized
        wanted = sorted(set(counts))
        answers = await asyncio.gather(*(self.a_revise_replica(template, n) for n in wanted), return_exceptions=True)
        revised: dict[int, Obj | Exception] = {}
        for count, answer in zip(wanted, answers, strict=True):
            if isinstance(answer, BaseException) and not isinstance(answer, Exception):
                raise answer  # cancellation goes on up
            revised[count] = answer
        return RevisedReplicas(revised)

    async def a_retain(self, desired: Mapping[str, Any], observed: Mapping[str, Any]) -> Obj:
        """Retain (the webhook answers with a JSON patch of the desired object)."""
        hook = self.webhook(*_gvk(desired), Operation.RETAIN)
        if hook is None:
            return self.customized.retain(desired, observed)
        response = await self.call(hook, Attributes(Operation.RETAIN, desired, observed=observed))
        return patched(hook, desired, response)

    async def a_aggregate_status(
        self, template: Mapping[str, Any], items: Sequence[AggregatedStatusItem], now: str
    ) -> Obj:
        """AggregateStatus (the webhook answers with a JSON patch of the template)."""
        hook = self.webhook(*_gvk(template), Operation.AGGREGATE_STATUS)
        if hook is None:
            return self.customized.aggregate_status(template, items, now)
        entries = [item.to_dict() for item in items]
        response = await self.call(hook, Attributes(Operation.AGGREGATE_STATUS, template, aggregated_status=entries))
        return patched(hook, template, response)

    async def a_reflect_status(self, obj: Mapping[str, Any]) -> Obj | None:
        """InterpretStatus (the webhook's rawStatus)."""
        hook = self.webhook(*_gvk(obj), Operation.INTERPRET_STATUS)
        if hook is None:
            return self.customized.reflect_status(obj)
        response = await self.call(hook, Attributes(Operation.INTERPRET_STATUS, obj))
        raw = response.raw_status
        if not isinstance(raw, dict):
            raise hook.error(f"{INVALID}response.rawStatus is {type(raw).__name__}, not an object")
        return raw

    async def a_interpret_health(self, obj: Mapping[str, Any]) -> bool:
        """InterpretHealth."""
        hook = self.webhook(*_gvk(obj), Operation.INTERPRET_HEALTH)
        if hook is None:
            return self.customized.interpret_health(obj)
        return (await self.call(hook, Attributes(Operation.INTERPRET_HEALTH, obj))).healthy

    async def a_get_dependencies(self, obj: Mapping[str, Any]) -> list[DependentObjectReference]:
        """InterpretDependency (sorted, as the other layers answer)."""
        hook = self.webhook(*_gvk(obj), Operation.INTERPRET_DEPENDENCY)
        if hook is None:
            return self.customized.get_dependencies(obj)
        from karmada.interpreter.dependencies import sort_key

        response = await self.call(hook, Attributes(Operation.INTERPRET_DEPENDENCY, obj))
        return sorted(response.dependencies, key=sort_key)

    async def close(self) -> None:
        """End the HTTP session."""
        await self.client.close()
