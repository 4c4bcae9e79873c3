"""``get``: objects in the member clusters (and on the control plane) in one table.

Where each cluster's rows come from, in this order:

1. with ``--live``, every member through the cluster proxy the control plane
   publishes (``karmada-system/karmada-cluster-proxy``): as the user, so the
   member's RBAC applies; Pull members over their agent's tunnel. Not the
   default: a fleet-wide ``get`` from Work status costs the members nothing;
2. the member's own API server, through a kubeconfig context named after the
   cluster: ``--members-kubeconfig``, or, when the control plane in use is the
   sandbox's, the sandbox's ``members.config``;
3. for a Push cluster, its API server as Karmada's control plane reaches it:
   ``spec.apiEndpoint`` with the token and CA of the Secret ``spec.secretRef``;
4. otherwise the Works in ``karmada-es-<cluster>`` on the control plane: the
   manifests Karmada sent with the status the agent reported.

``--operation-scope`` is karmadactl's (``karmada`` by default, ``members`` as
soon as ``-C``/``--all-clusters`` is given). Members are read concurrently; one
that fails is reported on stderr and makes the exit code 1, the others still
print.
"""

from __future__ import annotations

import argparse
from typing import Any

from kubectl_karmada.flags import add_common, add_output

SCOPES = ("karmada", "members", "all")


def add(commands: Any) -> None:
    parser = commands.add_parser(
        "get",
        help="display resources of the Karmada control plane and of member clusters",
        description=(
            "One table of the objects of TYPE in member clusters (a CLUSTER column, then kubectl's own columns\n"
            "for the type from each member's API server, then ADOPTION: Y when Karmada manages the object).\n"
            "  kubectl karmada get deploy -A --all-clusters\n"
            "  kubectl karmada get deploy nginx -C member1,member2 -o wide\n"
            "  kubectl karmada get pods -l app=nginx --operation-scope all -C member1\n"
            "A member is read directly through a kubeconfig context named after it (--members-kubeconfig, or the\n"
            "sandbox's members.config), with --live through the cluster proxy (as you: the member's RBAC applies),\n"
            "else from the Works on the control plane, with the status its agent reported (SOURCE work-status)."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common(parser)
    parser.add_argument("type", metavar="TYPE[/NAME]", help="resource type (deploy, pods, configmaps.v1 ...)")
    parser.add_argument("names", nargs="*", metavar="NAME")
    add_cluster_flags(parser)
    parser.add_argument(
        "--operation-scope",
        choices=SCOPES,
        help="karmada, members or all (default: karmada; members when -C or --all-clusters is given)",
    )
    parser.add_argument("-n", "--namespace", metavar="NS", help="namespace (default: the context's, else default)")
    parser.add_argument("-A", "--all-namespaces", action="store_true", help="every namespace")
    parser.add_argument("-l", "--selector", default="", metavar="SELECTOR", help="label selector (app=nginx,tier!=db)")
    parser.add_argument("-w", "--watch", action="store_true", help="after listing, watch for changes")
    parser.add_argument("--ignore-not-found", action="store_true", help="a NAME found nowhere is not an error")
    parser.add_argument("--no-headers", action="store_true", help="print no header line")
    add_output(parser, ("wide", "yaml", "json", "name", "jsonpath=TEMPLATE"))
    parser.set_defaults(run=_run_get)


def add_cluster_flags(parser: argparse.ArgumentParser) -> None:
    """``-C``/``--clusters``, ``--all-clusters`` and ``--members-kubeconfig``."""
    parser.add_argument(
        "-C", "--clusters", action="append", default=[], metavar="NAMES", help="member clusters (member1,member2)"
    )
    parser.add_argument("--all-clusters", action="store_true", help="every member cluster")
    parser.add_argument(
        "--members-kubeconfig",
        metavar="PATH",
        help="kubeconfig with a context per member, named after it (default: the sandbox's members.config "
        "when the control plane is the sandbox's)",
    )
    parser.add_argument(
        "--live",
        action="store_true",
        help="read every member live through the cluster proxy, as you (the member's RBAC applies; Pull "
        "members over their agent's tunnel), instead of a members kubeconfig or Work status",
    )


def _run_get(args: argparse.Namespace) -> int:
    # the work (its dataclasses, asyncio) loads only when get runs: not for --help
    from kubectl_karmada.multicluster import run_get

    return run_get(args)
