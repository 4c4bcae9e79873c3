"""Cost of one admission-webhook call from localkube.

Run: ``python -m benchmarks.webhook_call_bench [--calls N]``. A webhook server (aiohttp
over TLS, its own CA, in a child process so that this process's CPU time is
the client's alone) answers every AdmissionReview with ``allowed: true``;
``N`` calls (default 2,000) go through :func:`localkube.webhook_client.post_review`,
one at a time and then 16 at a time, as kube-apiserver calls karmada-webhook
for every Work write. Printed: calls per second, client CPU per call, and the
connections the server accepted (one TLS handshake each).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import multiprocessing
import ssl
import tempfile
import time
from pathlib import Path
from typing import Any

from aiohttp import web

from localkube.pki import CertificateAuthority, cert_pem
from localkube.webhook_client import WebhookClients, post_review

CALLS = 2000
PARALLEL = 16


def serve(directory: str, ready: Any, accepted: Any) -> None:
    """The webhook server (in the child process): answers allowed, counts accepted connections."""

    async def review(request: web.Request) -> web.Response:
        req = (await request.json())["request"]
        answer = {"uid": req["uid"], "allowed": True}
        return web.json_response({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": answer})

    async def main() -> None:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(Path(directory) / "hook.crt", Path(directory) / "hook.key")
        app = web.Application()
        app.router.add_post("/review", review)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        handler = runner.server
        assert handler is not None

        def connection() -> Any:
            with accepted.get_lock():
                accepted.value += 1
            return handler()

        server = await asyncio.get_running_loop().create_server(connection, "127.0.0.1", 0, ssl=context)
        ready.put(server.sockets[0].getsockname()[1])
        await asyncio.Event().wait()

    asyncio.run(main())


def body() -> bytes:
    request = {"uid": "u", "kind": {"group": "work.karmada.io", "version": "v1alpha1", "kind": "Work"}}
    request["object"] = {"metadata": {"name": "w", "namespace": "karmada-es-member1"}, "spec": {"workload": {}}}
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}).encode()


async def run(url: str, ca_bundle: str, calls: int, parallel: int) -> tuple[float, float]:
    """(calls per second, client CPU milliseconds per call) of ``calls`` calls, ``parallel`` at a time."""
    clients = WebhookClients()
    payload = body()
    semaphore = asyncio.Semaphore(parallel)

    async def one() -> None:
        async with semaphore:
            await post_review(url, "", ca_bundle, 10, payload, clients)

    await one()  # the first handshake is not what is measured
    wall, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one() for _ in range(calls)))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    await clients.close()
    return calls / wall, cpu / calls * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=CALLS, help="calls per run (default %(default)s)")
    calls = parser.parse_args().calls
    with tempfile.TemporaryDirectory() as directory:
        ca = CertificateAuthority.create()
        cert, key = ca.issue_server(["127.0.0.1"])
        (Path(directory) / "hook.crt").write_bytes(cert)
        (Path(directory) / "hook.key").write_bytes(key)
        ready: Any = multiprocessing.Queue()
        accepted: Any = multiprocessing.Value("i", 0)
        server = multiprocessing.Process(target=serve, args=(directory, ready, accepted), daemon=True)
        server.start()
        try:
            url = f"https://127.0.0.1:{ready.get(timeout=30)}/review"
            ca_bundle = base64.b64encode(cert_pem(ca.cert)).decode()
            for parallel in (1, PARALLEL):
                before = accepted.value
                rate, cpu = asyncio.run(run(url, ca_bundle, calls, parallel))
                print(
                    f"{calls} webhook calls, {parallel:>2} at a time: {rate:6.0f} calls/s, "
                    f"{cpu:5.2f} ms client CPU per call, {accepted.value - before:>4} connections accepted"
                )
        finally:
            server.terminate()
            server.join()


if __name__ == "__main__":
    main()
