"""Flags shared by every command, accepted before or after the subcommand
(kubectl refuses flags placed before a plugin's name, so users write
``kubectl karmada token list --kubeconfig X`` as often as
``kubectl karmada --kubeconfig X token list``)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from karmada.flagtypes import duration

if TYPE_CHECKING:
    from karmada.kube import ClusterConfig


def add_common(parser: argparse.ArgumentParser, *, top: bool = False) -> None:
    """``--kubeconfig`` and ``--context``; a value after the subcommand wins."""
    default: Any = None if top else argparse.SUPPRESS
    parser.add_argument(
        "--kubeconfig",
        default=default,
        metavar="PATH",
        help="kubeconfig of the Karmada control plane (default: $KUBECONFIG, else ~/.kube/config)",
    )
    parser.add_argument("--context", default=default, metavar="NAME", help="kubeconfig context to use")


def control_plane(args: argparse.Namespace) -> ClusterConfig:
    """The control plane named by ``--kubeconfig``/``--context``."""
    from karmada.kube import from_kubeconfig

    return from_kubeconfig(getattr(args, "kubeconfig", None), getattr(args, "context", None))


__all__ = ["add_common", "add_output", "control_plane", "duration"]


def add_output(parser: argparse.ArgumentParser, formats: tuple[str, ...]) -> None:
    """``-o/--output`` with kubectl's spelling of formats."""
    parser.add_argument(
        "-o",
        "--output",
        default="",
        metavar="FORMAT",
        help=f"output format: {'|'.join(formats)}",
    )
