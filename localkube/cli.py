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
    serve.add_argument(
        "--simulate-nodes", type=int, default=0, metavar="N", help="create N Ready nodes with the capacity below (0)"
    )
    serve.add_argument("--node-cpu", default="8", help="cpu of each simulated node (8)")
    serve.add_argument("--node-memory", default="32Gi", help="memory of each simulated node (32Gi)")
    serve.add_argument("--node-pods", type=int, default=110, help="pods per simulated node (110)")
    serve.add_argument("--node-name-prefix", default="node", help="simulated nodes are PREFIX-1..N (node)")
    serve.add_argument(
        "--simulate-workloads",
        action="store_true",
        help="run Deployments, StatefulSets, ReplicaSets, DaemonSets and Jobs as simulated Pods bound to nodes",
    )
    serve.add_argument(
        "--pod-shutdown-seconds",
        type=float,
        metavar="S",
        help="a deleted simulated Pod's containers exit after S seconds (default: its whole grace period)",
    )
    serve.add_argument("-v", "--verbose", action="store_true", help="log every request")
    return parser


async def _serve(args: argparse.Namespace) -> int:
    from localkube.server import LocalKube, ServerConfig
    from localkube.simulation import SimulationConfig

    hosts = list(dict.fromkeys(["127.0.0.1", "localhost", args.host, *args.extra_san]))
    simulation = SimulationConfig(
        nodes=args.simulate_nodes,
        node_cpu=args.node_cpu,
        node_memory=args.node_memory,
        node_pods=args.node_pods,
        node_prefix=args.node_name_prefix,
        workloads=args.simulate_workloads,
        shutdown_seconds=args.pod_shutdown_seconds,
    )
    config = ServerConfig(
        host=args.host,
        port=args.port,
        data_dir=args.data_dir,
        hosts=hosts,
        history=args.watch_history,
        simulation=simulation,
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
