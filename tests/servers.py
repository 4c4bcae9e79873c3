"""Running localkube for tests: in a thread of its own, so that blocking callers
(the real kubectl in a subprocess) and asyncio clients can both talk to it."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import ssl
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import aiohttp
import yaml
from aiohttp import web
from multidict import CIMultiDict

from localkube.server import LocalKube, ServerConfig
from tests.programs import kubectl, run


class ServerThread:
    """A LocalKube serving from a background thread until :meth:`stop`."""

    def __init__(self, config: ServerConfig | None = None) -> None:
        self.server = LocalKube(config or ServerConfig())
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="localkube", daemon=True)

    def start(self) -> ServerThread:
        self._thread.start()
        self.call(self.server.start())
        return self

    def call(self, coroutine: Any) -> Any:
        """Run a coroutine on the server's loop and wait for its result."""
        future: Future[Any] = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        return future.result(timeout=30)

    def run_sync(self, fn: Any, *args: Any) -> Any:
        """Run a plain function on the server's loop (it touches loop-owned state)."""

        async def wrapper() -> Any:
            return fn(*args)

        return self.call(wrapper())

    def stop(self) -> None:
        self.call(self.server.stop())

        async def cancel_rest() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        self.call(cancel_rest())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    @property
    def url(self) -> str:
        return self.server.url

    def kubeconfig(self, directory: Path, user: str = "kubernetes-admin", groups: list[str] | None = None) -> Path:
        name = user.replace(":", "_")
        port = self.url.rsplit(":", 1)[1]
        path = directory / f"{name}-{port}.kubeconfig"  # one file per server and user
        if not path.exists():
            self.run_sync(lambda: self.server.write_kubeconfig(path, user=user, groups=groups))
        return path


class Kubectl:
    """The real kubectl bound to one kubeconfig."""

    def __init__(self, kubeconfig: Path, cache_dir: Path) -> None:
        self.kubeconfig = kubeconfig
        self.cache_dir = cache_dir

    def __call__(self, *args: str, stdin: str | None = None, check: bool = True, timeout: float = 30) -> Any:
        command = [kubectl(), f"--kubeconfig={self.kubeconfig}", f"--cache-dir={self.cache_dir}", *args]
        result = run(command, stdin=stdin, timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({result.returncode}):\n{result.stderr}")
        return result


def env_with_kubeconfig(path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["KUBECONFIG"] = str(path)
    return env


def start_server(**config: Any) -> Iterator[ServerThread]:
    thread = ServerThread(ServerConfig(**config)).start()
    try:
        yield thread
    finally:
        thread.stop()


class Raw:
    """Plain HTTPS calls with the admin client certificate."""

    def __init__(self, server: ServerThread, kubeconfig: Path) -> None:
        data = yaml.safe_load(kubeconfig.read_text())
        directory = kubeconfig.parent
        user = data["users"][0]["user"]
        (directory / "raw.crt").write_bytes(base64.b64decode(user["client-certificate-data"]))
        (directory / "raw.key").write_bytes(base64.b64decode(user["client-key-data"]))
        self.context = ssl.create_default_context(cadata=server.server.ca_pem().decode())
        self.context.load_cert_chain(directory / "raw.crt", directory / "raw.key")
        self.anonymous = ssl.create_default_context(cadata=server.server.ca_pem().decode())
        self.url = server.url

    async def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str = "",
        anonymous: bool = False,
        content_type: str = "application/json",
        extra_headers: Sequence[tuple[str, str]] = (),
    ) -> tuple[int, Any, dict[str, str]]:
        headers = CIMultiDict({"Content-Type": content_type})
        headers.extend(extra_headers)  # a name may repeat (Impersonate-Group)
        if token:
            headers["Authorization"] = f"Bearer {token}"
        context = self.anonymous if (anonymous or token) else self.context
        async with (
            aiohttp.ClientSession() as session,
            session.request(
                method, self.url + path, data=None if body is None else json.dumps(body), headers=headers, ssl=context
            ) as response,
        ):
            text = await response.text()
            try:
                payload = json.loads(text)
            except ValueError:
                payload = text
            return response.status, payload, dict(response.headers)

    async def watch(self, path: str, seconds: float) -> tuple[int, list[dict[str, Any]]]:
        """The HTTP status and every event of a watch on ``path`` (its query included) read
        for ``seconds``."""
        events: list[dict[str, Any]] = []
        async with aiohttp.ClientSession() as session, session.get(self.url + path, ssl=self.context) as response:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(seconds):
                    async for line in response.content:
                        events.append(json.loads(line))
            status = response.status
        await asyncio.sleep(0.05)  # the stream was cut: let its TLS shutdown finish
        return status, events


class Plugin:
    """``kubectl karmada ...`` through the real kubectl, flags after the command
    (kubectl refuses flags placed before a plugin's name)."""

    def __init__(self, kubeconfig: Path | None = None) -> None:
        self.kubeconfig = kubeconfig

    def __call__(self, *args: str, stdin: str | None = None, check: bool = True, timeout: float = 60) -> Any:
        command = [kubectl(), "karmada", *args]
        if self.kubeconfig is not None:
            command.append(f"--kubeconfig={self.kubeconfig}")
        result = run(command, stdin=stdin, timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl karmada {' '.join(args)} failed ({result.returncode}):\n{result.stderr}")
        return result


@contextlib.asynccontextmanager
async def plain_http(app: web.Application) -> AsyncIterator[str]:
    """``app`` served over plain HTTP on a free loopback port while the block runs: its URL."""
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()
