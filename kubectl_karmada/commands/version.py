"""``version``: the plugin's version and the control plane's (its API server's
``/version``, and the karmada-controlplane image when it is deployed)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from karmada.version import __version__
from kubectl_karmada.errors import run_async
from kubectl_karmada.flags import add_common, control_plane

PROG = "kubectl karmada"


def add(commands: Any) -> None:
    parser = commands.add_parser("version", help="print the client and control-plane versions")
    add_common(parser)
    parser.add_argument("--client", action="store_true", help="the client version only (no server needed)")
    parser.add_argument("-o", "--output", default="", choices=("", "json", "yaml"), help="json or yaml")
    parser.set_defaults(run=_run_version)


def _run_version(args: argparse.Namespace) -> int:
    info: dict[str, Any] = {"clientVersion": {"gitVersion": f"v{__version__}", "program": PROG}}
    code = 0
    if not args.client:  # only then the client library and an event loop: --client answers at once
        unanswered: list[str] = []
        if run_async(lambda: _server_version(args, info, unanswered)):
            return 1  # no kubeconfig and the like: run_async printed why, and nothing else is printed
        code = 1 if unanswered else 0
    if args.output == "json":
        print(json.dumps(info, indent=2))
    elif args.output == "yaml":
        import yaml

        print(yaml.safe_dump(info, sort_keys=False), end="")
    else:
        print(f"Client Version: v{__version__}")
        if "controlPlaneVersion" in info:
            print(f"Control Plane API Server Version: {info['controlPlaneVersion']['apiServer']}")
    return code


async def _server_version(args: argparse.Namespace, info: dict[str, Any], unanswered: list[str]) -> int:
    """The API server's version into ``info``; an API error is printed and noted in ``unanswered``."""
    from karmada.kube import KubeClient, KubeError

    try:
        async with KubeClient(control_plane(args), timeout=10) as client:
            server = await client.raw_get("/version")
        info["controlPlaneVersion"] = {"apiServer": server.get("gitVersion", "")}
    except KubeError as exc:
        print(f"error: the control plane did not answer: {exc.message}", file=sys.stderr)
        unanswered.append(exc.message)
    return 0
