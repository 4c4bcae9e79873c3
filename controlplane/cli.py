"""``karmada-controlplane``: command-line entry point of the control plane."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from controlplane.options import add_flags, from_args
from karmada.version import __version__


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, with Karmada's flag names and defaults."""
    parser = argparse.ArgumentParser(
        prog="karmada-controlplane",
        description=(
            "Run Karmada's control-plane controllers against a control-plane API server whose state is\n"
            "Karmada's CRDs (install them with `kubectl karmada init`): the cluster controller (execution\n"
            "namespaces, taints, clean removal), the health monitor of pull clusters, and the approver of\n"
            "agent certificates, which also creates each agent's narrowly scoped RBAC."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    add_flags(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the control plane until SIGTERM/SIGINT; returns the exit code."""
    from karmada.kube import ConfigError, KubeClient
    from karmada.kube.config import from_flags
    from karmada.program import run_until_stopped, setup_logging

    args = build_parser().parse_args(argv)
    options = from_args(args)
    setup_logging(options.verbosity)
    try:
        config = from_flags(options.kubeconfig, options.context)
    except (ConfigError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1

    if options.cluster_proxy_bind_address:
        from controlplane.cluster_proxy import check_tls_files

        problem = check_tls_files(options)
        if problem:
            print(f"error: {problem}", file=sys.stderr)
            return 2

    async def run(stop: asyncio.Event) -> int:
        from controlplane.cluster_proxy import serve_cluster_proxy
        from controlplane.manager import ControlPlane
        from karmada.health_server import Health, serve
        from karmada.metrics import serve as serve_metrics

        async with KubeClient(config) as client:
            logging.getLogger("controlplane").info("karmada-controlplane %s serving %s", __version__, config.server)
            controlplane = ControlPlane(client, options)
            health = Health()
            health.add_readiness("leader-or-standby-synced", controlplane.ready)
            async with (
                serve(health, options.health_probe_bind_address, "karmada-controlplane"),
                serve_metrics(options.metrics_bind_address, "karmada-controlplane"),
                serve_cluster_proxy(
                    client,
                    options.cluster_proxy_bind_address,
                    options.cluster_proxy_tls_cert_file,
                    options.cluster_proxy_tls_private_key_file,
                    options.cluster_proxy_client_ca_file,
                    options.cluster_proxy_response_timeout,
                ),
            ):
                await controlplane.run(stop)
        return 0

    return run_until_stopped(run)
