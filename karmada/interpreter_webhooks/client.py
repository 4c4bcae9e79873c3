"""The HTTP of interpreter webhooks: one POST of a ``ResourceInterpreterContext``.

A webhook is a user's server, not an API server, so this is not
:mod:`karmada.kube`. One aiohttp session serves every hook of a process (made
on first use, in the event loop that calls); each hook's TLS context is built
once per ``caBundle`` (the system roots when it has none). The call is bounded
by the hook's ``timeoutSeconds`` and tells the server so with ``?timeout=Ns``,
as Karmada's REST client does. Any failure (refused, timed out, a non-2xx
answer, a body that is not JSON) is a :class:`~karmada.interpreter.webhook.WebhookError`
worded as Karmada's ``failed to call webhook: ...``.
"""

from __future__ import annotations

import base64
import binascii
import json
import ssl
from typing import Any

import aiohttp

from karmada.interpreter.webhook import InterpreterHook


class WebhookClient:
    """POSTs interpreter requests; :meth:`close` ends its session."""

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None
        self._contexts: dict[str, ssl.SSLContext] = {}

    def _ssl(self, ca_bundle: str) -> ssl.SSLContext:
        context = self._contexts.get(ca_bundle)
        if context is None:
            if ca_bundle:
                try:
                    pem = base64.b64decode(ca_bundle, validate=True).decode()
                except (binascii.Error, UnicodeDecodeError):
                    raise ValueError("clientConfig.caBundle is not base64 PEM") from None
                context = ssl.create_default_context(cadata=pem)
            else:
                context = ssl.create_default_context()
            self._contexts[ca_bundle] = context
        return context

    async def post(self, hook: InterpreterHook, url: str, body: Any) -> Any:
        """The decoded JSON answer of the hook at ``url`` to ``body``."""
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession()
        try:
            context = self._ssl(str(hook.client_config.get("caBundle") or "")) if url.startswith("https:") else None
        except (ValueError, ssl.SSLError) as exc:
            raise hook.error(f"could not get REST client: {exc}") from None
        timeout = hook.timeout_seconds
        try:
            async with self._session.post(
                url,
                data=json.dumps(body),
                params={"timeout": f"{timeout}s"},
                headers={"Content-Type": "application/json", "Accept": "application/json"},
                ssl=context if context is not None else True,
                timeout=aiohttp.ClientTimeout(total=timeout),
            ) as response:
                text = await response.text()
                if response.status >= 300:
                    raise hook.error(f"failed to call webhook: the server responded {response.status}: {text[:512]}")
        except TimeoutError:  # before OSError, its base class
            raise hook.error(f"failed to call webhook: Post {url!r}: context deadline exceeded ({timeout}s)") from None
        except (aiohttp.ClientError, OSError) as exc:
            raise hook.error(f"failed to call webhook: Post {url!r}: {exc}") from None
        try:
            return json.loads(text)
        except ValueError as exc:
            raise hook.error(f"failed to call webhook: the answer is not JSON: {exc}") from None

    async def close(self) -> None:
        """End the session (a later call opens a new one)."""
        if self._session is not None:
            await self._session.close()
            self._session = None
