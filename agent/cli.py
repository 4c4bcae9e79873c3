"""``karmada-agent``: command-line entry point of the member-cluster agent.

One agent (``--cluster-name``), as every real member cluster runs it, or,
for simulating many clusters on one machine, many agents in this one process
(``--fleet FILE`` or ``--clusters N``; see :mod:`agent.fleet`).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from agent.fleet import FleetError, add_fleet_flags, agent_options, is_fleet
from agent.options import Options, add_flags, from_args
from karmada.version import __version__

# agents of a fleet that list and watch their caches at once (the rest wait their turn)
FLEET_STARTUP_CONCURRENCY = 10


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, with Karmada's flag names and defaults."""
    parser = argparse.ArgumentParser(
        prog="karmada-agent",
        description=(
            "Run in a member cluster: keep this cluster's Cluster object and status current on the Karmada\n"
            "control plane, renew its heartbeat Lease, and renew its own client certificate before expiry.\n"
            "All traffic is outbound HTTPS to the control plane, so clusters behind NAT work.\n\n"
            "--fleet and --clusters run many agents in one process to simulate many member clusters on one\n"
            "machine; a real cluster runs one agent of its own."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    add_flags(parser)
    add_fleet_flags(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the agent(s) until SIGTERM/SIGINT; returns the exit code."""
    from karmada.kube import ConfigError
    from karmada.kube.config import from_flags
    from karmada.program import run_until_stopped, setup_logging

    parser = build_parser()
    args = parser.parse_args(argv)
    if is_fleet(args):
        try:
            fleet = agent_options(parser, args)
        except FleetError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        options = from_args(args)
    else:
        if not args.cluster_name:
            parser.error("the following arguments are required: --cluster-name (or --fleet, --clusters)")
        options = from_args(args)
        fleet = [options]
        try:
            from_flags(options.kubeconfig, options.context)
        except (ConfigError, OSError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    setup_logging(options.verbosity)
    if is_fleet(args):
        from agent.fleet import name_clusters_in_logs

        name_clusters_in_logs()
    return run_until_stopped(lambda stop: _run(options, fleet, single=not is_fleet(args), stop=stop))


async def _run(process: Options, fleet: list[Options], *, single: bool, stop: asyncio.Event) -> int:
    from agent.runner import AgentRunner
    from karmada.health_server import Health, serve
    from karmada.metrics import serve as serve_metrics

    startup = None if single else asyncio.Semaphore(FLEET_STARTUP_CONCURRENCY)
    runners = [AgentRunner(options, startup=startup) for options in fleet]
    health = Health()
    if single:
        health.add_readiness("registered-synced", runners[0].ready)
    else:
        for runner in runners:
            health.add_readiness(runner.name, runner.working, runner.state)
    async with (
        serve(health, process.health_probe_bind_address, "karmada-agent"),
        serve_metrics(process.metrics_bind_address, "karmada-agent"),
    ):
        if single:
            await runners[0].run_once(stop)
            return 0
        logging.getLogger("agent").info("karmada-agent %s: %d agents in this process", __version__, len(runners))
        await asyncio.gather(*(runner.run_supervised(stop) for runner in runners))
    return 0
