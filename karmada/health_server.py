"""Health probes of the three programs: ``/healthz`` (the event loop answers) and
``/readyz`` (every readiness check passes), over plain HTTP on the address of
Karmada's ``--health-probe-bind-address`` flag (``0`` disables them).

Readiness checks are plain callables the program registers (the control plane:
standby, or leading with its caches synced; the agent: registered, and caches
synced while leading). A failing ``/readyz`` names the checks that fail, as
Kubernetes' own ``/readyz`` does (``[-]name failed``).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import logging
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # aiohttp is imported when serving, so the flag parsers stay light
    from aiohttp import web

log = logging.getLogger("health")

__all__ = ["Health", "parse_bind_address", "probe_address", "serve"]


def parse_bind_address(text: str) -> tuple[str | None, int] | None:
    """``host:port``, ``:port`` (every interface) or ``[v6]:port``; ``0`` disables (None).

    >>> parse_bind_address(":10357")
    (None, 10357)
    """
    text = text.strip()
    if text == "0":
        return None
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) < 65536:
        raise ValueError(f"invalid --health-probe-bind-address {text!r}: want host:port, :port or 0")
    host = host.removeprefix("[").removesuffix("]")
    return (host or None), int(port)


def probe_address(text: str) -> str:
    """argparse type of ``--health-probe-bind-address``: checked, kept as written."""
    try:
        parse_bind_address(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


class Health:
    """The named readiness checks of one program."""

    def __init__(self) -> None:
        self._checks: dict[str, Callable[[], bool]] = {}
        self._details: dict[str, Callable[[], str]] = {}

    def add_readiness(self, name: str, check: Callable[[], bool], detail: Callable[[], str] | None = None) -> None:
        """``detail``, when given, says why a failing check fails (appended to its verbose line)."""
        self._checks[name] = check
        if detail is not None:
            self._details[name] = detail

    def failing(self) -> list[str]:
        """Names of the checks that fail now (a check that raises fails)."""
        failed = []
        for name, check in self._checks.items():
            try:
                ok = check()
            except Exception:
                log.exception("readiness check %s raised", name)
                ok = False
            if not ok:
                failed.append(name)
        return failed

    def report(self) -> tuple[bool, str]:
        failed = set(self.failing())
        lines = [self._line(name, name in failed) for name in self._checks]
        lines.append("readyz check failed" if failed else "readyz check passed")
        return not failed, "\n".join(lines) + "\n"

    def _line(self, name: str, failed: bool) -> str:
        if not failed:
            return f"[+]{name} ok"
        detail = self._details.get(name)
        if detail is None:
            return f"[-]{name} failed"
        try:
            reason = detail()
        except Exception:
            log.exception("readiness detail %s raised", name)
            reason = ""
        return f"[-]{name} failed: {reason}" if reason else f"[-]{name} failed"

    def app(self) -> web.Application:
        from aiohttp import web

        async def healthz(_: web.Request) -> web.Response:
            return web.Response(text="ok")

        async def readyz(request: web.Request) -> web.Response:
            ok, text = self.report()
            if ok and "verbose" not in request.query:
                text = "ok"
            return web.Response(text=text, status=200 if ok else 500)

        app = web.Application()
        app.router.add_get("/healthz", healthz)
        app.router.add_get("/readyz", readyz)
        return app


@contextlib.asynccontextmanager
async def serve(health: Health, bind_address: str, program: str) -> AsyncIterator[int | None]:
    """Serve ``health`` while the block runs; yields the bound port (None when disabled).

    An address already in use is logged and the program goes on without probes:
    several programs share one host in the sandbox, and a Pod whose probes are
    not served is restarted by its kubelet anyway."""
    address = parse_bind_address(bind_address)
    if address is None:
        yield None
        return
    from aiohttp import web

    runner = web.AppRunner(health.app(), access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, address[0], address[1])
        try:
            await site.start()
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise
            log.error("%s: health probes not served: %s is in use", program, bind_address)
            yield None
            return
        server = site._server  # aiohttp keeps the listening sockets here; port 0 needs the real one
        sockets = getattr(server, "sockets", None) or []
        port = sockets[0].getsockname()[1] if sockets else address[1]
        log.info("%s: health probes on %s (port %d)", program, bind_address, port)
        yield port
    finally:
        await runner.cleanup()
