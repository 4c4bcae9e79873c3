"""``kubectl karmada explain TYPE/NAME``: why a workload went where it went.

A thin shell: it GETs the template, its (Cluster)ResourceBinding, the Works of
that binding and the policies, and hands them to :mod:`karmada.explanation`,
which reads the recorded decisions (the scheduler is never re-run).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from kubectl_karmada.errors import CommandError, run_async
from kubectl_karmada.flags import add_common, add_output, control_plane

Obj = dict[str, Any]


def add(commands: Any) -> None:
    parser = commands.add_parser(
        "explain",
        help="explain why a resource was propagated where it was",
        description=(
            "Show why a resource template landed in the clusters it did, from what the control plane\n"
            "recorded: the policy that claimed it and why it won, for each cluster the filter that\n"
            "excluded it (taint, affinity term and the label that differs, API, capacity) or its score,\n"
            "weight, available and assigned replicas, the overrides applied to each cluster's copy,\n"
            "and the dependencies that followed. It shows the last decision, and says when it is stale.\n"
            "  kubectl karmada explain deployment/nginx -n default\n"
            "  kubectl karmada explain deploy nginx -o yaml"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common(parser)
    parser.add_argument("resource", metavar="TYPE/NAME | TYPE", help="the resource template, e.g. deployment/nginx")
    parser.add_argument("name", nargs="?", metavar="NAME", help="the name, when TYPE and NAME are separate")
    parser.add_argument("-n", "--namespace", default="default", help="namespace of the template (default: default)")
    add_output(parser, ("json", "yaml"))
    parser.set_defaults(run=_run)


def _split(args: argparse.Namespace) -> tuple[str, str]:
    word, _, name = str(args.resource).partition("/")
    if name and args.name:
        raise CommandError(
            "there is no need to specify a resource type as a separate argument when passing arguments "
            "in resource/name form"
        )
    name = name or args.name or ""
    if not name:
        raise CommandError("you must specify the name of the resource to explain, as TYPE/NAME or TYPE NAME")
    return word, name


async def _discovery(client: Any) -> list[Obj]:
    """The core group, then each group's preferred version (kubectl's order of preference)."""
    import asyncio

    groups = await client.raw_get("/apis")
    paths = ["/api/v1"] + [
        f"/apis/{g['preferredVersion']['groupVersion']}"
        for g in groups.get("groups") or []
        if g.get("preferredVersion")
    ]
    documents = await asyncio.gather(*(client.raw_get(path) for path in paths))
    return list(documents)


def _policy_resources() -> dict[str, Any]:
    from karmada.kube import Resource

    group, version = "policy.karmada.io", "v1alpha1"
    return {
        "pp": Resource(group, version, "propagationpolicies", "PropagationPolicy", True),
        "cpp": Resource(group, version, "clusterpropagationpolicies", "ClusterPropagationPolicy", False),
        "op": Resource(group, version, "overridepolicies", "OverridePolicy", True),
        "cop": Resource(group, version, "clusteroverridepolicies", "ClusterOverridePolicy", False),
    }


async def gather(client: Any, word: str, name: str, namespace: str) -> Any:
    """The :class:`~karmada.explanation.Inputs` of one template, read from the control plane."""
    import asyncio

    from karmada.api.keys import CLUSTER_RESOURCE_BINDING_PERMANENT_ID_LABEL, RESOURCE_BINDING_PERMANENT_ID_LABEL
    from karmada.api.names import binding_name, execution_space
    from karmada.explanation import Inputs, UnknownType, resolve_type
    from karmada.kube import Resource
    from karmada.kube.resources import CLUSTER_RESOURCE_BINDINGS, RESOURCE_BINDINGS, WORKS

    try:
        found = resolve_type(word, await _discovery(client))
    except UnknownType as exc:
        raise CommandError(str(exc)) from None
    resource = Resource(found.group, found.version, found.plural, found.kind, found.namespaced)
    ns = namespace if resource.namespaced else None
    template = await client.get(resource, name, ns)
    template.setdefault("apiVersion", resource.api_version)
    template.setdefault("kind", resource.kind)
    if resource.namespaced:
        bindings, id_label, kind = RESOURCE_BINDINGS, RESOURCE_BINDING_PERMANENT_ID_LABEL, "ResourceBinding"
    else:
        bindings, id_label = CLUSTER_RESOURCE_BINDINGS, CLUSTER_RESOURCE_BINDING_PERMANENT_ID_LABEL
        kind = "ClusterResourceBinding"
    binding = await client.get_or_none(bindings, binding_name(resource.kind, name), ns)
    policies = _policy_resources()
    lists = await asyncio.gather(
        client.list(policies["pp"], namespace) if resource.namespaced else _empty(),
        client.list(policies["cpp"]),
        client.list(policies["op"], namespace) if resource.namespaced else _empty(),
        client.list(policies["cop"]),
    )
    works: list[Obj] = []
    if binding is not None:
        binding_id = ((binding.get("metadata") or {}).get("labels") or {}).get(id_label)
        if binding_id:
            works = (await client.list(WORKS, None, labelSelector=f"{id_label}={binding_id}")).get("items") or []
        else:  # not yet labelled: the Works of the scheduled clusters, by name
            from karmada.api.names import work_name

            work = work_name(resource.kind, name, ns or "")
            for target in (binding.get("spec") or {}).get("clusters") or []:
                got = await client.get_or_none(WORKS, work, execution_space(str(target.get("name"))))
                if got is not None:
                    works.append(got)
    pp, cpp, op, cop = ([dict(i) for i in (page.get("items") or [])] for page in lists)
    return Inputs(
        template=template,
        binding=binding,
        works=works,
        propagation_policies=pp,
        cluster_propagation_policies=cpp,
        override_policies=op,
        cluster_override_policies=cop,
        binding_kind=kind,
    )


async def _empty() -> Obj:
    return {"items": []}


def _run(args: argparse.Namespace) -> int:
    import yaml

    from karmada.explanation import explain, render_text
    from karmada.kube import KubeClient

    async def main() -> int:
        if args.output not in ("", "json", "yaml"):
            raise CommandError(
                f'unable to match a printer suitable for the output format "{args.output}", '
                "allowed formats are: json,yaml"
            )
        word, name = _split(args)
        async with KubeClient(control_plane(args)) as client:
            inputs = await gather(client, word, name, args.namespace)
        explanation = explain(inputs)
        if args.output == "json":
            print(json.dumps(explanation, indent=4))
        elif args.output == "yaml":
            print(yaml.safe_dump(explanation, sort_keys=False), end="")
        else:
            print(render_text(explanation), end="")
        return 0

    return run_async(main)
