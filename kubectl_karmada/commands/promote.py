"""``promote TYPE NAME -C CLUSTER``: adopt an object already running in a member
into Karmada, as karmadactl's promote: the template (the member's object) and a
(Cluster)PropagationPolicy placing exactly that object on that cluster with
conflict resolution Overwrite. ``--dry-run`` (or ``-o yaml|json``) prints both
and changes nothing."""

from __future__ import annotations

import argparse
from typing import Any

from kubectl_karmada.errors import CommandError, run_async
from kubectl_karmada.flags import add_common, add_output, add_wait, control_plane, namespace_of, progress


def add(commands: Any) -> None:
    parser = commands.add_parser(
        "promote",
        help="adopt an object of a member cluster into Karmada (template + policy to that cluster)",
        description=(
            "Create, on the control plane, the resource template of an object that already runs in one member,\n"
            "and a PropagationPolicy (ClusterPropagationPolicy for cluster-scoped kinds) that selects exactly\n"
            "that object, places it on that cluster and overwrites the member's copy (conflictResolution:\n"
            "Overwrite, preserveResourcesOnDeletion: true). From then on Karmada manages it.\n"
            "  kubectl karmada promote deployment nginx -n default -C member1\n"
            "  kubectl karmada promote deployment nginx -n default -C member1 --dry-run -o yaml"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common(parser)
    parser.add_argument("type", metavar="TYPE[/NAME]")
    parser.add_argument("name", nargs="?", metavar="NAME")
    parser.add_argument("-n", "--namespace", metavar="NS", help="namespace (default: the context's, else default)")
    parser.add_argument("-C", "--cluster", required=True, metavar="CLUSTER", help="the member the object runs in")
    parser.add_argument("--policy-name", default="", help="name of the policy (default: Karmada's generated name)")
    parser.add_argument(
        "--members-kubeconfig",
        metavar="PATH",
        help="kubeconfig with a context named after the member (default: the sandbox's members.config)",
    )
    parser.add_argument("--dry-run", action="store_true", help="print what would be created, change nothing")
    add_output(parser, ("yaml", "json"))
    add_wait(parser, "the member's object to be taken over (its Work Applied)", 60.0, wait=False)
    parser.set_defaults(run=_run_promote)


async def _wait_applied(client: Any, work: str, namespace: str, timeout: float) -> None:
    """Until the Work's ``Applied`` condition is True; its message when the member refused it."""
    import asyncio
    import time

    from karmada.kube.resources import WORKS

    deadline = time.monotonic() + timeout if timeout else None
    progress(f"waiting for Work {namespace}/{work} to be applied in the member")
    while True:
        found = await client.get_or_none(WORKS, work, namespace)
        conditions = ((found or {}).get("status") or {}).get("conditions") or []
        applied = next((c for c in conditions if c.get("type") == "Applied"), None)
        if applied and applied.get("status") == "True":
            return
        if applied and applied.get("status") == "False":
            raise CommandError(f"Work {namespace}/{work} failed to apply: {applied.get('message', '')}")
        if deadline is not None and time.monotonic() > deadline:
            raise CommandError(f"timed out waiting for Work {namespace}/{work} to be applied")
        await asyncio.sleep(0.5)


def _run_promote(args: argparse.Namespace) -> int:
    from karmada.inspection import PromotionError, TypeError_, promotion, resolve_type
    from karmada.kube import KubeClient, Resource
    from karmada.kube.resources import CLUSTERS
    from kubectl_karmada.multicluster import member_access, resource_types, to_resource
    from kubectl_karmada.output import render_objects

    async def main() -> int:
        kind_arg, _, name = args.type.partition("/")
        name = name or args.name
        if not name:
            raise CommandError("you must specify the name of the object to promote")
        if args.output not in ("", "yaml", "json"):
            raise CommandError(f'unable to match a printer suitable for the output format "{args.output}"')
        async with KubeClient(control_plane(args)) as client:
            try:
                resource = resolve_type(kind_arg, await resource_types(client))
            except TypeError_ as exc:
                raise CommandError(str(exc)) from None
            if await client.get_or_none(CLUSTERS, args.cluster) is None:
                raise CommandError(f"clusters don't exist: {args.cluster}")
            config = (await member_access(args, client)).config_for(args.cluster)
            if config is None:
                raise CommandError(
                    f"cluster({args.cluster}) is not reachable from here: promote reads the object from the member "
                    f"(give --members-kubeconfig with a context named {args.cluster})"
                )
            namespace = namespace_of(args) if resource.namespaced else None
            target = to_resource(resource)
            async with KubeClient(config, timeout=15) as member:
                found = await member.get_or_none(target, name, namespace)
            if found is None:
                where = f"{namespace}/" if namespace else ""
                raise CommandError(f"{resource.qualified} {where}{name} doesn't exist in cluster({args.cluster})")
            found.setdefault("apiVersion", resource.api_version)
            found.setdefault("kind", resource.kind)
            try:
                template, policy = promotion(found, args.cluster, policy=args.policy_name or None)
            except PromotionError as exc:
                raise CommandError(str(exc)) from None
            if args.output or args.dry_run:
                text = render_objects([template, policy], args.output or "yaml")
                print(text or "", end="")
                if args.dry_run:
                    return 0
            policy_resource = Resource(
                "policy.karmada.io",
                "v1alpha1",
                "propagationpolicies" if namespace else "clusterpropagationpolicies",
                policy["kind"],
                bool(namespace),
            )
            where = f"{namespace}/" if namespace else ""
            if await client.get_or_none(target, name, namespace) is not None:
                raise CommandError(
                    f"{resource.qualified} {where}{name} already exists in the Karmada control plane; "
                    "edit its PropagationPolicy to propagate it"
                )
            policy_name = policy["metadata"]["name"]
            if await client.get_or_none(policy_resource, policy_name, namespace) is not None:
                raise CommandError(
                    f"the {policy['kind']}({where}{policy_name}) already exist, please edit it to propagate resource"
                )
            # the policy first: a template with no policy would be claimed by whatever else matches it
            await client.create(policy_resource, policy, namespace)
            await client.create(target, template, namespace)
            if args.wait == "true":
                from karmada.api.names import execution_space, work_name

                await _wait_applied(
                    client, work_name(resource.kind, name, namespace or ""), execution_space(args.cluster), args.timeout
                )
        if not args.output:
            print(f"ResourceTemplate ({where}{name}) is created successfully")
            print(f"{policy['kind']} ({where}{policy_name}) is created successfully")
            print(f'Resource "{resource.qualified}"({where}{name}) is promoted successfully')
        return 0

    return run_async(main)
