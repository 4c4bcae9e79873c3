"""``karmada-controlplane``: command-line entry point of the control plane."""

from __future__ import annotations

import argparse

from karmada.version import __version__


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; options are added as controllers arrive."""
    parser = argparse.ArgumentParser(
        prog="karmada-controlplane",
        description=(
            "Run Karmada's control-plane controllers (detector, scheduler, binding, cluster health,"
            " failover, dependencies) against a control-plane API server whose state is Karmada's CRDs."
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
