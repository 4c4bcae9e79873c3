"""``completion bash|zsh``: a shell completion script for ``kubectl-karmada``
(and ``kubectl karmada`` through kubectl's plugin completion, which runs
``kubectl_complete-karmada``), generated from the argument parser by shtab."""

from __future__ import annotations

import argparse
from typing import Any

SHELLS = ("bash", "zsh")


def add(commands: Any) -> None:
    parser = commands.add_parser(
        "completion",
        help="print a shell completion script (bash or zsh)",
        description=(
            "Print the completion script of kubectl-karmada for SHELL. Load it with\n"
            "  source <(kubectl karmada completion bash)      # bash, e.g. in ~/.bashrc\n"
            "  source <(kubectl karmada completion zsh)       # zsh, e.g. in ~/.zshrc"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("shell", choices=SHELLS, metavar="SHELL", help="bash or zsh")
    parser.set_defaults(run=_run_completion)


def _run_completion(args: argparse.Namespace) -> int:
    import shtab

    from kubectl_karmada.cli import build_parser

    parser = build_parser()
    parser.prog = "kubectl-karmada"
    print(shtab.complete(parser, shell=args.shell), end="")
    return 0
