"""A user's interpreter webhook for the tests: aiohttp over TLS (a test CA), in its own thread.

It answers ``ResourceInterpreterContext`` requests for a ``Workload`` kind whose
replica count is ``spec.size`` (a field no built-in rule knows): InterpretReplica,
ReviseReplica (a JSON patch), InterpretStatus, InterpretHealth and AggregateStatus
(a JSON patch), Retain (keeps the member's ``spec.paused``) and
InterpretDependency (``spec.configName``), and records what it was asked, so tests can see which process asked.
"""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
import tempfile
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from aiohttp import web

from karmada.install.webhook import new_certificates


def _patch(operations: list[dict[str, Any]]) -> dict[str, Any]:
    return {"patch": base64.b64encode(json.dumps(operations).encode()).decode(), "patchType": "JSONPatch"}


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """The response fields for one request (the interpreter logic of this webhook)."""
    obj = request.get("object") or {}
    operation = request["operation"]
    if operation == "InterpretReplica":
        return {"replicas": int(obj["spec"]["size"]), "replicaRequirements": {"resourceRequest": {"cpu": "250m"}}}
    if operation == "ReviseReplica":
        return _patch([{"op": "replace", "path": "/spec/size", "value": request["replicas"]}])
    if operation == "InterpretStatus":
        return {"rawStatus": {"ready": (obj.get("status") or {}).get("ready", 0)}}
    if operation == "InterpretHealth":
        return {"healthy": (obj.get("status") or {}).get("ready") == obj["spec"]["size"]}
    if operation == "AggregateStatus":
        ready = sum(int((item.get("status") or {}).get("ready", 0)) for item in request.get("aggregatedStatus") or [])
        return _patch([{"op": "add", "path": "/status", "value": {"ready": ready}}])
    if operation == "Retain":  # the member's pause switch is the member's
        paused = ((request.get("observedObject") or {}).get("spec") or {}).get("paused")
        return _patch([{"op": "add", "path": "/spec/paused", "value": paused}]) if paused is not None else {}
    if operation == "InterpretDependency":
        name = (obj.get("spec") or {}).get("configName")
        namespace = (obj.get("metadata") or {}).get("namespace")
        return {
            "dependencies": [{"apiVersion": "v1", "kind": "ConfigMap", "namespace": namespace, "name": name}]
            if name
            else []
        }
    return {}


class HookServer:
    """The webhook on 127.0.0.1 over TLS; ``ca_bundle`` is what a configuration's clientConfig carries."""

    def __init__(self) -> None:
        certificates = new_certificates()
        self.ca_bundle = base64.b64encode(certificates.ca_cert).decode()
        self._dir = tempfile.TemporaryDirectory()
        cert, key = Path(self._dir.name, "tls.crt"), Path(self._dir.name, "tls.key")
        cert.write_bytes(certificates.cert)
        key.write_bytes(certificates.key)
        self._ssl = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self._ssl.load_cert_chain(cert, key)
        self.seen: list[tuple[str, str, str]] = []  # (operation, kind, name), in arrival order
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="interpreter-webhook", daemon=True)
        self._runner: web.AppRunner | None = None

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        req = body["request"]
        self.seen.append((req["operation"], req["kind"]["kind"], req["name"]))
        response = {"uid": req["uid"], "successful": True, **answer(req)}
        return web.json_response({"apiVersion": body["apiVersion"], "kind": body["kind"], "response": response})

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_post("/interpret", self._handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=self._ssl)
        await site.start()
        self.port = self._runner.addresses[0][1]

    def start(self) -> HookServer:
        self._thread.start()
        future: Future[None] = asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        future.result(timeout=10)
        return self

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}/interpret"

    def operations(self) -> set[str]:
        return {operation for operation, _, _ in self.seen}

    async def _stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        # connections the callers kept alive go with their handlers
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.sleep(0.1)  # the closed transports' callbacks run before the loop stops

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(timeout=20)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()
        self._dir.cleanup()
