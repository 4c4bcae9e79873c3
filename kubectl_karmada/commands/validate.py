"""``validate``: Karmada YAML checked offline, by the API models and by karmada-webhook's rules."""

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
            "Validate every Karmada object in the given YAML files without a server: first against Karmada's API\n"
            "(types, enums, required and unknown fields, each error naming the field path), then by the rules\n"
            "karmada-webhook applies on create (e.g. clusterAffinity with clusterAffinities, a spreadByField\n"
            "without a cluster constraint, Lua scripts that do not compile), with the webhook's message.\n"
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
    from karmada.validation.offline import check_with_rules

    failed = False
    for name in args.filename:
        try:
            text = _read(name)
        except OSError as exc:
            print(f"error: {name}: {exc.strerror}", file=sys.stderr)
            failed = True
            continue
        for check in check_with_rules(text):
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
