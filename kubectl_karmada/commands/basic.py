"""``version``: the plugin's version (``validate`` lives in its own module)."""

from __future__ import annotations

import argparse
from typing import Any

from karmada.version import __version__

PROG = "kubectl karmada"


def add(commands: Any) -> None:
    version = commands.add_parser("version", help="print the plugin's version")
    version.set_defaults(run=_run_version)


def _run_version(_: argparse.Namespace) -> int:
    print(f"{PROG} {__version__}")
    return 0
