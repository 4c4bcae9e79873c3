"""Flags shared by every command, accepted before or after the subcommand
(kubectl refuses flags placed before a plugin's name, so users write
``kubectl karmada token list --kubeconfig X`` as often as
``kubectl karmada --kubeconfig X token list``).

Which control plane a command talks to: ``--kubeconfig``, else ``$KUBECONFIG``,
else ``~/.kube/config``, as kubectl; and when none of these exists but a
sandbox does (``kubectl karmada local up``), the sandbox's ``karmada.config``,
announced in one line on stderr so nobody is surprised where a command went.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from karmada.flagtypes import duration

if TYPE_CHECKING:
    from karmada.kube import ClusterConfig

CONTROL_PLANE_HELP = (
    "kubeconfig of the Karmada control plane (default: $KUBECONFIG, else ~/.kube/config, "
    "else the sandbox's ~/.karmada-local/karmada.config)"
)


def add_common(
    parser: argparse.ArgumentParser, *, top: bool = False, kubeconfig_help: str = CONTROL_PLANE_HELP
) -> None:
    """``--kubeconfig`` and ``--context``; a value after the subcommand wins."""
    default: Any = None if top else argparse.SUPPRESS
    parser.add_argument("--kubeconfig", default=default, metavar="PATH", help=kubeconfig_help)
    parser.add_argument("--context", default=default, metavar="NAME", help="kubeconfig context to use")


def sandbox_kubeconfig() -> Path:
    """The sandbox's control-plane kubeconfig in its default directory (``$HOME`` read now)."""
    return Path.home() / ".karmada-local" / "karmada.config"


def control_plane_kubeconfig(args: argparse.Namespace, *, announce: bool = True) -> str | None:
    """The kubeconfig path ``--kubeconfig`` names, or the sandbox's when kubectl would find none.

    None means kubectl's own default ($KUBECONFIG or ~/.kube/config), which exists."""
    given = getattr(args, "kubeconfig", None)
    if given or os.environ.get("KUBECONFIG") or (Path.home() / ".kube" / "config").exists():
        return str(given) if given else None
    sandbox = sandbox_kubeconfig()
    if not sandbox.exists():
        return None
    if announce and not getattr(args, "_announced", False):
        print(
            f"using the sandbox's control plane: {sandbox} (no --kubeconfig, $KUBECONFIG or ~/.kube/config)",
            file=sys.stderr,
        )
        args._announced = True
    return str(sandbox)


def control_plane(args: argparse.Namespace) -> ClusterConfig:
    """The control plane named by ``--kubeconfig``/``--context`` (or the sandbox's, see above);
    in a pod with no kubeconfig at all, the pod's service account (kubectl's rule too)."""
    from karmada.kube import from_kubeconfig, in_cluster

    path, context = control_plane_kubeconfig(args), getattr(args, "context", None)
    if path is None and context is None and os.environ.get("KUBERNETES_SERVICE_HOST") and not _default_kubeconfig():
        return in_cluster()
    return from_kubeconfig(path, context)


def _default_kubeconfig() -> bool:
    return bool(os.environ.get("KUBECONFIG")) or (Path.home() / ".kube" / "config").exists()


def namespace_of(args: argparse.Namespace) -> str:
    """``-n``, else the namespace of the kubeconfig context in use, else ``default`` (kubectl's rule)."""
    import yaml

    given = getattr(args, "namespace", None)
    if given:
        return str(given)
    path = control_plane_kubeconfig(args, announce=False)
    if path is None:
        env = os.environ.get("KUBECONFIG", "")
        path = env.split(os.pathsep)[0] if env else str(Path.home() / ".kube" / "config")
    try:
        data = yaml.safe_load(Path(path).expanduser().read_text()) or {}
    except (OSError, yaml.YAMLError):
        return "default"
    name = getattr(args, "context", None) or data.get("current-context")
    for entry in data.get("contexts") or []:
        if entry.get("name") == name:
            return str((entry.get("context") or {}).get("namespace") or "default")
    return "default"


__all__ = [
    "add_common",
    "add_output",
    "add_wait",
    "control_plane",
    "control_plane_kubeconfig",
    "duration",
    "namespace_of",
    "progress",
    "sandbox_kubeconfig",
    "timeout_duration",
]


def add_output(parser: argparse.ArgumentParser, formats: tuple[str, ...]) -> None:
    """``-o/--output`` with kubectl's spelling of formats."""
    parser.add_argument(
        "-o",
        "--output",
        default="",
        metavar="FORMAT",
        help=f"output format: {'|'.join(formats)}",
    )


def progress(line: str) -> None:
    """What a long command is waiting for: on stderr, and only on a terminal."""
    if sys.stderr.isatty():
        print(line, file=sys.stderr, flush=True)


def timeout_duration(text: str) -> float:
    """kubectl's ``--timeout`` (``30s``, ``2m``, ``0``), and a bare number of seconds as earlier releases took."""
    try:
        return float(text)
    except ValueError:
        return duration(text)


def add_wait(parser: argparse.ArgumentParser, what: str, default_timeout: float, *, wait: bool = True) -> None:
    """kubectl's ``--wait`` (true/false, bare = true) and ``--timeout`` (a duration, 0 = no limit)."""
    parser.add_argument(
        "--wait",
        nargs="?",
        const="true",
        default="true" if wait else "false",
        choices=("true", "false"),
        help=f"wait for {what} ({'true' if wait else 'false'})",
    )
    parser.add_argument(
        "--timeout",
        type=timeout_duration,
        default=default_timeout,
        metavar="DURATION",
        help=f"how long to wait; 0 = no limit ({int(default_timeout)}s)",
    )
