"""``localkube``: command-line entry point of the single-process API server."""

from __future__ import annotations

import argparse

from localkube import __version__


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; ``serve`` and its options arrive with the server."""
    parser = argparse.ArgumentParser(
        prog="localkube",
        description=(
            "A single-process Kubernetes API server (in memory, optionally persisted) that the real"
            " kubectl and Kubernetes clients accept: the engine of the sandbox and of the tests."
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
