"""``localkube``: command-line entry point of the single-process API server."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from pathlib import Path

from localkube import __version__


def build_parser() -> argparse.ArgumentParser:
    """``localkube serve`` and its options."""
    parser = argparse.ArgumentParser(
        prog="localkube",
        description=(
            "A single-process Kubernetes API server (in memory, optionally persisted) that the real"
            " kubectl and Kubernetes clients accept: the engine of the sandbox and of the tests."
        ),
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve = commands.add_parser(
        "serve",
        help="serve the Kubernetes API over HTTPS",
        description="Serve the Kubernetes API over HTTPS with a generated CA and write an admin kubeconfig.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=6443, help="port to listen on (0 = any free port; default 6443)")
    serve.add_argument("--data-dir", type=Path, help="keep the CA and all objects here across restarts")
    serve.add_argument("--kubeconfig-out", type=Path, help="write an admin kubeconfig (user in system:masters) here")
    serve.add_argument(
        "--extra-san", action="append", default=[], help="another host name or IP for the serving certificate"
    )
    serve.add_argument("--watch-history", type=int, default=2000, help="events kept per resource for watch resumption")
    serve.add_argument("-v", "--verbose", action="store_true", help="log every request")
    return parser


async def _serve(args: argparse.Namespace) -> int:
    from localkube.server import LocalKube, ServerConfig

    hosts = list(dict.fromkeys(["127.0.0.1", "localhost", args.host, *args.extra_san]))
    config = ServerConfig(
        host=args.host, port=args.port, data_dir=args.data_dir, hosts=hosts, history=args.watch_history
    )
    server = LocalKube(config)
    await server.start()
    if args.kubeconfig_out:
        server.write_kubeconfig(args.kubeconfig_out)
    print(f"localkube serving on {server.url}", flush=True)
    if args.kubeconfig_out:
        print(f"admin kubeconfig: {args.kubeconfig_out}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run ``localkube``; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command != "serve":
        parser.print_help()
        return 0
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING, format="%(asctime)s %(name)s %(message)s"
    )
    try:
        return asyncio.run(_serve(args))
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
