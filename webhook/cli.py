"""``karmada-webhook``: command line of the admission webhook server (Karmada's flag names)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path

from karmada.flagtypes import boolean
from karmada.metrics import add_serving_flags
from karmada.version import __version__

log = logging.getLogger("webhook")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="karmada-webhook",
        description=(
            "Serve Karmada's validating and mutating admission webhooks over HTTPS (paths /validate-<kind>\n"
            "and /mutate-<kind>, /readyz). `kubectl karmada init` registers them with the API server."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--bind-address", default="0.0.0.0", help="address to serve on (0.0.0.0)")
    parser.add_argument("--secure-port", type=int, default=8443, help="HTTPS port (8443)")
    parser.add_argument(
        "--cert-dir",
        default="/tmp/k8s-webhook-server/serving-certs",
        help="directory holding the serving certificate and key (/tmp/k8s-webhook-server/serving-certs)",
    )
    parser.add_argument("--tls-cert-file-name", default="tls.crt", help="certificate file in --cert-dir (tls.crt)")
    parser.add_argument("--tls-private-key-file-name", default="tls.key", help="key file in --cert-dir (tls.key)")
    parser.add_argument(
        "--kubeconfig",
        default=None,
        help="control-plane kubeconfig, used to list ResourceInterpreterCustomizations (else in-cluster)",
    )
    parser.add_argument("--context", default=None, help="kubeconfig context")
    parser.add_argument(
        "--allow-no-execute-taint-policy",
        type=boolean,
        nargs="?",
        const=True,
        default=False,
        metavar="BOOL",
        help="allow ClusterTaintPolicies that add NoExecute taints (which evict workloads) (false)",
    )
    add_serving_flags(parser, ":8000")
    parser.add_argument("--v", type=int, default=0, dest="verbosity", help="log verbosity (0)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Serve until SIGTERM/SIGINT; returns the exit code."""
    from aiohttp import web

    from karmada.kube import ConfigError, KubeClient
    from karmada.kube.config import from_flags
    from karmada.program import run_until_stopped, setup_logging
    from webhook.server import Settings, build_app, server_ssl_context

    args = build_parser().parse_args(argv)
    setup_logging(args.verbosity)
    cert_dir = Path(args.cert_dir)
    try:
        context = server_ssl_context(
            str(cert_dir / args.tls_cert_file_name), str(cert_dir / args.tls_private_key_file_name)
        )
    except (OSError, ValueError) as exc:
        print(f"error: cannot load the serving certificate from {cert_dir}: {exc}", file=sys.stderr)
        return 1
    try:
        config = from_flags(args.kubeconfig, args.context)
    except (ConfigError, OSError) as exc:
        config = None
        log.warning("no API server (%s): ResourceInterpreterCustomization conflicts are not checked", exc)

    async def run(stop: asyncio.Event) -> int:
        from karmada.health_server import Health, serve
        from karmada.metrics import serve as serve_metrics

        client = KubeClient(config) if config is not None else None
        settings = Settings(allow_no_execute_taint_policy=args.allow_no_execute_taint_policy, client=client)
        runner = web.AppRunner(build_app(settings), access_log=None)
        await runner.setup()
        serving: list[bool] = []  # set once the HTTPS site listens
        health = Health()
        health.add_readiness("webhook-serving", lambda: bool(serving))
        try:
            async with (
                serve(health, args.health_probe_bind_address, "karmada-webhook"),
                serve_metrics(args.metrics_bind_address, "karmada-webhook"),
            ):
                site = web.TCPSite(runner, args.bind_address, args.secure_port, ssl_context=context)
                await site.start()
                serving.append(True)
                log.warning(
                    "karmada-webhook %s serving on https://%s:%d", __version__, args.bind_address, args.secure_port
                )
                await stop.wait()
        finally:
            await runner.cleanup()
            if client is not None:
                await client.close()
        return 0

    return run_until_stopped(run)
