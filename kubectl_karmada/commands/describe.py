"""``describe TYPE NAME``: a resource template with its policy, binding, placement,
per-cluster Work state and the events of all of them, on one page."""

from __future__ import annotations

import argparse
from typing import Any

from kubectl_karmada.errors import CommandError, run_async
from kubectl_karmada.flags import add_common, control_plane, namespace_of

Obj = dict[str, Any]


def add(commands: Any) -> None:
    parser = commands.add_parser(
        "describe",
        help="show a resource template with its policy, binding, placement, Works and events",
        description=(
            "Everything Karmada did with one resource template, on one page:\n"
            "  kubectl karmada describe deploy nginx\n"
            "the (Cluster)PropagationPolicy that claimed it, its (Cluster)ResourceBinding and conditions, the\n"
            "placement, each target cluster's Work (Applied, health, status the agent reported), and the\n"
            "events of template, binding and Works, oldest first."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common(parser)
    parser.add_argument("type", metavar="TYPE[/NAME]")
    parser.add_argument("name", nargs="?", metavar="NAME")
    parser.add_argument("-n", "--namespace", metavar="NS", help="namespace (default: the context's, else default)")
    parser.set_defaults(run=_run_describe)


async def _events(client: Any, namespace: str | None, kind: str, name: str) -> list[Obj]:
    from karmada.kube.resources import EVENTS

    selector = f"involvedObject.kind={kind},involvedObject.name={name}"
    listed = await client.list(EVENTS, namespace, fieldSelector=selector)
    return list(listed.get("items") or [])


def _run_describe(args: argparse.Namespace) -> int:
    import asyncio
    import datetime

    from karmada.api import keys
    from karmada.api.names import binding_name, execution_space, work_name
    from karmada.inspection import DescribeInput, TypeError_, describe_page, resolve_type
    from karmada.kube import KubeClient, Resource
    from karmada.kube.resources import CLUSTER_RESOURCE_BINDINGS, RESOURCE_BINDINGS, WORKS
    from kubectl_karmada.multicluster import resource_types, to_resource

    async def main() -> int:
        kind_arg, _, name = args.type.partition("/")
        name = name or args.name
        if not name:
            raise CommandError("you must specify the name of the resource to describe")
        async with KubeClient(control_plane(args)) as client:
            try:
                resource = resolve_type(kind_arg, await resource_types(client))
            except TypeError_ as exc:
                raise CommandError(str(exc)) from None
            namespace = namespace_of(args) if resource.namespaced else None
            template = await client.get_or_none(to_resource(resource), name, namespace)
            if template is None:
                raise CommandError(f'{resource.qualified} "{name}" not found')
            template.setdefault("apiVersion", resource.api_version)
            template.setdefault("kind", resource.kind)
            annotations = template["metadata"].get("annotations") or {}
            data = DescribeInput(template)
            policy_name = annotations.get(keys.PROPAGATION_POLICY_NAME_ANNOTATION)
            cluster_policy = annotations.get(keys.CLUSTER_PROPAGATION_POLICY_ANNOTATION)
            if policy_name:
                policies = Resource("policy.karmada.io", "v1alpha1", "propagationpolicies", "PropagationPolicy", True)
                data.policy = await client.get_or_none(
                    policies, policy_name, annotations.get(keys.PROPAGATION_POLICY_NAMESPACE_ANNOTATION, namespace)
                )
                data.policy_kind = "PropagationPolicy"
            elif cluster_policy:
                policies = Resource(
                    "policy.karmada.io", "v1alpha1", "clusterpropagationpolicies", "ClusterPropagationPolicy", False
                )
                data.policy = await client.get_or_none(policies, cluster_policy)
                data.policy_kind = "ClusterPropagationPolicy"
            bname = binding_name(resource.kind, name)
            if namespace:
                data.binding = await client.get_or_none(RESOURCE_BINDINGS, bname, namespace)
            else:
                data.binding = await client.get_or_none(CLUSTER_RESOURCE_BINDINGS, bname)
                data.binding_kind = "ClusterResourceBinding"
            wname = work_name(resource.kind, name, namespace or "")
            targets = [str(t.get("name")) for t in ((data.binding or {}).get("spec") or {}).get("clusters") or []]
            found = await asyncio.gather(*(client.get_or_none(WORKS, wname, execution_space(c)) for c in targets))
            data.works = dict(zip(targets, found, strict=True))
            lookups = [_events(client, namespace, resource.kind, name)]
            if data.binding is not None:
                lookups.append(_events(client, namespace, data.binding_kind, bname))
            lookups += [_events(client, execution_space(c), "Work", wname) for c, w in data.works.items() if w]
            for events in await asyncio.gather(*lookups):
                data.events.extend(events)
        print(describe_page(data, datetime.datetime.now(datetime.UTC)), end="")
        return 0

    return run_async(main)
