"""``token create|list|delete``: bootstrap tokens that let member clusters register."""

from __future__ import annotations

import argparse
from typing import Any

from kubectl_karmada.errors import run_async
from kubectl_karmada.flags import add_common, add_output, control_plane, duration

PARENT = "kubectl karmada"


def add(commands: Any) -> None:
    token = commands.add_parser(
        "token",
        help="manage bootstrap tokens for registering member clusters",
        description="Bootstrap tokens authenticate `kubectl karmada register` until the agent has its own certificate.",
    )
    verbs = token.add_subparsers(dest="token_command", metavar="COMMAND")
    create = verbs.add_parser(
        "create",
        help="create a bootstrap token",
        description=(
            "Create a bootstrap token on the control plane and print it. With --print-register-command, print\n"
            "the complete `kubectl karmada register` command instead, CA hash included (and --cluster-proxy-server\n"
            "when the control plane publishes a cluster proxy), ready to run against a member cluster."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common(create)
    create.add_argument(
        "--ttl", type=duration, default=86400.0, metavar="DURATION", help="lifetime, 0 = never expires (24h)"
    )
    create.add_argument("--print-register-command", action="store_true", help="print the register command")
    create.add_argument("--description", default="", help="a human-readable note stored with the token")
    create.add_argument(
        "--groups",
        default="system:bootstrappers:karmada:default-cluster-token",
        metavar="GROUPS",
        help="extra groups, comma-separated (system:bootstrappers:karmada:default-cluster-token)",
    )
    create.add_argument(
        "--usages", default="signing,authentication", metavar="USAGES", help="signing,authentication (both)"
    )
    create.set_defaults(run=_run_create)
    listing = verbs.add_parser("list", help="list bootstrap tokens (ids only, never secrets)")
    add_common(listing)
    add_output(listing, ("json", "yaml", "name", "jsonpath=TEMPLATE"))
    listing.set_defaults(run=_run_list)
    delete = verbs.add_parser("delete", help="delete bootstrap tokens by id or by token")
    add_common(delete)
    delete.add_argument("tokens", nargs="+", metavar="TOKEN", help="token id (abcdef) or whole token")
    delete.set_defaults(run=_run_delete)
    token.set_defaults(run=lambda _: (token.print_help(), 1)[1])


def _split(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


def _run_create(args: argparse.Namespace) -> int:
    from karmada.clusterproxy.endpoint import discover
    from karmada.kube import KubeClient
    from karmada.registration import tokens

    async def main() -> int:
        config = control_plane(args)
        async with KubeClient(config) as client:
            token = await tokens.create_token(
                client,
                ttl_seconds=args.ttl,
                usages=_split(args.usages),
                groups=_split(args.groups),
                description=args.description,
            )
            # agents dial the cluster proxy the control plane publishes, when it has one
            proxy = await discover(client) if args.print_register_command else None
        if args.print_register_command:
            print(tokens.register_command(PARENT, config.server, token, config.ca_pem, proxy.server if proxy else ""))
        else:
            print(token.value)
        return 0

    return run_async(main)


def _run_list(args: argparse.Namespace) -> int:
    from karmada.kube import KubeClient
    from karmada.registration import tokens
    from kubectl_karmada.output import render_objects, table

    async def main() -> int:
        async with KubeClient(control_plane(args)) as client:
            records = await tokens.list_tokens(client)
        objects = [
            {
                "apiVersion": "v1",
                "kind": "BootstrapToken",
                "metadata": {"name": r.id},
                "id": r.id,
                "ttl": r.ttl(),
                "expires": r.expires or "<never>",
                "usages": list(r.usages),
                "groups": list(r.groups),
                "description": r.description,
            }
            for r in records
        ]
        text = render_objects(objects, args.output)
        if text is None:
            rows = [
                [
                    r.id,
                    r.ttl(),
                    r.expires or "<never>",
                    ",".join(r.usages),
                    r.description or "<none>",
                    ",".join(r.groups),
                ]
                for r in records
            ]
            text = table(["TOKEN ID", "TTL", "EXPIRES", "USAGES", "DESCRIPTION", "EXTRA GROUPS"], rows)
        print(text, end="")
        return 0

    return run_async(main)


def _row(
    token_id: str, ttl: str, expires: str, usages: tuple[str, ...], description: str, groups: tuple[str, ...]
) -> list[str]:
    return [token_id, ttl, expires or "<never>", ",".join(usages), description or "<none>", ",".join(groups)]


def _run_delete(args: argparse.Namespace) -> int:
    from karmada.kube import KubeClient
    from karmada.registration import tokens

    async def main() -> int:
        async with KubeClient(control_plane(args)) as client:
            for item in args.tokens:
                token_id = await tokens.delete_token(client, item)
                print(f'bootstrap token "{token_id}" deleted')
        return 0

    return run_async(main)
