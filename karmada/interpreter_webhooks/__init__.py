"""Interpreter webhooks at run time: the HTTP client and the awaitable interpreter.

The pure exchange (which hook, what request, what the answer means) is
:mod:`karmada.interpreter.webhook`; this package adds the I/O, so it is in no
purity contract. The control plane and the agent each wire one
:class:`AsyncInterpreter` to their informers.
"""

from karmada.interpreter_webhooks.client import WebhookClient
from karmada.interpreter_webhooks.interpreter import AsyncInterpreter, RevisedReplicas

__all__ = ["AsyncInterpreter", "RevisedReplicas", "WebhookClient"]
