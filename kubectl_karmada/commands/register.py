"""``register`` / ``unregister``: join a member cluster in pull mode, and undo it.
Both run against the member cluster (``--kubeconfig``/``--context``)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from karmada.images import AGENT_IMAGE
from kubectl_karmada.errors import CommandError, run_async
from kubectl_karmada.flags import add_common, add_output, duration

MEMBER_KUBECONFIG = (
    "kubeconfig of the MEMBER cluster, not the control plane (default: $KUBECONFIG, else ~/.kube/config)"
)


def add(commands: Any) -> None:
    parser = commands.add_parser(
        "register",
        help="register this (member) cluster with a Karmada control plane in pull mode",
        description=(
            "Register the member cluster of --kubeconfig/--context with the control plane at ENDPOINT\n"
            "(host:port). The token authenticates this one registration; the CA hash proves the control\n"
            "plane is the one you meant. The control plane approves the agent's certificate and creates its\n"
            "RBAC; then the agent (a Deployment in --namespace) connects out to the control plane over HTTPS.\n\n"
            "Get the complete command from: kubectl karmada token create --print-register-command"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common(
        parser,
        kubeconfig_help=MEMBER_KUBECONFIG,
    )
    parser.add_argument("endpoint", metavar="ENDPOINT", help="the control plane's API server, host:port")
    parser.add_argument("--token", required=True, help="bootstrap token (abcdef.0123456789abcdef)")
    parser.add_argument(
        "--discovery-token-ca-cert-hash",
        action="append",
        default=[],
        metavar="sha256:HEX",
        help="pin of the control plane's CA (repeatable or comma-separated)",
    )
    parser.add_argument(
        "--discovery-token-unsafe-skip-ca-verification",
        action="store_true",
        help="trust the control plane without a CA pin (not recommended)",
    )
    parser.add_argument("--discovery-timeout", type=duration, default=300.0, metavar="DURATION", help="(5m)")
    parser.add_argument("--cluster-name", help="name of this cluster in Karmada (default: the context's cluster)")
    parser.add_argument("-n", "--namespace", default="karmada-system", help="agent namespace (karmada-system)")
    parser.add_argument("--cluster-namespace", default="karmada-cluster", help="Lease namespace (karmada-cluster)")
    parser.add_argument("--cluster-provider", default="", help="provider recorded on the Cluster")
    parser.add_argument("--cluster-region", default="", help="region recorded on the Cluster")
    parser.add_argument(
        "--cluster-zones", "--cluster-zone", default="", metavar="ZONES", help="zones recorded on the Cluster (a,b)"
    )
    parser.add_argument(
        "--karmada-agent-image",
        "--agent-image",
        dest="karmada_agent_image",
        default=AGENT_IMAGE,
        metavar="IMAGE",
        help=f"image of the karmada-agent pods ({AGENT_IMAGE})",
    )
    parser.add_argument("--karmada-agent-replicas", type=int, default=1, metavar="N", help="(1)")
    parser.add_argument(
        "--cert-expiration-seconds", type=int, default=31536000, metavar="SECONDS", help="agent certificate (1 year)"
    )
    parser.add_argument(
        "--enable-cert-rotation",
        default="true",
        choices=("true", "false"),
        help="the agent renews its certificate before expiry, without restarting (true)",
    )
    parser.add_argument("--proxy-server-address", default="", metavar="URL", help="proxy for the agent's traffic")
    parser.add_argument(
        "--cluster-proxy-server",
        default="",
        metavar="URL",
        help="the control plane's cluster proxy (https://host:port): the agent keeps a tunnel to it so "
        "`kubectl karmada logs/exec` reach this cluster from outside (empty: no tunnel)",
    )
    parser.add_argument(
        "--agent-rollout-timeout",
        type=duration,
        default=120.0,
        metavar="DURATION",
        help="wait this long for the agent Deployment to become available; 0 = do not wait (2m)",
    )
    parser.add_argument("--csr-timeout", type=duration, default=300.0, metavar="DURATION", help="(5m)")
    parser.add_argument("--dry-run", action="store_true", help="check and print what would be created, change nothing")
    add_output(parser, ("yaml", "json", "name"))
    parser.set_defaults(run=_run_register)

    undo = commands.add_parser(
        "unregister",
        help="remove this (member) cluster from Karmada and uninstall its agent",
        description=(
            "Delete the cluster's Works and its Cluster on the control plane (with the agent's own credentials,\n"
            "or --control-plane-kubeconfig), then the agent's objects in the member of --kubeconfig/--context."
        ),
    )
    add_common(
        undo,
        kubeconfig_help=MEMBER_KUBECONFIG,
    )
    undo.add_argument("cluster", metavar="CLUSTER", help="the cluster's name in Karmada")
    undo.add_argument(
        "--control-plane-kubeconfig",
        "--karmada-kubeconfig",
        dest="karmada_kubeconfig",
        metavar="PATH",
        help="kubeconfig of the Karmada control plane (default: the agent's own credentials in the member)",
    )
    undo.add_argument(
        "--control-plane-context",
        "--karmada-context",
        dest="karmada_context",
        metavar="NAME",
        help="context in --control-plane-kubeconfig",
    )
    undo.add_argument("-n", "--namespace", default="karmada-system", help="agent namespace (karmada-system)")
    undo.add_argument("--wait", type=duration, default=60.0, metavar="DURATION", help="wait for removals (60s)")
    undo.add_argument("--dry-run", action="store_true", help="say what would be removed, change nothing")
    undo.set_defaults(run=_run_unregister)


def _say(line: str) -> None:
    print(line, flush=True)


def _progress(line: str) -> None:
    """What a step is waiting for: on stderr, so stdout keeps only the steps done."""
    print(line, file=sys.stderr, flush=True)


def _run_register(args: argparse.Namespace) -> int:
    from karmada.kube import KubeClient, from_kubeconfig
    from karmada.kube.config import context_cluster_name
    from karmada.pki import BootstrapToken, parse_pins
    from karmada.registration.discovery import DiscoveryError
    from karmada.registration.member import AgentSettings, redacted
    from karmada.registration.register import RegisterOptions, RegistrationError, register
    from kubectl_karmada.output import render_objects

    async def main() -> int:
        member_config = from_kubeconfig(getattr(args, "kubeconfig", None), getattr(args, "context", None))
        name = args.cluster_name or context_cluster_name(
            getattr(args, "kubeconfig", None), getattr(args, "context", None)
        )
        settings = AgentSettings(
            cluster_name=name,
            cluster_api_endpoint=member_config.server,
            namespace=args.namespace,
            cluster_namespace=args.cluster_namespace,
            provider=args.cluster_provider,
            region=args.cluster_region,
            zones=[z for z in args.cluster_zones.split(",") if z],
            image=args.karmada_agent_image,
            replicas=args.karmada_agent_replicas,
            proxy_server_address=args.proxy_server_address,
            cluster_proxy_server=args.cluster_proxy_server,
            cert_rotation=args.enable_cert_rotation == "true",
        )
        options = RegisterOptions(
            endpoint=args.endpoint,
            token=BootstrapToken.parse(args.token),
            ca_hashes=parse_pins(args.discovery_token_ca_cert_hash),
            settings=settings,
            unsafe_skip_ca_verification=args.discovery_token_unsafe_skip_ca_verification,
            discovery_timeout=args.discovery_timeout,
            cert_expiration_seconds=args.cert_expiration_seconds,
            csr_timeout=args.csr_timeout,
            rollout_timeout=args.agent_rollout_timeout,
            dry_run=args.dry_run,
        )
        async with KubeClient(member_config) as member:
            try:
                objects = await register(member, options, _say, _progress)
            except (RegistrationError, DiscoveryError) as exc:
                raise CommandError(str(exc)) from None
        if args.dry_run:
            text = render_objects(redacted(objects), args.output)
            if text is None:
                text = "".join(
                    f"{o['kind'].lower()}/{o['metadata']['name']} would be created (dry run)\n" for o in objects
                )
            print(text, end="")
        return 0

    return run_async(main)


def _run_unregister(args: argparse.Namespace) -> int:
    from karmada.kube import KubeClient, from_kubeconfig
    from karmada.registration.register import RegistrationError
    from karmada.registration.unregister import UnregisterOptions, agent_control_plane_client, unregister

    async def main() -> int:
        member_config = from_kubeconfig(getattr(args, "kubeconfig", None), getattr(args, "context", None))
        options = UnregisterOptions(args.cluster, args.namespace, args.wait, args.dry_run)
        async with KubeClient(member_config) as member:
            try:
                if args.karmada_kubeconfig or args.karmada_context:
                    control_plane = KubeClient(from_kubeconfig(args.karmada_kubeconfig, args.karmada_context))
                else:
                    control_plane = await agent_control_plane_client(member, args.namespace)
                async with control_plane:
                    await unregister(member, control_plane, options, _say)
            except RegistrationError as exc:
                raise CommandError(str(exc)) from None
        return 0

    return run_async(main)
