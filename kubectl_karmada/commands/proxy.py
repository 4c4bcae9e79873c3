"""``proxy-config``, ``logs``, ``exec`` and ``attach``: into a member cluster through
the cluster proxy, as karmadactl's commands of those names.

``proxy-config CLUSTER`` prints a kubeconfig whose server is
``<proxy>/apis/cluster.karmada.io/v1alpha1/clusters/CLUSTER/proxy`` with the
user's own control-plane credentials. ``logs``, ``exec`` and ``attach`` take
``--cluster``/``-C`` and otherwise kubectl's own flags: they run the real
kubectl with such a kubeconfig (in a private temporary file, removed after),
so every kubectl flag works, ``-f``, ``-it`` and the WebSocket protocols
included.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from kubectl_karmada.errors import CommandError, run_async
from kubectl_karmada.flags import add_common, control_plane, control_plane_kubeconfig

PASS_THROUGH = {
    "logs": "print the logs of a container in a member cluster's pod",
    "exec": "run a command in a container of a member cluster's pod",
    "attach": "attach to a running container of a member cluster's pod",
}
PROXY_HELP = "the cluster proxy (https://host:port; default: the karmada-system/karmada-cluster-proxy ConfigMap)"


def add(commands: Any) -> None:
    config = commands.add_parser(
        "proxy-config",
        help="print a kubeconfig that reaches a member cluster through the cluster proxy",
        description=(
            "Print a kubeconfig for one member cluster through the control plane's cluster proxy, with your\n"
            "own Karmada credentials: kubectl then works in the member as far as clusters/proxy on the\n"
            "control plane and the member's RBAC allow (members behind NAT included, over their agent's tunnel).\n"
            "  kubectl karmada proxy-config member1 > member1.config\n"
            "  kubectl --kubeconfig member1.config get pods -A"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common(config)
    config.add_argument("cluster", metavar="CLUSTER", help="the member cluster")
    config.add_argument("--cluster-proxy-server", default="", metavar="URL", help=PROXY_HELP)
    config.set_defaults(run=_run_proxy_config)
    for verb, summary in PASS_THROUGH.items():
        parser = commands.add_parser(
            verb,
            help=summary,
            description=(
                f"{summary[0].upper()}{summary[1:]}, through the cluster proxy: kubectl {verb} with\n"
                "--cluster/-C naming the member; every other flag is kubectl's.\n"
                f"  kubectl karmada {verb} -C member1 {_example(verb)}"
            ),
            formatter_class=argparse.RawDescriptionHelpFormatter,
            prefix_chars="+",  # every -flag is kubectl's: parsed below, not by argparse
        )
        parser.add_argument("kubectl_args", nargs=argparse.REMAINDER, metavar="ARGS", help="kubectl's")
        parser.set_defaults(run=_run_pass_through, verb=verb)


def _example(verb: str) -> str:
    return {"logs": "nginx-7c5ddbdf54-abcde -f", "exec": "-it nginx-7c5ddbdf54-abcde -- sh"}.get(
        verb, "-it nginx-7c5ddbdf54-abcde"
    )


async def _kubeconfig_text(args: argparse.Namespace, cluster: str, given: str) -> str:
    """The proxy kubeconfig of ``cluster`` as YAML, with the user's control-plane credentials."""
    import yaml

    from karmada.clusterproxy.endpoint import Endpoint, discover
    from karmada.clusterproxy.kubeconfig import KubeconfigError, load_kubeconfigs, proxy_kubeconfig
    from karmada.kube import KubeClient

    config = control_plane(args)
    if given:
        endpoint: Endpoint | None = Endpoint(given.rstrip("/"), config.ca_pem)
    else:
        async with KubeClient(config, timeout=10) as client:
            endpoint = await discover(client)
    if endpoint is None:
        raise CommandError(
            "the control plane publishes no cluster proxy (no ConfigMap karmada-system/karmada-cluster-proxy): "
            "give --cluster-proxy-server https://HOST:PORT"
        )
    try:
        kubeconfig, base = load_kubeconfigs(control_plane_kubeconfig(args, announce=False))
        built = proxy_kubeconfig(kubeconfig, base, getattr(args, "context", None), cluster, endpoint)
    except KubeconfigError as exc:
        raise CommandError(str(exc)) from None
    return str(yaml.safe_dump(built, sort_keys=False))


def _run_proxy_config(args: argparse.Namespace) -> int:
    async def main() -> int:
        sys.stdout.write(await _kubeconfig_text(args, args.cluster, args.cluster_proxy_server))
        return 0

    return run_async(main)


OWN_FLAGS = ("--cluster", "-C", "--cluster-proxy-server", "--kubeconfig", "--context")


def split_flags(argv: list[str]) -> tuple[dict[str, str], list[str]]:
    """The plugin's own flags (``--cluster``/``-C``, ``--cluster-proxy-server``, ``--kubeconfig``,
    ``--context``) out of kubectl's arguments; everything after ``--`` is the command's."""
    own: dict[str, str] = {}
    rest: list[str] = []
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg == "--":
            rest += argv[index:]
            break
        name, eq, value = arg.partition("=")
        if name in OWN_FLAGS:
            if not eq:
                if index + 1 >= len(argv):
                    raise CommandError(f"flag needs an argument: {name}")
                value = argv[index + 1]
                index += 1
            own["--cluster" if name == "-C" else name] = value
        elif arg.startswith("-C") and len(arg) > 2 and not arg.startswith("--"):
            own["--cluster"] = arg[2:]
        else:
            rest.append(arg)
        index += 1
    return own, rest


def _run_pass_through(args: argparse.Namespace) -> int:
    import shutil
    import subprocess
    import tempfile

    from karmada.private_files import write_private

    built: list[str] = []

    async def main() -> int:
        own, rest = split_flags(list(args.kubectl_args))
        if own.get("--kubeconfig"):
            args.kubeconfig = own["--kubeconfig"]
        if own.get("--context"):
            args.context = own["--context"]
        if not own.get("--cluster"):
            raise CommandError(f"kubectl karmada {args.verb} needs --cluster (-C) naming the member cluster")
        if shutil.which("kubectl") is None:
            raise CommandError("kubectl is not on PATH")
        built.append(await _kubeconfig_text(args, own["--cluster"], own.get("--cluster-proxy-server", "")))
        built.extend(rest)
        return 0

    code = run_async(main)
    if code:
        return code
    text, rest = built[0], built[1:]
    with tempfile.TemporaryDirectory(prefix="karmada-proxy-") as directory:  # 0700
        path = write_private(Path(directory) / "kubeconfig", text.encode())
        # the real kubectl: its flags, its terminal handling, its WebSocket and SPDY clients
        return subprocess.call([str(shutil.which("kubectl")), args.verb, f"--kubeconfig={path}", *rest])
