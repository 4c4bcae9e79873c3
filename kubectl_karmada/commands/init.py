"""``init`` and ``deinit``: install Karmada's API into a control-plane API server."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from karmada.images import CONTROLPLANE_IMAGE
from kubectl_karmada.errors import run_async
from kubectl_karmada.flags import add_common, control_plane, duration

DEFAULT_WEBHOOK_CERT_DIR = Path.home() / ".karmada" / "webhook"
NEXT_STEPS = """\
Karmada's API is installed in {server}.

Next:
  1. Run the control plane against this API server (or re-run init with --deploy):
       karmada-controlplane --kubeconfig {kubeconfig}
  2. Create a bootstrap token and print the command that registers a member cluster:
       kubectl karmada token create --print-register-command{kubeconfig_flag}
  3. Run that command with the member cluster's kubeconfig (--kubeconfig/--context of the member).
"""


def add(commands: Any) -> None:
    parser = commands.add_parser(
        "init",
        help="install Karmada's CRDs, namespaces and bootstrap RBAC into a control-plane API server",
        description=(
            "Install Karmada into the API server of --kubeconfig/--context: the CRDs (waiting until they are\n"
            "Established), namespaces karmada-system and karmada-cluster, the RBAC that lets bootstrap tokens\n"
            "create certificate requests and read kube-public/cluster-info, and cluster-info itself if the server\n"
            "lacks it. With --deploy, also the control plane's RBAC and Deployment (for a real host cluster).\n"
            "Safe to run again: it converges."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common(parser)
    parser.add_argument("--deploy", action="store_true", help="also deploy karmada-controlplane into this cluster")
    parser.add_argument(
        "--image",
        "--controlplane-image",
        dest="controlplane_image",
        default=CONTROLPLANE_IMAGE,
        metavar="IMAGE",
        help=f"image of the karmada-controlplane and karmada-webhook pods with --deploy ({CONTROLPLANE_IMAGE})",
    )
    parser.add_argument(
        "--timeout", type=duration, default=60.0, metavar="DURATION", help="how long to wait for the CRDs (60s)"
    )
    parser.add_argument(
        "--webhook-url",
        metavar="URL",
        help="register a karmada-webhook served at URL (https://host:port); --deploy uses its Service",
    )
    parser.add_argument(
        "--webhook-cert-dir",
        type=Path,
        default=DEFAULT_WEBHOOK_CERT_DIR,
        metavar="DIR",
        help=f"where the webhook's CA and serving certificate are kept for --webhook-url ({DEFAULT_WEBHOOK_CERT_DIR})",
    )
    parser.set_defaults(run=_run_init)
    undo = commands.add_parser(
        "deinit",
        help="remove Karmada from a control-plane API server (deletes every Karmada object)",
        description="Delete what init installed, CRDs last: every Cluster, policy, binding and Work goes with them.",
    )
    add_common(undo)
    undo.add_argument("--timeout", type=duration, default=120.0, metavar="DURATION", help="wait for deletion (2m)")
    undo.set_defaults(run=_run_deinit)


def _say(line: str) -> None:
    print(line, flush=True)


def _run_init(args: argparse.Namespace) -> int:
    from karmada.install import InitOptions, init
    from karmada.kube import KubeClient

    async def main() -> int:
        config = control_plane(args)
        async with KubeClient(config) as client:
            options = InitOptions(
                args.deploy, args.controlplane_image, args.timeout, args.webhook_url, args.webhook_cert_dir
            )
            await init(client, options, _say)
        kubeconfig = getattr(args, "kubeconfig", None)
        print(
            NEXT_STEPS.format(
                server=config.server,
                kubeconfig=kubeconfig or "<this kubeconfig>",
                kubeconfig_flag=f" --kubeconfig {kubeconfig}" if kubeconfig else "",
            ),
            end="",
        )
        return 0

    return run_async(main)


def _run_deinit(args: argparse.Namespace) -> int:
    from karmada.install import deinit
    from karmada.kube import KubeClient

    async def main() -> int:
        async with KubeClient(control_plane(args)) as client:
            await deinit(client, _say, args.timeout)
        print("Karmada removed.", file=sys.stdout)
        return 0

    return run_async(main)
