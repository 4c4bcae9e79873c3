"""``join`` / ``unjoin``: a member cluster in Push mode, and undo it. Both run
against the control plane (``--kubeconfig``/``--context``); the member is
``--cluster-kubeconfig``/``--cluster-context``."""

from __future__ import annotations

import argparse
from typing import Any

from kubectl_karmada.errors import CommandError, run_async
from kubectl_karmada.flags import add_common, add_output, control_plane_kubeconfig, duration


def add(commands: Any) -> None:
    parser = commands.add_parser(
        "join",
        help="join a member cluster to Karmada in push mode",
        description=(
            "Join the member cluster of --cluster-kubeconfig/--cluster-context as NAME: the control plane\n"
            "then applies its Works and collects its status itself, with a service account created in the\n"
            "member (namespace karmada-cluster) whose token is stored in the Secret karmada-cluster/NAME."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common(parser)
    parser.add_argument("name", metavar="NAME", help="the cluster's name in Karmada")
    parser.add_argument("--cluster-kubeconfig", required=True, metavar="PATH", help="kubeconfig of the member")
    parser.add_argument("--cluster-context", metavar="NAME", help="context in --cluster-kubeconfig")
    parser.add_argument("--cluster-namespace", default="karmada-cluster", help="(karmada-cluster)")
    parser.add_argument("--cluster-provider", default="", help="provider recorded on the Cluster")
    parser.add_argument("--cluster-region", default="", help="region recorded on the Cluster")
    parser.add_argument("--cluster-zones", default="", metavar="ZONES", help="zones recorded on the Cluster (a,b)")
    parser.add_argument("--dry-run", action="store_true", help="check and print what would be created, change nothing")
    add_output(parser, ("yaml", "json", "name"))
    parser.set_defaults(run=_run_join)

    undo = commands.add_parser(
        "unjoin",
        help="remove a push-mode member cluster from Karmada",
        description=(
            "Delete the Cluster NAME (the control plane first removes what its Works created in the member),\n"
            "its Secrets, and, given --cluster-kubeconfig, the service accounts and RBAC join created there."
        ),
    )
    add_common(undo)
    undo.add_argument("name", metavar="NAME", help="the cluster's name in Karmada")
    undo.add_argument("--cluster-kubeconfig", metavar="PATH", help="kubeconfig of the member")
    undo.add_argument("--cluster-context", metavar="NAME", help="context in --cluster-kubeconfig")
    undo.add_argument("--cluster-namespace", default="karmada-cluster", help="(karmada-cluster)")
    undo.add_argument("--wait", type=duration, default=60.0, metavar="DURATION", help="wait for removals (60s)")
    undo.add_argument("--dry-run", action="store_true", help="say what would be removed, change nothing")
    undo.set_defaults(run=_run_unjoin)


def _say(line: str) -> None:
    print(line, flush=True)


def _run_join(args: argparse.Namespace) -> int:
    from karmada.kube import KubeClient, from_kubeconfig
    from karmada.registration.join import JoinError, JoinOptions, join
    from kubectl_karmada.output import render_objects

    async def main() -> int:
        control_config = from_kubeconfig(control_plane_kubeconfig(args), getattr(args, "context", None))
        member_config = from_kubeconfig(args.cluster_kubeconfig, args.cluster_context)
        options = JoinOptions(
            cluster_name=args.name,
            cluster_namespace=args.cluster_namespace,
            provider=args.cluster_provider,
            region=args.cluster_region,
            zones=[z for z in args.cluster_zones.split(",") if z],
            dry_run=args.dry_run,
        )
        async with KubeClient(control_config) as control_plane, KubeClient(member_config) as member:
            try:
                objects = await join(control_plane, member, member_config, options, _say)
            except JoinError as exc:
                raise CommandError(str(exc)) from None
        if args.dry_run:
            text = render_objects(objects, args.output)
            if text is None:
                text = "".join(
                    f"{o['kind'].lower()}/{o['metadata']['name']} would be created (dry run)\n" for o in objects
                )
            print(text, end="")
        return 0

    return run_async(main)


def _run_unjoin(args: argparse.Namespace) -> int:
    from karmada.kube import KubeClient, from_kubeconfig
    from karmada.registration.join import JoinError, unjoin

    async def main() -> int:
        control_config = from_kubeconfig(control_plane_kubeconfig(args), getattr(args, "context", None))
        async with KubeClient(control_config) as control_plane:
            member = None
            if args.cluster_kubeconfig:
                member = KubeClient(from_kubeconfig(args.cluster_kubeconfig, args.cluster_context))
            try:
                await unjoin(
                    control_plane,
                    member,
                    args.name,
                    _say,
                    cluster_namespace=args.cluster_namespace,
                    wait=args.wait,
                    dry_run=args.dry_run,
                )
            except JoinError as exc:
                raise CommandError(str(exc)) from None
            finally:
                if member is not None:
                    await member.close()
        return 0

    return run_async(main)
