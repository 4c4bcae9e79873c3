"""Reading objects across the control plane and the member clusters: the work of
``kubectl karmada get`` (see :mod:`kubectl_karmada.commands.get` for where each
cluster's rows come from), which ``top``, ``promote`` and ``describe`` share.

Imported only when one of those commands runs, so that building the argument
parser (``--help``) does not pay for asyncio and the dataclasses here.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import datetime
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kubectl_karmada.errors import CommandError, run_async
from kubectl_karmada.flags import control_plane, control_plane_kubeconfig, namespace_of

if TYPE_CHECKING:
    from karmada.inspection import MemberTable, ResourceType
    from karmada.kube import ClusterConfig, KubeClient

Obj = dict[str, Any]
TABLE_ACCEPT = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)
DISCOVERY_ACCEPT = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


# -- reaching members ---------------------------------------------------------------------------


@dataclass
class Members:
    """How each member is read: a kubeconfig context of its name, the credentials of a Push
    cluster's ``spec.secretRef``, or (None) its Work status."""

    kubeconfig: Path | None
    contexts: set[str]
    push: dict[str, ClusterConfig] = field(default_factory=dict)
    proxied: dict[str, ClusterConfig] = field(default_factory=dict)  # through the cluster proxy, as the user

    def config_for(self, cluster: str) -> ClusterConfig | None:
        from karmada.kube import from_kubeconfig

        if cluster in self.proxied:  # --live: asked for by name
            return self.proxied[cluster]
        if self.kubeconfig is not None and cluster in self.contexts:
            return from_kubeconfig(self.kubeconfig, cluster)
        return self.push.get(cluster)


async def member_access(args: argparse.Namespace, client: KubeClient) -> Members:
    """:func:`members_access`, plus Push clusters reached as Karmada's control plane reaches them:
    ``spec.apiEndpoint`` with the ``token`` and ``caBundle`` of the Secret ``spec.secretRef`` names."""
    import base64

    from karmada.clusterproxy.endpoint import discover
    from karmada.clusterproxy.kubeconfig import proxy_path
    from karmada.kube import ClusterConfig, Credentials, KubeError
    from karmada.kube.resources import CLUSTERS, SECRETS

    members = members_access(args, client.config)
    endpoint = await discover(client) if getattr(args, "live", False) else None
    if getattr(args, "live", False) and endpoint is None:
        raise CommandError(
            "--live needs the cluster proxy, and the control plane publishes none "
            "(no ConfigMap karmada-system/karmada-cluster-proxy)"
        )
    for cluster in (await client.list(CLUSTERS)).get("items") or []:
        spec = cluster.get("spec") or {}
        ref = spec.get("secretRef") or {}
        name = cluster["metadata"]["name"]
        if endpoint is not None:
            # live, as the user: the member's RBAC applies (Pull members over their agent's tunnel)
            members.proxied[name] = dataclasses.replace(
                client.config,
                server=endpoint.server + proxy_path(name),
                ca_pem=endpoint.ca_pem or client.config.ca_pem,
                tls_server_name=None,
            )
        if (
            spec.get("syncMode") != "Push"
            or not ref.get("name")
            or not spec.get("apiEndpoint")
            or name in members.contexts
        ):
            continue
        try:
            secret = await client.get(SECRETS, ref["name"], ref.get("namespace") or "karmada-cluster")
        except KubeError:
            continue  # unreadable credentials: the Work status still answers
        data = secret.get("data") or {}
        members.push[name] = ClusterConfig(
            server=str(spec["apiEndpoint"]).rstrip("/"),
            ca_pem=base64.b64decode(data["caBundle"]) if data.get("caBundle") else None,
            insecure=bool(spec.get("insecureSkipTLSVerification")),
            credentials=Credentials(token=base64.b64decode(data["token"]).decode() if data.get("token") else None),
            proxy_url=spec.get("proxyURL") or None,
        )
    return members


def members_access(args: argparse.Namespace, control: ClusterConfig) -> Members:
    """The members' kubeconfig: ``--members-kubeconfig``, else the sandbox's when ``control`` is the sandbox."""
    import yaml

    from karmada.kube import ConfigError, from_kubeconfig

    given = getattr(args, "members_kubeconfig", None)
    path: Path | None = Path(given).expanduser() if given else None
    if path is None:
        used = control_plane_kubeconfig(args, announce=False)
        sandbox_dir = Path(used).expanduser().parent if used else Path.home() / ".karmada-local"
        candidate = sandbox_dir / "members.config"
        try:
            sandbox_server = from_kubeconfig(sandbox_dir / "karmada.config").server
        except (ConfigError, OSError):
            sandbox_server = ""
        if candidate.exists() and sandbox_server == control.server:
            path = candidate
    if path is None:
        return Members(None, set())
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror}") from None
    contexts = {str(c.get("name")) for c in (data or {}).get("contexts") or []}
    return Members(path, contexts)


async def resource_types(client: KubeClient) -> list[ResourceType]:
    """Every served resource, from the aggregated discovery documents."""
    from karmada.inspection import discovered_types

    core, groups = await asyncio.gather(
        client.execute_with_accept("/api", DISCOVERY_ACCEPT), client.execute_with_accept("/apis", DISCOVERY_ACCEPT)
    )
    return discovered_types(core, groups)


async def cluster_names(client: KubeClient, args: argparse.Namespace) -> list[str]:
    """The clusters ``-C`` names (checked to exist), or every Cluster."""
    from karmada.kube.resources import CLUSTERS

    listed = [c["metadata"]["name"] for c in (await client.list(CLUSTERS)).get("items") or []]
    wanted = [name for value in args.clusters for name in value.split(",") if name]
    if not wanted:
        return sorted(listed)
    missing = [name for name in wanted if name not in listed]
    if missing:
        raise CommandError(f"clusters don't exist: {','.join(missing)}")
    return list(dict.fromkeys(wanted))


def to_resource(resource: ResourceType) -> Any:
    from karmada.kube import Resource

    return Resource(resource.group, resource.version, resource.plural, resource.kind, resource.namespaced)


# -- one cluster ---------------------------------------------------------------------------------


@dataclass
class Query:
    resource: ResourceType
    names: list[str]
    namespace: str | None  # None: every namespace (or a cluster-scoped type)
    selector: str
    table: bool


@dataclass
class Result:
    cluster: str
    source: str
    table: Obj | None = None
    objects: list[Obj] | None = None
    missing: list[str] | None = None
    error: str = ""
    resource_version: str = ""


async def read_server(client: KubeClient, cluster: str, source: str, query: Query) -> Result:
    """The objects from an API server (a member's or the control plane's), as a Table or as objects."""
    from karmada.inspection import CACHE_SOURCE_ANNOTATION, SOURCE_ANNOTATION
    from karmada.kube import KubeError, Request, object_path

    resource = to_resource(query.resource)
    accept = TABLE_ACCEPT if query.table else "application/json"
    params = {"labelSelector": query.selector} if query.selector else {}
    result = Result(cluster, source, missing=[])
    pieces: list[Obj] = []
    try:
        if query.names:
            for name in query.names:
                try:
                    pieces.append(
                        await client.execute(
                            Request("GET", object_path(resource, query.namespace, name), accept=accept)
                        )
                    )
                except KubeError as exc:
                    if not exc.not_found:
                        raise
                    assert result.missing is not None
                    result.missing.append(name)
        else:
            listed = await client.execute(Request("GET", object_path(resource, query.namespace), params, accept=accept))
            result.resource_version = str((listed.get("metadata") or {}).get("resourceVersion", ""))
            pieces.append(listed)
    except KubeError as exc:
        if exc.not_found and not query.names:
            result.table, result.objects = ({"rows": []} if query.table else None), [] if not query.table else None
            return result
        result.error = exc.message
        return result
    if query.table:
        rows: list[Obj] = []
        definitions: list[Obj] = []
        for piece in pieces:
            definitions = definitions or list(piece.get("columnDefinitions") or [])
            rows.extend(piece.get("rows") or [])
        result.table = {"columnDefinitions": definitions, "rows": rows}
    else:
        objects: list[Obj] = []
        for piece in pieces:
            items = piece.get("items") if "items" in piece else [piece]
            for item in items or []:
                item.setdefault("apiVersion", query.resource.api_version)
                item.setdefault("kind", query.resource.kind)
                if source != "karmada":
                    annotations = item.setdefault("metadata", {}).setdefault("annotations", {})
                    annotations[CACHE_SOURCE_ANNOTATION] = cluster
                    annotations[SOURCE_ANNOTATION] = source
                objects.append(item)
        result.objects = objects
    return result


async def read_works(client: KubeClient, cluster: str, query: Query) -> Result:
    """The objects of a cluster as its Work status reports them."""
    from karmada.api.names import execution_space
    from karmada.inspection import objects_from_works, parse_selector, work_table
    from karmada.kube import KubeError
    from karmada.kube.resources import WORKS

    try:
        listed = await client.list_all(WORKS, execution_space(cluster))
    except KubeError as exc:
        return Result(cluster, "work-status", error=exc.message)
    objects = objects_from_works(
        listed.get("items") or [],
        query.resource.group,
        query.resource.kind,
        namespace=query.namespace if query.resource.namespaced else None,
        name=None,
        selector=parse_selector(query.selector),
    )
    if query.names:
        objects = [o for o in objects if o["metadata"].get("name") in query.names]
    found = {o["metadata"].get("name") for o in objects}
    missing = [n for n in query.names if n not in found]
    result = Result(
        cluster, "work-status", missing=missing, resource_version=str(listed["metadata"].get("resourceVersion", ""))
    )
    if query.table:
        result.table = work_table(objects, query.resource.kind, datetime.datetime.now(datetime.UTC))
    else:
        result.objects = objects
    return result


# -- the command ---------------------------------------------------------------------------------


def _scope(args: argparse.Namespace) -> str:
    if args.operation_scope:
        return str(args.operation_scope)
    return "members" if args.clusters or args.all_clusters else "karmada"


def _none_found(namespace: str | None) -> str:
    return f"No resources found in {namespace} namespace." if namespace else "No resources found"


def _split_type(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """``deploy,svc NAME...`` or ``deploy/NAME``: the types and the names."""
    kind, _, name = args.type.partition("/")
    names = list(args.names)
    if name:
        if names:
            raise CommandError(
                "there is no need to specify a resource type as a separate argument "
                "when passing arguments in resource/name form"
            )
        names = [name]
    kinds = [k for k in kind.split(",") if k]
    if not kinds:
        raise CommandError("a resource type is required")
    return kinds, names


async def gather(args: argparse.Namespace, client: KubeClient, query: Query, scope: str) -> list[Result]:
    """Every cluster's result, the control plane's first (scope karmada or all)."""
    from karmada.kube import KubeClient as Client

    tasks = []
    if scope in ("karmada", "all"):
        tasks.append(read_server(client, "Karmada", "karmada", query))
    if scope in ("members", "all"):
        members = await member_access(args, client)
        for cluster in await cluster_names(client, args):
            config = members.config_for(cluster)
            if config is None:
                tasks.append(read_works(client, cluster, query))
            else:

                async def direct(cluster: str = cluster, config: ClusterConfig = config) -> Result:
                    async with Client(config, timeout=15) as member:
                        return await read_server(member, cluster, "member", query)

                tasks.append(direct())
    return list(await asyncio.gather(*tasks))


def _tables(results: Sequence[Result]) -> list[MemberTable]:
    from karmada.inspection import MemberTable

    return [MemberTable(r.cluster, r.source, r.table) for r in results if r.table is not None]


def _report_errors(results: Sequence[Result], query: Query, ignore_not_found: bool) -> bool:
    failed = False
    for result in results:
        if result.error:
            print(f"error: cluster({result.cluster}): {result.error}", file=sys.stderr)
            failed = True
    if query.names and not ignore_not_found:
        answered = [r for r in results if not r.error]
        for name in query.names:
            if answered and all(name in (r.missing or []) for r in answered):
                print(f'Error from server (NotFound): {query.resource.qualified} "{name}" not found', file=sys.stderr)
                failed = True
    return failed


def run_get(args: argparse.Namespace) -> int:
    from karmada.inspection import SelectorError, TypeError_, merge_tables, parse_selector, render_rows, resolve_type
    from karmada.kube import KubeClient
    from kubectl_karmada.output import render_objects

    async def main() -> int:
        if args.output not in ("", "wide", "json", "yaml", "name") and not args.output.startswith("jsonpath="):
            raise CommandError(
                f'unable to match a printer suitable for the output format "{args.output}", '
                "allowed formats are: json,jsonpath,name,wide,yaml"
            )
        try:
            parse_selector(args.selector)
        except SelectorError as exc:
            raise CommandError(str(exc)) from None
        kinds, names = _split_type(args)
        scope = _scope(args)
        if args.all_namespaces and names:
            raise CommandError("a resource cannot be retrieved by name across all namespaces")
        if args.watch and len(kinds) > 1:
            raise CommandError("watch is only supported on individual resources and resource collections")
        async with KubeClient(control_plane(args)) as client:
            served = await resource_types(client)
            try:
                resources = [resolve_type(kind, served) for kind in kinds]
            except TypeError_ as exc:
                raise CommandError(str(exc)) from None
            table = args.output in ("", "wide")
            failed, printed = False, False
            objects: list[Obj] = []
            for resource in resources:
                namespace = namespace_of(args) if resource.namespaced and not args.all_namespaces else None
                query = Query(resource, names, namespace, args.selector, table)
                results = await gather(args, client, query, scope)
                failed = _report_errors(results, query, args.ignore_not_found) or failed
                if not table:
                    objects.extend(o for r in results for o in r.objects or [])
                    continue
                header, rows = merge_tables(
                    _tables(results),
                    wide=args.output == "wide",
                    with_namespace=resource.namespaced and args.all_namespaces,
                    pods=resource.plural == "pods",
                    no_headers=args.no_headers,
                    name_prefix=f"{resource.singular}.{resource.group}/".replace("./", "/")
                    if len(resources) > 1
                    else "",
                )
                if rows:
                    # kubectl separates the tables of several types by an empty line
                    print(("\n" if printed else "") + render_rows(header, rows), end="", flush=True)
                    printed = True
                if args.watch:
                    if not rows and not failed and not names:
                        print(_none_found(namespace), file=sys.stderr)
                    return await watch(args, client, query, scope, results, header)
            if table and not printed and not failed and not names:
                print(
                    _none_found(namespace_of(args) if not args.all_namespaces and resources[0].namespaced else None),
                    file=sys.stderr,
                )
            if not table:
                single = len(names) == 1 and len(objects) == 1 and len(resources) == 1
                print(render_objects(objects, args.output, single=single) or "", end="")
        return 1 if failed else 0

    return run_async(main)


# -- watching -----------------------------------------------------------------------------------


async def watch(
    args: argparse.Namespace, client: KubeClient, query: Query, scope: str, results: list[Result], header: list[str]
) -> int:
    """Stream changed rows from every cluster until interrupted (kubectl's ``get -w``)."""
    from karmada.api.names import execution_space
    from karmada.inspection import MemberTable, merge_tables, objects_from_works, parse_selector, work_table
    from karmada.kube import KubeClient as Client
    from karmada.kube import KubeError
    from karmada.kube.resources import WORKS

    tables = _tables(results)
    definitions = next(
        (
            t.table.get("columnDefinitions")
            for t in tables
            if t.source != "work-status" and t.table.get("columnDefinitions")
        ),
        None,
    )
    definitions = definitions or next(
        (t.table.get("columnDefinitions") for t in tables if t.table.get("columnDefinitions")), None
    )
    base = [
        MemberTable(
            "", "karmada" if definitions is None else "member", {"columnDefinitions": definitions or [], "rows": []}
        )
    ]
    show_source = "SOURCE" in header
    widths = [len(h) for h in header]
    lock = asyncio.Lock()

    async def emit(table: MemberTable) -> None:
        _, rows = merge_tables(
            [*base, table],
            wide=args.output == "wide",
            with_namespace=query.resource.namespaced and args.all_namespaces,
            pods=query.resource.plural == "pods",
            show_source=show_source,
        )
        async with lock:
            for row in rows:
                print("   ".join(c.ljust(w) for c, w in zip(row.cells, widths, strict=False)).rstrip(), flush=True)

    resource = to_resource(query.resource)
    params = {"labelSelector": query.selector} if query.selector else {}
    if query.names:
        params["fieldSelector"] = f"metadata.name={query.names[0]}"

    async def server(target: KubeClient, result: Result) -> None:
        version = result.resource_version
        while True:
            try:
                async for kind, obj in target.watch(
                    resource, query.namespace, resource_version=version, params=params, accept=TABLE_ACCEPT
                ):
                    if kind == "BOOKMARK":
                        version = str((obj.get("metadata") or {}).get("resourceVersion", version))
                        continue
                    rows = obj.get("rows") or []
                    for row in rows:
                        version = str(((row.get("object") or {}).get("metadata") or {}).get("resourceVersion", version))
                    await emit(
                        MemberTable(
                            result.cluster,
                            result.source,
                            {"columnDefinitions": definitions or obj.get("columnDefinitions") or [], "rows": rows},
                        )
                    )
            except KubeError as exc:
                if exc.gone:
                    version = ""
                    continue
                print(f"error: cluster({result.cluster}): {exc.message}", file=sys.stderr)
                return

    async def works(result: Result) -> None:
        version = result.resource_version
        selector = parse_selector(query.selector)
        while True:
            try:
                async for kind, work in client.watch(WORKS, execution_space(result.cluster), resource_version=version):
                    version = str((work.get("metadata") or {}).get("resourceVersion", version))
                    if kind not in ("ADDED", "MODIFIED", "DELETED"):
                        continue
                    work["metadata"].setdefault("namespace", execution_space(result.cluster))
                    objects = objects_from_works(
                        [work],
                        query.resource.group,
                        query.resource.kind,
                        namespace=query.namespace if query.resource.namespaced else None,
                        name=query.names[0] if query.names else None,
                        selector=selector,
                    )
                    if objects:
                        await emit(
                            MemberTable(
                                result.cluster,
                                "work-status",
                                work_table(objects, query.resource.kind, datetime.datetime.now(datetime.UTC)),
                            )
                        )
            except KubeError as exc:
                if exc.gone:
                    version = ""
                    continue
                print(f"error: cluster({result.cluster}): {exc.message}", file=sys.stderr)
                return

    members = await member_access(args, client) if scope != "karmada" else Members(None, set())
    tasks = []
    for result in results:
        if result.error:
            continue
        if result.source == "karmada":
            tasks.append(server(client, result))
        elif result.source == "work-status":
            tasks.append(works(result))
        else:
            config = members.config_for(result.cluster)
            assert config is not None

            async def direct(result: Result = result, config: ClusterConfig = config) -> None:
                async with Client(config) as member:
                    await server(member, result)

            tasks.append(direct())
    await asyncio.gather(*tasks)
    return 1
