"""``karmada-cluster-proxy``: the cluster proxy as a program of its own.

``karmada-controlplane --cluster-proxy-bind-address`` serves the proxy inside the
control plane, which suits one replica (the sandbox). A host install runs two
control-plane replicas behind one Service; an agent's tunnel would land on one
of them and a caller's request on either, so there the proxy runs as this
program in a Deployment of one replica: every tunnel and every request meet in
the same process. A restart or a new node costs each agent one reconnection
(backoff with jitter), nothing else: the proxy keeps no state.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from controlplane.options import add_proxy_flags, proxy_files_missing
from karmada.metrics import add_serving_flags
from karmada.version import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="karmada-cluster-proxy",
        description=(
            "Serve Karmada's cluster proxy, /apis/cluster.karmada.io/v1alpha1/clusters/NAME/proxy/..., over HTTPS:\n"
            "callers authenticated and authorised by the Karmada API server (TokenReview, SubjectAccessReview of\n"
            "clusters/proxy), Pull members reached over the tunnels their agents dial to /tunnel/NAME, Push\n"
            "members directly with their impersonator token."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--kubeconfig", help="kubeconfig of the Karmada API server (default: in-cluster)")
    parser.add_argument("--context", help="kubeconfig context to use")
    add_proxy_flags(parser, bind_default=":8443")
    add_serving_flags(parser, probe_default=":10358")
    parser.add_argument("--v", "-v", dest="verbosity", type=int, default=2, help="log verbosity (2)")
    return parser


def main(argv: list[str] | None = None) -> int:
    from controlplane.cluster_proxy import check_tls_files, serve_cluster_proxy
    from karmada.health_server import Health, serve
    from karmada.kube import ConfigError, KubeClient
    from karmada.kube.config import from_flags
    from karmada.metrics import serve as serve_metrics
    from karmada.program import run_until_stopped, setup_logging

    parser = build_parser()
    args = parser.parse_args(argv)
    missing = proxy_files_missing(args)
    if missing:
        parser.error(f"the cluster proxy needs {', '.join(missing)}")
    setup_logging(args.verbosity)
    problem = check_tls_files(args)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    try:
        config = from_flags(args.kubeconfig, args.context)
    except (ConfigError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1

    async def run(stop: asyncio.Event) -> int:
        async with KubeClient(config) as client:
            logging.getLogger("controlplane").info("karmada-cluster-proxy %s for %s", __version__, config.server)
            health = Health()
            async with (
                serve(health, args.health_probe_bind_address, "karmada-cluster-proxy"),
                serve_metrics(args.metrics_bind_address, "karmada-cluster-proxy"),
                serve_cluster_proxy(
                    client,
                    args.cluster_proxy_bind_address,
                    args.cluster_proxy_tls_cert_file,
                    args.cluster_proxy_tls_private_key_file,
                    args.cluster_proxy_client_ca_file,
                    args.cluster_proxy_response_timeout,
                ),
            ):
                await stop.wait()
        return 0

    return run_until_stopped(run)
