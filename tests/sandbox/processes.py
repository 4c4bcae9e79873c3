"""What the tests read of a sandbox's recorded processes (``sandbox.json``)."""

from __future__ import annotations

from typing import Any


def probe_port(state: dict[str, Any], process: str) -> int:
    """The port of the last ``--health-probe-bind-address`` ``process`` was started with (argparse's rule)."""
    args = next(p["args"] for p in state["processes"] if p["name"] == process)
    flags = [arg for arg in args if arg.startswith("--health-probe-bind-address=")]
    return int(flags[-1].rsplit(":", 1)[1])
