"""``kubectl karmada``: the entry point kubectl's plugin discovery runs.

kubectl finds the ``kubectl-karmada`` executable on PATH and passes it every
argument after ``karmada``. Each command is a thin shell over library calls:
the work lives in ``karmada/`` (and the programs it starts).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from karmada.version import __version__
from kubectl_karmada.commands import (
    completion,
    describe,
    explain,
    get,
    init,
    interpret,
    join,
    local,
    promote,
    proxy,
    register,
    taint,
    token,
    top,
    validate,
    version,
)
from kubectl_karmada.flags import add_common

PROG = "kubectl karmada"
COMMAND_GROUPS = (
    version,
    validate,
    local,
    init,
    token,
    register,
    taint,
    get,
    describe,
    explain,
    interpret,
    join,
    top,
    promote,
    proxy,
    completion,
)


def build_parser() -> argparse.ArgumentParser:
    """The plugin's argument parser, one subcommand per verb."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Manage a Karmada multi-cluster control plane: deploy once, land in the right clusters.\n"
            "Commands here work on Karmada's own API (Cluster, PropagationPolicy, OverridePolicy, ...).\n"
            "Global flags (--kubeconfig, --context) go before or after the command."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    add_common(parser, top=True)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for group in COMMAND_GROUPS:
        group.add(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``kubectl karmada`` command; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return 0
    code: int = args.run(args)
    return code
