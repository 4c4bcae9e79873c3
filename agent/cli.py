"""``karmada-agent``: command-line entry point of the member-cluster agent."""

from __future__ import annotations

import argparse

from karmada.version import __version__


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; options are added as the agent's controllers arrive."""
    parser = argparse.ArgumentParser(
        prog="karmada-agent",
        description=(
            "Run in a member cluster: register it with the Karmada control plane, renew its Lease,"
            " report its status, and apply the Works addressed to it (outbound HTTPS only)."
        ),
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parse arguments; print help when there is nothing to run yet."""
    parser = build_parser()
    parser.parse_args(argv)
    parser.print_help()
    return 0
