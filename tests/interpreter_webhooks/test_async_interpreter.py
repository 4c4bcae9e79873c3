"""AsyncInterpreter against a real interpreter webhook over TLS: Karmada's precedence
(customization, webhook, third-party, native), configurations applied and removed
at run time, and the failures a caller sees (wrong CA, nothing listening, timeout)."""

from __future__ import annotations

import asyncio
import base64
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp import web

from karmada.api.binding import AggregatedStatusItem
from karmada.install.webhook import new_certificates
from karmada.interpreter.native import Operation
from karmada.interpreter.webhook import WebhookError
from karmada.interpreter_webhooks import AsyncInterpreter, RevisedReplicas
from tests.interpreter_webhooks.hookserver import HookServer
from tests.servers import plain_http

WORKLOAD = {
    "apiVersion": "workloads.example.io/v1",
    "kind": "Workload",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {"size": 4},
}


@pytest.fixture(scope="module")
def hook() -> Iterator[HookServer]:
    server = HookServer().start()
    yield server
    server.stop()


def configuration(name: str, url: str, ca_bundle: str, *, kinds: list[str], timeout: int | None = None) -> Any:
    webhook: dict[str, Any] = {
        "name": f"{name}.example.io",
        "clientConfig": {"url": url, "caBundle": ca_bundle},
        "rules": [{"operations": ["*"], "apiGroups": ["workloads.example.io"], "apiVersions": ["*"], "kinds": kinds}],
        "interpreterContextVersions": ["v1alpha1"],
    }
    if timeout is not None:
        webhook["timeoutSeconds"] = timeout
    return {"metadata": {"name": name}, "webhooks": [webhook]}


async def test_the_webhook_answers_between_customizations_and_the_native_rules(hook: HookServer) -> None:
    interpreter = AsyncInterpreter()
    try:
        assert not interpreter.hook_enabled("workloads.example.io/v1", "Workload", Operation.INTERPRET_REPLICA)
        interpreter.on_event("ADDED", configuration("workloads", hook.url, hook.ca_bundle, kinds=["Workload"]))
        assert interpreter.hook_enabled("workloads.example.io/v1", "Workload", Operation.INTERPRET_REPLICA)

        replicas, requirements = await interpreter.a_get_replicas(WORKLOAD)
        assert replicas == 4
        assert requirements is not None and requirements.to_dict() == {"resourceRequest": {"cpu": "250m"}}
        revised = await interpreter.a_revise_replica(WORKLOAD, 1)
        assert revised["spec"] == {"size": 1} and WORKLOAD["spec"] == {"size": 4}
        observed = {**WORKLOAD, "status": {"ready": 4}}
        assert await interpreter.a_reflect_status(observed) == {"ready": 4}
        assert await interpreter.a_interpret_health(observed) is True
        assert await interpreter.a_interpret_health({**WORKLOAD, "status": {"ready": 1}}) is False

        retained = await interpreter.a_retain(WORKLOAD, {**WORKLOAD, "spec": {"size": 1, "paused": True}})
        assert retained["spec"] == {"size": 4, "paused": True}
        assert await interpreter.a_retain(WORKLOAD, WORKLOAD) == WORKLOAD  # no patch: as desired
        with_config = {**WORKLOAD, "spec": {"size": 4, "configName": "web-config"}}
        (dependency,) = await interpreter.a_get_dependencies(with_config)
        assert (dependency.kind, dependency.namespace, dependency.name) == ("ConfigMap", "default", "web-config")
        assert await interpreter.a_get_dependencies(WORKLOAD) == []
        aggregated = await interpreter.a_aggregate_status(
            WORKLOAD,
            [
                AggregatedStatusItem.from_dict({"clusterName": "m1", "status": {"ready": 1}, "applied": True}),
                AggregatedStatusItem.from_dict({"clusterName": "m2", "status": {"ready": 2}, "applied": True}),
            ],
            "2026-01-01T00:00:00Z",
        )
        assert aggregated["status"] == {"ready": 3}

        # the rendering's reviser: one call per distinct count, asked together
        before = len(hook.seen)
        reviser = await interpreter.reviser(WORKLOAD, [1, 3, 1])
        assert isinstance(reviser, RevisedReplicas)
        assert len(hook.seen) - before == 2
        assert reviser.revise_replica(WORKLOAD, 3)["spec"]["size"] == 3

        # a customization with a script for the operation answers first; the webhook is not asked
        interpreter.customized.apply(
            {
                "metadata": {"name": "workloads"},
                "spec": {
                    "target": {"apiVersion": "workloads.example.io/v1", "kind": "Workload"},
                    "customizations": {"replicaResource": {"luaScript": "function GetReplicas(obj) return 7, nil end"}},
                },
            }
        )
        before = len(hook.seen)
        assert await interpreter.a_get_replicas(WORKLOAD) == (7, None)
        assert len(hook.seen) == before
        assert (await interpreter.a_revise_replica(WORKLOAD, 2))["spec"]["size"] == 2  # still the webhook's
        assert len(hook.seen) == before + 1

        # a deleted configuration: the native rules again (a Deployment-less kind has no replicas hook)
        interpreter.on_event("DELETED", configuration("workloads", hook.url, hook.ca_bundle, kinds=["Workload"]))
        interpreter.customized.remove("workloads")
        assert not interpreter.hook_enabled("workloads.example.io/v1", "Workload", Operation.INTERPRET_REPLICA)
        assert await interpreter.reviser(WORKLOAD, [1]) is interpreter.customized
    finally:
        await interpreter.close()


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


async def test_failures_name_the_webhook(hook: HookServer) -> None:
    interpreter = AsyncInterpreter()
    other_ca = base64.b64encode(new_certificates().ca_cert).decode()  # a CA that did not sign the hook's certificate
    nobody = f"https://127.0.0.1:{_closed_port()}/interpret"
    interpreter.load(
        [
            configuration("a-untrusted", hook.url, other_ca, kinds=["Workload"]),
            configuration("b-down", nobody, hook.ca_bundle, kinds=["Gadget"]),
        ]
    )
    try:
        with pytest.raises(
            WebhookError,
            match=r'failed calling webhook "a-untrusted/a-untrusted.example.io": failed to call webhook: .*certificate',
        ):
            await interpreter.a_get_replicas(WORKLOAD)
        gadget = {**WORKLOAD, "kind": "Gadget"}
        with pytest.raises(
            WebhookError, match=r'failed calling webhook "b-down/b-down.example.io": failed to call webhook: Post'
        ):
            await interpreter.a_get_replicas(gadget)
        # a failing revision fails its cluster's Work alone, when rendered
        reviser = await interpreter.reviser(gadget, [2])
        with pytest.raises(WebhookError):
            reviser.revise_replica(gadget, 2)
    finally:
        await interpreter.close()


async def test_a_slow_webhook_times_out() -> None:
    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(2.5)
        return web.json_response({})

    app = web.Application()
    app.router.add_post("/interpret", slow)
    async with plain_http(app) as url:
        interpreter = AsyncInterpreter()
        interpreter.load([configuration("slow", f"{url}/interpret", "", kinds=["Workload"], timeout=1)])
        try:
            with pytest.raises(
                WebhookError,
                match=r'"slow/slow.example.io": failed to call webhook: .*context deadline exceeded \(1s\)',
            ):
                await interpreter.a_get_replicas(WORKLOAD)
        finally:
            await interpreter.close()
