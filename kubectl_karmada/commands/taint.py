"""``taint clusters``, ``cordon``, ``uncordon``: steer scheduling away from clusters."""

from __future__ import annotations

import argparse
from typing import Any

from kubectl_karmada.errors import CommandError, run_async
from kubectl_karmada.flags import add_common, add_output, control_plane

CLUSTER_TYPES = ("cluster", "clusters", "cluster.cluster.karmada.io")


def add(commands: Any) -> None:
    parser = commands.add_parser(
        "taint",
        help="update the taints on member clusters",
        description=(
            "Add, change or remove taints of a Cluster, with kubectl's taint syntax:\n"
            "  kubectl karmada taint clusters member1 dedicated=batch:NoSchedule\n"
            "  kubectl karmada taint clusters member1 dedicated:NoSchedule-        (remove one)\n"
            "  kubectl karmada taint clusters member1 dedicated=batch:NoSchedule-  (the same; the value is ignored)\n"
            "  kubectl karmada taint clusters member1 dedicated-                   (remove every effect)\n"
            "  kubectl karmada taint clusters member1 member2 gpu:NoExecute        (several clusters)\n"
            "Effects: NoSchedule, PreferNoSchedule, NoExecute (NoExecute evicts when failover is enabled)."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common(parser)
    # one list, split as kubectl splits it: resources first, then anything with "=", ":" or a trailing "-"
    parser.add_argument("arguments", nargs="+", metavar="clusters NAME... KEY[=VALUE]:EFFECT|KEY[:EFFECT]-")
    parser.add_argument("--overwrite", action="store_true", help="replace taints with the same key and effect")
    parser.add_argument("--dry-run", nargs="?", const="client", default="none", choices=("none", "client", "server"))
    add_output(parser, ("yaml", "json", "name"))
    parser.set_defaults(run=_run_taint)
    for verb, on in (("cordon", True), ("uncordon", False)):
        cmd = commands.add_parser(
            verb,
            help=f"mark a cluster as {'unschedulable' if on else 'schedulable'}",
            description=(
                f"{'Add' if on else 'Remove'} the taint cluster.karmada.io/unschedulable:NoSchedule "
                f"{'to' if on else 'from'} the Cluster."
            ),
        )
        add_common(cmd)
        cmd.add_argument("name", metavar="CLUSTER")
        cmd.add_argument("--dry-run", nargs="?", const="client", default="none", choices=("none", "client", "server"))
        cmd.set_defaults(run=_run_cordon, on=on)


def _run_taint(args: argparse.Namespace) -> int:
    from karmada.cluster_admin import taint
    from karmada.clusters.taints import TaintError, parse_taints, split_arguments
    from karmada.kube import KubeClient
    from kubectl_karmada.output import render_objects

    async def main() -> int:
        try:
            resources, specs = split_arguments(args.arguments)
            changes = parse_taints(specs)
        except TaintError as exc:
            raise CommandError(f"{exc}\nSee 'kubectl karmada taint -h' for help and examples") from None
        if resources[0].lower() not in CLUSTER_TYPES:
            raise CommandError(f"invalid resource type {resources[0].lower()}, only cluster types are supported")
        names = resources[1:]
        if not names:
            raise CommandError("at least one resource name must be specified")
        async with KubeClient(control_plane(args)) as client:
            for name in names:
                try:
                    operation, stored = await taint(
                        client, name, changes, overwrite=args.overwrite, dry_run=args.dry_run != "none"
                    )
                except TaintError as exc:
                    raise CommandError(str(exc)) from None
                text = (
                    render_objects([stored], args.output, single=True) if stored is not None and args.output else None
                )
                suffix = " (dry run)" if args.dry_run != "none" else ""
                print(text if text is not None else f"cluster/{name} {operation}{suffix}", end="" if text else "\n")
        return 0

    return run_async(main)


def _run_cordon(args: argparse.Namespace) -> int:
    from karmada.cluster_admin import cordon
    from karmada.kube import KubeClient

    async def main() -> int:
        async with KubeClient(control_plane(args)) as client:
            changed = await cordon(client, args.name, on=args.on, dry_run=args.dry_run != "none")
        word = "cordon" if args.on else "uncordon"
        suffix = " (dry run)" if args.dry_run != "none" else ""
        print(f"{args.name} cluster {word}ed{suffix}" if changed else f"{args.name} cluster already {word}ed")
        return 0

    return run_async(main)
