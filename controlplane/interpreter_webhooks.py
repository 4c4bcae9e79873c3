"""The control plane's awaitable interpreter: customizations, interpreter webhooks, the rest.

One :class:`~karmada.interpreter_webhooks.AsyncInterpreter` per control plane
(per shared informer factory), over the shared
:func:`controlplane.interpreter.interpreter_for`. It follows the
ResourceInterpreterWebhookConfigurations through the shared informer, so a
configuration applied, changed or deleted takes effect on the next
interpretation, with no restart. A ``clientConfig.service`` is looked up in a
Services cache made on the first call that needs one (most control planes
never watch Services). The HTTP session closes with the manager's
background loops, when leadership ends.
"""

from __future__ import annotations

import asyncio
from weakref import WeakKeyDictionary

from controlplane.context import Context
from controlplane.interpreter import interpreter_for
from karmada.interpreter_webhooks import AsyncInterpreter
from karmada.kube import Informer
from karmada.kube.informer_factory import InformerFactory
from karmada.kube.resources import RESOURCE_INTERPRETER_WEBHOOK_CONFIGURATIONS, Resource

SERVICES = Resource("", "v1", "services", "Service", True)
SYNC_TIMEOUT = 60.0

_shared: WeakKeyDictionary[InformerFactory, AsyncInterpreter] = WeakKeyDictionary()


def async_interpreter_for(context: Context) -> AsyncInterpreter:
    """The control plane's interpreter with webhooks (made, and its configurations watched, on first use)."""
    informers = context.informers
    found = _shared.get(informers)
    if found is not None:
        return found
    services: list[Informer] = []

    async def service(namespace: str, name: str) -> dict[str, object] | None:
        if not services:
            services.append(informers.informer(SERVICES))
        await services[0].wait_synced(SYNC_TIMEOUT)
        return services[0].get(name, namespace)

    found = AsyncInterpreter(interpreter_for(informers), services=service)
    configurations = informers.informer(RESOURCE_INTERPRETER_WEBHOOK_CONFIGURATIONS)
    configurations.add_handler(found.on_event)
    found.watched = [w for w in (found.customized.watched, configurations) if w is not None]
    interpreter = found

    async def close_on_stop() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            await interpreter.close()

    context.background.append(("interpreter-webhooks", close_on_stop))
    _shared[informers] = found
    return found
