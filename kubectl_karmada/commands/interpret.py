"""``kubectl karmada interpret -f OBJECT --operation OP``: run the resource interpreter
offline on objects from files (no API server), printing karmadactl's result format:
``---`` and ``# [i/n] name:`` before each result's YAML.

The interpreter is the control plane's: ``--customization FILE`` (repeatable) loads
ResourceInterpreterCustomizations whose Lua scripts answer first, then the built-in
third-party customizations, then Karmada's native rules.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kubectl_karmada.errors import CommandError

OPERATIONS = (
    "InterpretReplica",
    "ReviseReplica",
    "Retain",
    "AggregateStatus",
    "InterpretStatus",
    "InterpretHealth",
    "InterpretDependency",
)


def add(commands: Any) -> None:
    parser = commands.add_parser(
        "interpret",
        help="run a resource interpreter operation offline",
        description=(
            "Run one resource interpreter operation on an object from a file, as the control plane would,\n"
            "without an API server. -f is the resource template (for Retain: the desired object).\n"
            "  kubectl karmada interpret -f deployment.yaml --operation InterpretReplica\n"
            "  kubectl karmada interpret -f deployment.yaml --operation ReviseReplica --desired-replica 2\n"
            "  kubectl karmada interpret -f desired.yaml --operation Retain --observed observed.yaml\n"
            "  kubectl karmada interpret -f deployment.yaml --operation AggregateStatus --status items.yaml\n"
            "  kubectl karmada interpret -f observed.yaml --operation InterpretHealth\n"
            f"Operations: {', '.join(OPERATIONS)} (karmadactl's interpretReplica spelling works too)."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-f", "--filename", required=True, metavar="FILE", help="the object ('-' reads stdin)")
    parser.add_argument("--operation", required=True, metavar="OPERATION", help="|".join(OPERATIONS))
    parser.add_argument("--observed", metavar="FILE", help="Retain: the object as observed in the member cluster")
    parser.add_argument(
        "--status", metavar="FILE", help="AggregateStatus: AggregatedStatusItems (a list, or documents)"
    )
    parser.add_argument("--desired-replica", type=int, metavar="N", help="ReviseReplica: the replicas to set")
    parser.add_argument(
        "--customization",
        action="append",
        default=[],
        metavar="FILE",
        help="ResourceInterpreterCustomization(s) to use (their Lua scripts answer before the built-in rules)",
    )
    parser.set_defaults(run=_run)


def _documents(path: str) -> list[Any]:
    import yaml

    try:
        text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()  # noqa: SIM115
    except OSError as exc:
        raise CommandError(f"the path {path!r} cannot be read: {exc.strerror}") from None
    try:
        return [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        raise CommandError(f"{path}: not YAML or JSON: {exc}") from None


def _object(path: str) -> dict[str, Any]:
    documents = _documents(path)
    if not documents or not isinstance(documents[0], dict):
        raise CommandError(f"{path}: no object found")
    if len(documents) > 1:
        raise CommandError(f"{path}: holds {len(documents)} objects; interpret takes one")
    obj: dict[str, Any] = documents[0]
    return obj


def _run(args: argparse.Namespace) -> int:
    import yaml

    from karmada.explanation import InterpretError, parse_operation, run_operation, status_items
    from karmada.interpreter.customized import CustomizedInterpreter
    from karmada.timestamps import now_time

    try:
        interpreter = CustomizedInterpreter()
        for path in args.customization:
            for document in _documents(path):
                if not isinstance(document, dict) or document.get("kind") != "ResourceInterpreterCustomization":
                    raise CommandError(f"{path}: not a ResourceInterpreterCustomization")
                interpreter.apply(document)
        operation = parse_operation(args.operation)
        obj = _object(args.filename)
        observed = _object(args.observed) if args.observed else None
        status = status_items(_documents(args.status)) if args.status else None
        results = run_operation(
            interpreter,
            operation,
            obj,
            observed=observed,
            status=status,
            replica=args.desired_replica,
            now=now_time(),
        )
    except (CommandError, InterpretError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for index, (name, value) in enumerate(results, 1):
        print("---")
        print(f"# [{index}/{len(results)}] {name}:")
        # scalars as YAML prints them in a document, without the end marker safe_dump adds
        text = yaml.safe_dump(value, sort_keys=False) if isinstance(value, dict | list) else json.dumps(value) + "\n"
        print(text, end="")
    return 0
