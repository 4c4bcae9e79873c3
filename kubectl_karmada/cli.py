"""``kubectl karmada``: the entry point kubectl's plugin discovery runs.

kubectl finds the ``kubectl-karmada`` executable on PATH and passes it every
argument after ``karmada``. Each command is a thin shell over library calls.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from karmada.api.parse import check_documents
from karmada.version import __version__

PROG = "kubectl karmada"


def build_parser() -> argparse.ArgumentParser:
    """The plugin's argument parser, one subcommand per verb."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Manage a Karmada multi-cluster control plane: deploy once, land in the right clusters.\n"
            "Commands here work on Karmada's own API (Cluster, PropagationPolicy, OverridePolicy, ...)."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    version = commands.add_parser("version", help="print the plugin's version")
    version.set_defaults(run=_run_version)

    validate = commands.add_parser(
        "validate",
        help="check Karmada YAML (policies, overrides, clusters ...) without a server",
        description=(
            "Validate every Karmada object in the given YAML files against Karmada's API:\n"
            "types, enums, required fields and unknown fields, each error naming the field path.\n"
            "Other kinds (Deployment, ConfigMap ...) are listed and left to the API server."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    validate.add_argument(
        "-f", "--filename", action="append", required=True, metavar="FILE", help="YAML file, or - for stdin"
    )
    validate.set_defaults(run=_run_validate)
    return parser


def _run_version(_: argparse.Namespace) -> int:
    print(f"{PROG} {__version__}")
    return 0


def _read(name: str) -> str:
    return sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")


def _run_validate(args: argparse.Namespace) -> int:
    failed = False
    for name in args.filename:
        try:
            text = _read(name)
        except OSError as exc:
            print(f"error: {name}: {exc.strerror}", file=sys.stderr)
            failed = True
            continue
        for check in check_documents(text):
            what = f"{check.kind}/{check.name}" if check.kind else f"document {check.index}"
            if check.errors:
                failed = True
                for error in check.errors:
                    print(f"error: {name}: {what}: {error}", file=sys.stderr)
            elif check.karmada_kind:
                print(f"{name}: {what} valid")
            else:
                print(f"{name}: {what} skipped (not a Karmada kind)")
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``kubectl karmada`` command; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return 0
    code: int = args.run(args)
    return code
