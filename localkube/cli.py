"""``localkube``: command-line entry point of the single-process API server."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from localkube import __version__
from localkube.flowcontrol import MAX_MUTATING_REQUESTS_INFLIGHT, MAX_REQUESTS_INFLIGHT

if TYPE_CHECKING:
    from localkube.fleet import ClusterSpec
    from localkube.server import LocalKube, ServerConfig


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
        description=(
            "Serve the Kubernetes API over HTTPS with a generated CA and write an admin kubeconfig."
            " With --clusters or --fleet, serve many independent clusters from this one process."
        ),
        epilog=(
            "Many clusters in one process (--clusters, --fleet) is for simulation: it lets one machine play"
            " hundreds of member clusters. Each is a whole API server on its own port (its own objects, CA,"
            " serving certificate, service-account key, watches and simulated nodes) and accepts no other's"
            " credentials, but they share one CPU and fail together. One process per cluster, the default,"
            " is what real clusters look like. Every other flag applies to every cluster. A fleet file is"
            ' JSON: {"clusters": [{"name": "member1", "port": 41001, "dataDir": "/abs/member1",'
            ' "kubeconfigOut": "/abs/member1/admin.kubeconfig", "nodeNamePrefix": "member1"}, ...]}'
            " (port 0 = any free port; the last three optional, relative paths relative to the file)."
            " Output: one line per cluster as it serves, 'localkube serving on https://HOST:PORT as NAME',"
            " then 'localkube fleet serving N clusters'."
        ),
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument(
        "--port",
        type=int,
        help="port to listen on (0 = any free port; default 6443); with --clusters the first of N consecutive ports",
    )
    serve.add_argument(
        "--data-dir",
        type=Path,
        help="keep the CA, the service-account key and all objects here across restarts (with --clusters: DIR/NAME)",
    )
    serve.add_argument(
        "--kubeconfig-out",
        type=Path,
        help="write an admin kubeconfig (user in system:masters) here (with --clusters: DIR/NAME.kubeconfig)",
    )
    fleet = serve.add_argument_group("many clusters in one process (simulation only)")
    fleet.add_argument(
        "--clusters", type=int, metavar="N", help="serve N clusters PREFIX1..PREFIXN on ports PORT..PORT+N-1"
    )
    fleet.add_argument("--cluster-name-prefix", default="member", metavar="PREFIX", help="names of --clusters (member)")
    fleet.add_argument(
        "--fleet",
        type=Path,
        metavar="FILE",
        help="serve the clusters a JSON fleet file lists (see below); not with --port, --data-dir, --kubeconfig-out",
    )
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
    serve.add_argument(
        "--node-name-prefix",
        default="node",
        help="simulated nodes are PREFIX-1..N (node; a fleet entry's nodeNamePrefix wins)",
    )
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
    serve.add_argument(
        "--max-requests-inflight",
        type=int,
        default=MAX_REQUESTS_INFLIGHT,
        metavar="N",
        help=(
            "with --max-mutating-requests-inflight, the seats API Priority and Fairness shares among its"
            f" priority levels (default {MAX_REQUESTS_INFLIGHT}; kube-apiserver's is 400, but every seat here"
            " runs on one event loop)"
        ),
    )
    serve.add_argument(
        "--max-mutating-requests-inflight",
        type=int,
        default=MAX_MUTATING_REQUESTS_INFLIGHT,
        metavar="N",
        help=f"added to --max-requests-inflight (default {MAX_MUTATING_REQUESTS_INFLIGHT}; kube-apiserver's is 200)",
    )
    serve.add_argument("-v", "--verbose", action="store_true", help="log every request")
    return parser


def _config(args: argparse.Namespace, port: int, data_dir: Path | None, node_prefix: str) -> ServerConfig:
    from localkube.server import ServerConfig
    from localkube.simulation import SimulationConfig

    hosts = list(dict.fromkeys(["127.0.0.1", "localhost", args.host, *args.extra_san]))
    simulation = SimulationConfig(
        nodes=args.simulate_nodes,
        node_cpu=args.node_cpu,
        node_memory=args.node_memory,
        node_pods=args.node_pods,
        node_prefix=node_prefix,
        workloads=args.simulate_workloads,
        shutdown_seconds=args.pod_shutdown_seconds,
    )
    return ServerConfig(
        host=args.host,
        port=port,
        data_dir=data_dir,
        hosts=hosts,
        history=args.watch_history,
        simulation=simulation,
        max_requests_inflight=args.max_requests_inflight,
        max_mutating_requests_inflight=args.max_mutating_requests_inflight,
    )


def _stop_signals() -> asyncio.Event:
    """An event set by SIGINT or SIGTERM (handled from now on)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    return stop


async def _until_stopped() -> None:
    await _stop_signals().wait()


async def _serve(args: argparse.Namespace) -> int:
    from localkube.server import LocalKube

    server = LocalKube(_config(args, 6443 if args.port is None else args.port, args.data_dir, args.node_name_prefix))
    await server.start()
    if args.kubeconfig_out:
        server.write_kubeconfig(args.kubeconfig_out)
    print(f"localkube serving on {server.url}", flush=True)
    if args.kubeconfig_out:
        print(f"admin kubeconfig: {args.kubeconfig_out}", flush=True)
    await _until_stopped()
    await server.stop()
    return 0


def _fleet_specs(args: argparse.Namespace) -> list[ClusterSpec]:
    from localkube.fleet import FleetError, load_fleet, numbered

    if args.fleet is not None:
        given = [
            flag
            for flag, value in (
                ("--port", args.port),
                ("--data-dir", args.data_dir),
                ("--kubeconfig-out", args.kubeconfig_out),
                ("--clusters", args.clusters),
            )
            if value is not None
        ]
        if given:
            raise FleetError(f"{given[0]}: not with --fleet (the fleet file sets it per cluster)")
        return load_fleet(args.fleet)
    base = 6443 if args.port is None else args.port
    return numbered(args.clusters, args.cluster_name_prefix, base, args.data_dir, args.kubeconfig_out)


async def _serve_fleet(args: argparse.Namespace) -> int:
    from localkube.fleet import Fleet

    specs = _fleet_specs(args)
    fleet = Fleet(
        specs,
        lambda spec: _config(args, spec.port, spec.data_dir, spec.node_name_prefix or args.node_name_prefix),
    )

    def serving(spec: ClusterSpec, server: LocalKube) -> None:
        print(f"localkube serving on {server.url} as {spec.name}", flush=True)

    # a signal during the start stops what has started
    stopping = _stop_signals()
    starting = asyncio.create_task(fleet.start(serving))
    stopped = asyncio.create_task(stopping.wait())
    done, _ = await asyncio.wait({starting, stopped}, return_when=asyncio.FIRST_COMPLETED)
    if starting in done:
        starting.result()  # a cluster that could not start fails the whole fleet
        print(f"localkube fleet serving {len(specs)} clusters", flush=True)
        await stopped
    else:
        starting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await starting
        stopped.cancel()
    await fleet.stop()
    return 0


# asyncio gives every TLS connection a zeroed 256 KiB read buffer: 2,000 agents' watches and
# renewals on one control plane, or a fleet's members, would hold half a GiB in buffers alone.
# One TLS record carries at most 16 KiB, so a 32 KiB read loses nothing but a little batching.
TLS_READ_BUFFER = 32 * 1024


def _small_tls_buffers() -> None:
    """Set the read buffer of this process's TLS connections (a serving process only: the
    library leaves the interpreter's defaults alone)."""
    from asyncio import sslproto

    sslproto.SSLProtocol.max_size = TLS_READ_BUFFER


def main(argv: list[str] | None = None) -> int:
    """Run ``localkube``; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command != "serve":
        parser.print_help()
        return 0
    _small_tls_buffers()
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING, format="%(asctime)s %(name)s %(message)s"
    )
    from localkube.fleet import FleetError
    from localkube.loop_stalls import watched

    if args.cluster_name_prefix != "member" and args.clusters is None:
        parser.error("--cluster-name-prefix: only with --clusters")
    for flag in ("max_requests_inflight", "max_mutating_requests_inflight"):
        if getattr(args, flag) < 1:
            parser.error(f"--{flag.replace('_', '-')}: must be at least 1, not {getattr(args, flag)}")
    try:
        if args.clusters is not None or args.fleet is not None:
            return asyncio.run(watched(_serve_fleet(args)))
        return asyncio.run(watched(_serve(args)))
    except FleetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
