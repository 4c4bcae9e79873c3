"""``top clusters`` (resources from each Cluster's resource summary) and
``top pods -C`` (the members' metrics API, where the member is reachable)."""

from __future__ import annotations

import argparse
from typing import Any

from kubectl_karmada.errors import CommandError, run_async
from kubectl_karmada.flags import add_common, control_plane, namespace_of

Obj = dict[str, Any]


def add(commands: Any) -> None:
    from kubectl_karmada.commands.get import add_cluster_flags

    top = commands.add_parser("top", help="display resource usage of member clusters and their pods")
    verbs = top.add_subparsers(dest="top_command", metavar="COMMAND")
    clusters = verbs.add_parser(
        "clusters",
        aliases=["cluster"],
        help="CPU, memory and pods of each member: allocatable, allocated, available",
        description=(
            "Each Cluster's resources as its agent reports them (status.resourceSummary): allocatable of all\n"
            "nodes, allocated to scheduled and pending pods, and what is left."
        ),
    )
    add_common(clusters)
    clusters.add_argument("names", nargs="*", metavar="CLUSTER")
    clusters.set_defaults(run=_run_clusters)
    pods = verbs.add_parser(
        "pods",
        aliases=["pod"],
        help="CPU and memory of pods in member clusters (metrics.k8s.io of each member)",
    )
    add_common(pods)
    pods.add_argument("name", nargs="?", metavar="NAME")
    add_cluster_flags(pods)
    pods.add_argument("-n", "--namespace", metavar="NS", help="namespace (default: the context's, else default)")
    pods.add_argument("-A", "--all-namespaces", action="store_true")
    pods.add_argument("-l", "--selector", default="", metavar="SELECTOR")
    pods.set_defaults(run=_run_pods)
    top.set_defaults(run=lambda _: (top.print_help(), 1)[1])


def _run_clusters(args: argparse.Namespace) -> int:
    from karmada.inspection import cluster_usage_rows
    from karmada.inspection.top import HEADER
    from karmada.kube import KubeClient
    from karmada.kube.resources import CLUSTERS
    from kubectl_karmada.output import table

    async def main() -> int:
        async with KubeClient(control_plane(args)) as client:
            clusters = list((await client.list(CLUSTERS)).get("items") or [])
        if args.names:
            missing = [n for n in args.names if n not in {c["metadata"]["name"] for c in clusters}]
            if missing:
                raise CommandError(f"clusters don't exist: {','.join(missing)}")
            clusters = [c for c in clusters if c["metadata"]["name"] in args.names]
        if not clusters:
            raise CommandError("no member clusters registered")
        print(table(HEADER, cluster_usage_rows(clusters)), end="")
        return 0

    return run_async(main)


def _cpu(value: str) -> str:
    from karmada.quantity import parse

    return f"{int(parse(value) * 1000)}m"


def _memory(value: str) -> str:
    from karmada.quantity import parse

    return f"{int(parse(value) / (1024 * 1024))}Mi"


def _run_pods(args: argparse.Namespace) -> int:
    import asyncio

    from karmada.kube import KubeClient, KubeError, Resource
    from kubectl_karmada.multicluster import cluster_names, member_access
    from kubectl_karmada.output import table

    metrics = Resource("metrics.k8s.io", "v1beta1", "pods", "PodMetrics", True)

    async def main() -> int:
        if not args.clusters and not args.all_clusters:
            raise CommandError("name member clusters with -C (or --all-clusters): pod metrics live in the members")
        async with KubeClient(control_plane(args)) as client:
            members = await member_access(args, client)
            names = await cluster_names(client, args)
        namespace = None if args.all_namespaces else namespace_of(args)
        failed = False
        rows: list[list[str]] = []

        async def one(cluster: str) -> list[list[str]]:
            config = members.config_for(cluster)
            if config is None:
                raise CommandError(
                    f"cluster({cluster}) is not reachable from here (pull mode, no kubeconfig context named "
                    f"{cluster}; see --members-kubeconfig)"
                )
            async with KubeClient(config, timeout=15) as member:
                try:
                    if args.name:
                        items = [await member.get(metrics, args.name, namespace)]
                    else:
                        params = {"labelSelector": args.selector} if args.selector else {}
                        items = list((await member.list(metrics, namespace, **params)).get("items") or [])
                except KubeError as exc:
                    if exc.not_found and not args.name:
                        raise CommandError(f"cluster({cluster}): Metrics API not available") from None
                    raise CommandError(f"cluster({cluster}): {exc.message}") from None
            found = []
            for item in items:
                containers = item.get("containers") or []
                from karmada.quantity import parse

                cpu = sum((parse((c.get("usage") or {}).get("cpu", "0")) for c in containers), start=parse("0"))
                memory = sum((parse((c.get("usage") or {}).get("memory", "0")) for c in containers), start=parse("0"))
                row = [item["metadata"]["name"], cluster, _cpu(str(float(cpu))), _memory(str(int(memory)))]
                if args.all_namespaces:
                    row.insert(0, item["metadata"].get("namespace", ""))
                found.append(row)
            return found

        results = await asyncio.gather(*(one(c) for c in names), return_exceptions=True)
        for result in results:
            if isinstance(result, CommandError):
                print(f"error: {result}", file=__import__("sys").stderr)
                failed = True
            elif isinstance(result, BaseException):
                raise result
            else:
                rows.extend(result)
        if rows:
            header = ["NAME", "CLUSTER", "CPU(cores)", "MEMORY(bytes)"]
            if args.all_namespaces:
                header.insert(0, "NAMESPACE")
            print(table(header, rows), end="")
        return 1 if failed else 0

    return run_async(main)
