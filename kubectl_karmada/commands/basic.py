"""``validate``: a command that needs no server."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def add(commands: Any) -> None:
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


def _read(name: str) -> str:
    return sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")


def _run_validate(args: argparse.Namespace) -> int:
    from karmada.api.parse import check_documents

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
