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
    from localkube.given_pki import GivenPKI
    from localkube.server import LocalKube, ServerConfig
    from localkube.token_file import StaticToken


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
            "Serve the Kubernetes API over HTTPS with a generated CA (or certificates and keys given as"
            " files) and write an admin kubeconfig."
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
    _pki_arguments(serve)
    serve.add_argument("-v", "--verbose", action="store_true", help="log every request")
    return parser


def _pki_arguments(serve: argparse.ArgumentParser) -> None:
    pki = serve.add_argument_group(
        "certificates and keys given as files",
        "As kube-apiserver and kube-controller-manager take them (PEM; e.g. a mounted Secret, read once at"
        " the start, never written). Each wins over what localkube makes or keeps in --data-dir; without"
        " them localkube uses its own CA and keys. A file that cannot be read or used stops the start with"
        " exit code 2. Not with --clusters or --fleet.",
    )
    pki.add_argument(
        "--tls-cert-file",
        type=Path,
        metavar="FILE",
        help=(
            "serving certificate, then any intermediates"
            " (default: one issued by the cluster CA for --host and --extra-san)"
        ),
    )
    pki.add_argument("--tls-private-key-file", type=Path, metavar="FILE", help="key of --tls-cert-file")
    pki.add_argument(
        "--client-ca-file",
        type=Path,
        metavar="FILE",
        help="CA bundle (one or more certificates) that client certificates must chain to (default: the cluster CA)",
    )
    pki.add_argument(
        "--cluster-signing-cert-file",
        type=Path,
        metavar="FILE",
        help=(
            "the cluster CA: signs approved kubernetes.io/kube-apiserver-client CSRs, the --kubeconfig-out"
            " admin certificate and the serving certificate when --tls-cert-file is absent"
            " (default: localkube's own, kept in --data-dir)"
        ),
    )
    pki.add_argument("--cluster-signing-key-file", type=Path, metavar="FILE", help="key of --cluster-signing-cert-file")
    pki.add_argument(
        "--service-account-signing-key-file",
        type=Path,
        metavar="FILE",
        help=(
            "private key (RSA, or ECDSA P-256/384/521) that signs service-account tokens"
            " (default: localkube's own HMAC key, sa.key in --data-dir)"
        ),
    )
    pki.add_argument(
        "--service-account-key-file",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help=(
            "public keys (or certificates, or private keys) that service-account tokens verify with; repeat it"
            " or put several in one file to keep a retired key's tokens valid"
            " (default: the public key of --service-account-signing-key-file)"
        ),
    )
    pki.add_argument(
        "--token-auth-file",
        type=Path,
        metavar="FILE",
        help='static bearer tokens, kube-apiserver\'s CSV: token,user,uid,"group1,group2" (one per line)',
    )


PKI_FLAGS = (
    "tls_cert_file",
    "tls_private_key_file",
    "client_ca_file",
    "cluster_signing_cert_file",
    "cluster_signing_key_file",
    "service_account_signing_key_file",
    "service_account_key_file",
    "token_auth_file",
)


class GivenFilesError(ValueError):
    """A file given by flag that localkube cannot use (exit code 2)."""


def _given_files(args: argparse.Namespace) -> tuple[GivenPKI, dict[str, StaticToken]]:
    """Read and check the files the PKI flags name, before anything starts."""
    from localkube.given_pki import GivenFileError, load_given_pki
    from localkube.token_file import TokenFileError, parse_token_csv

    try:
        pki = load_given_pki(
            tls_cert_file=args.tls_cert_file,
            tls_private_key_file=args.tls_private_key_file,
            client_ca_file=args.client_ca_file,
            cluster_signing_cert_file=args.cluster_signing_cert_file,
            cluster_signing_key_file=args.cluster_signing_key_file,
            service_account_signing_key_file=args.service_account_signing_key_file,
            service_account_key_files=args.service_account_key_file,
        )
    except GivenFileError as exc:
        raise GivenFilesError(str(exc)) from None
    tokens: dict[str, StaticToken] = {}
    if args.token_auth_file is not None:
        path = args.token_auth_file
        try:
            tokens = parse_token_csv(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise GivenFilesError(f"--token-auth-file {path}: cannot read it ({exc.strerror or exc})") from None
        except UnicodeDecodeError:
            raise GivenFilesError(f"--token-auth-file {path}: not UTF-8 text") from None
        except TokenFileError as exc:
            raise GivenFilesError(f"--token-auth-file {path}: {exc}") from None
    return pki, tokens


def _config(
    args: argparse.Namespace,
    port: int,
    data_dir: Path | None,
    node_prefix: str,
    given: tuple[GivenPKI, dict[str, StaticToken]] | None = None,
) -> ServerConfig:
    from localkube.given_pki import GivenPKI
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
    pki, tokens = given or (GivenPKI(), {})
    return ServerConfig(
        host=args.host,
        port=port,
        data_dir=data_dir,
        hosts=hosts,
        history=args.watch_history,
        static_tokens={token: (who.user, who.groups) for token, who in tokens.items()},
        static_token_uids={token: who.uid for token, who in tokens.items() if who.uid},
        pki=pki,
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


async def _serve(args: argparse.Namespace, given: tuple[GivenPKI, dict[str, StaticToken]]) -> int:
    from localkube.server import LocalKube

    port = 6443 if args.port is None else args.port
    server = LocalKube(_config(args, port, args.data_dir, args.node_name_prefix, given))
    if args.kubeconfig_out and given[0].client_ca and not any(c == server.ca.cert for c in given[0].client_ca):
        print(
            "warning: --kubeconfig-out: the admin certificate is signed by the cluster CA, which"
            " --client-ca-file does not hold: it will not authenticate",
            file=sys.stderr,
            flush=True,
        )
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
    pki_flags = [flag for flag in PKI_FLAGS if getattr(args, flag)]
    if pki_flags and (args.clusters is not None or args.fleet is not None):
        parser.error(
            f"--{pki_flags[0].replace('_', '-')}: not with --clusters or --fleet (each cluster has its own CA)"
        )
    try:
        if args.clusters is not None or args.fleet is not None:
            return asyncio.run(watched(_serve_fleet(args)))
        given = _given_files(args)  # every given file is read and checked before anything starts
        return asyncio.run(watched(_serve(args, given)))
    except GivenFilesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except FleetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
