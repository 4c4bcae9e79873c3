"""``karmada-agent``: command-line entry point of the member-cluster agent."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys

from agent.options import add_flags, from_args
from karmada.version import __version__


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, with Karmada's flag names and defaults."""
    parser = argparse.ArgumentParser(
        prog="karmada-agent",
        description=(
            "Run in a member cluster: keep this cluster's Cluster object and status current on the Karmada\n"
            "control plane, renew its heartbeat Lease, and renew its own client certificate before expiry.\n"
            "All traffic is outbound HTTPS to the control plane, so clusters behind NAT work."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    add_flags(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the agent until SIGTERM/SIGINT; returns the exit code."""
    from karmada.kube import ConfigError, KubeClient
    from karmada.kube.config import from_flags
    from karmada.program import run_until_stopped, setup_logging

    args = build_parser().parse_args(argv)
    options = from_args(args)
    setup_logging(options.verbosity)
    log = logging.getLogger("agent")
    try:
        member_config = from_flags(options.kubeconfig, options.context)
    except (ConfigError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1

    async def run(stop: asyncio.Event) -> int:
        from agent.credentials import ControlPlaneCredentials, CredentialsError
        from agent.manager import Agent
        from karmada.health_server import Health, serve
        from karmada.kube import KubeError
        from karmada.metrics import serve as serve_metrics

        agents: list[Agent] = []  # the agent, once the control plane's credentials are loaded
        health = Health()
        health.add_readiness("registered-synced", lambda: bool(agents) and agents[0].ready())
        async with (
            serve(health, options.health_probe_bind_address, "karmada-agent"),
            serve_metrics(options.metrics_bind_address, "karmada-agent"),
            KubeClient(member_config) as member,
        ):
            while not stop.is_set():
                try:
                    credentials = await ControlPlaneCredentials.load(
                        member,
                        options.karmada_kubeconfig,
                        options.karmada_context,
                        options.karmada_kubeconfig_namespace,
                    )
                    break
                except (CredentialsError, KubeError) as exc:
                    log.warning("control-plane credentials: %s; retrying in 5s", exc)
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(5):
                            await stop.wait()
            else:
                return 0
            async with KubeClient(credentials.config()) as control_plane:
                log.info(
                    "karmada-agent %s for cluster %s, control plane %s",
                    __version__,
                    options.cluster_name,
                    control_plane.config.server,
                )
                agents.append(Agent(options, member, control_plane, credentials))
                await agents[0].run(stop)
        return 0

    return run_until_stopped(run)
