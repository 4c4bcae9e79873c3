"""Many agents in one ``karmada-agent`` process, to simulate many member
clusters on one machine (``--fleet FILE``, or ``--clusters N
--cluster-name-prefix P`` with ``{cluster}`` in the path flags). A real
cluster runs one agent of its own; nothing here is for production.

Each agent is what a single ``karmada-agent`` would be: its own options,
credentials (``--karmada-kubeconfig`` or its member's ``karmada-kubeconfig``
Secret), two :class:`~karmada.kube.KubeClient` (so its own connection pools
and client certificate), identity, leader election, informers, queue and
supervisor, all inside one asyncio task. They share the event loop and the
process's ``/healthz``, ``/readyz`` and ``/metrics`` only. Connection pools
are not shared: a TLS connection carries one client certificate, so agents
could never reuse each other's connections anyway.

An agent that fails (unreadable kubeconfig, credentials the control plane
refuses, an unreachable member or control plane, an exception) is retried
with backoff inside its own task; the others never wait for it. Its state is
in ``/readyz?verbose``, and every log line it writes names its cluster (a
context variable set in its task, which the tasks it starts inherit).

The fleet file is JSON, ``{"agents": [{"cluster-name": "member1",
"kubeconfig": "...", ...}]}``: each entry sets any per-agent flag by its long
name without the dashes, over the flags given on the command line.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import contextvars
import json
import logging
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.options import Options, from_args

log = logging.getLogger("agent.fleet")

# flags of the process, not of one agent: refused in a fleet entry
PROCESS_FLAGS = frozenset(
    {"fleet", "clusters", "cluster-name-prefix", "health-probe-bind-address", "metrics-bind-address", "v", "version"}
)
PLACEHOLDER = "{cluster}"
MAX_CLUSTER_NAME = 48  # Karmada's limit on a Cluster's name

CLUSTER: contextvars.ContextVar[str] = contextvars.ContextVar("agent_cluster", default="")


class FleetError(Exception):
    """The fleet file or the fleet flags are unusable; the message names the entry and field."""


def add_fleet_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "many agents in one process (simulation only)",
        "Run one agent per simulated member cluster as tasks of this process, each with its own identity,\n"
        "credentials, Lease, leader election, informers and queue. For simulating many clusters on one\n"
        "machine: a real member cluster runs one agent of its own (the default, without these flags).",
    )
    group.add_argument(
        "--fleet",
        metavar="FILE",
        help='JSON {"agents": [{"cluster-name": "member1", "kubeconfig": "...", ...}]}: one agent per entry, '
        "each entry setting agent flags by their long names without dashes, over the command line's",
    )
    group.add_argument(
        "--clusters",
        type=_positive,
        metavar="N",
        help=f"run N agents named <prefix>1..<prefix>N; {PLACEHOLDER} in --kubeconfig, --karmada-kubeconfig "
        "and the other text flags becomes each name",
    )
    group.add_argument(
        "--cluster-name-prefix", default="member", metavar="PREFIX", help="the names --clusters makes (member)"
    )


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid count {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def is_fleet(args: argparse.Namespace) -> bool:
    return bool(args.fleet) or args.clusters is not None


def agent_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[Options]:
    """One :class:`Options` per agent, from ``--fleet`` or ``--clusters``; FleetError when unusable."""
    if args.fleet and args.clusters is not None:
        raise FleetError("--fleet and --clusters are exclusive: give one")
    if args.cluster_name:
        raise FleetError("--cluster-name names one agent; with --fleet or --clusters each agent has its own name")
    if args.clusters is not None:
        names = [f"{args.cluster_name_prefix}{i}" for i in range(1, args.clusters + 1)]
        if args.clusters > 1 and PLACEHOLDER not in (args.kubeconfig or ""):
            raise FleetError(f"--clusters {args.clusters} needs {PLACEHOLDER} in --kubeconfig: one member each")
        entries: list[dict[str, Any]] = [{"cluster-name": name} for name in names]
        where = "--clusters"
    else:
        entries = _read_fleet(Path(args.fleet))
        where = f"fleet file {args.fleet}"
    actions = per_agent_actions(parser)
    fleet: list[Options] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        values = vars(args).copy()
        label = f"{where}: agents[{index}]"
        name = entry.get("cluster-name")
        if not isinstance(name, str) or not name:
            raise FleetError(f'{label}: "cluster-name" is required (a non-empty string)')
        label += f" ({name})"
        _check_name(name, label)
        if name in seen:
            raise FleetError(f'{label}: "cluster-name" {name} appears twice')
        seen.add(name)
        for key, value in entry.items():
            if key in PROCESS_FLAGS:
                raise FleetError(f'{label}: "{key}" is a flag of the process, not of one agent')
            action = actions.get(key)
            if action is None:
                raise FleetError(f'{label}: unknown flag "{key}" (want an agent flag\'s long name without dashes)')
            values[action.dest] = _value(action, value, f'{label}: "{key}"')
        _substitute(values, name)
        fleet.append(from_args(argparse.Namespace(**values)))
    return fleet


def per_agent_actions(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """Long flag name without dashes -> its argparse action, for the flags an entry may set."""
    found: dict[str, argparse.Action] = {}
    for action in parser._actions:  # argparse has no public list of its actions
        for option in action.option_strings:
            if option.startswith("--") and option[2:] not in PROCESS_FLAGS and action.dest != "help":
                found[option[2:]] = action
    return found


def _read_fleet(path: Path) -> list[dict[str, Any]]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise FleetError(f"fleet file {path}: cannot read: {exc.strerror}") from None
    except ValueError as exc:
        raise FleetError(f"fleet file {path}: not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise FleetError(f'fleet file {path}: want an object {{"agents": [...]}}')
    unknown = sorted(set(document) - {"agents"})
    if unknown:
        raise FleetError(f'fleet file {path}: unknown field "{unknown[0]}" (want "agents")')
    agents = document.get("agents")
    if not isinstance(agents, list) or not agents:
        raise FleetError(f'fleet file {path}: "agents" must be a non-empty list')
    for index, entry in enumerate(agents):
        if not isinstance(entry, dict):
            raise FleetError(f"fleet file {path}: agents[{index}] must be an object of flag names and values")
    return agents


def _check_name(name: str, label: str) -> None:
    valid = all(c.islower() or c.isdigit() or c == "-" for c in name) and name[0].isalnum() and name[-1].isalnum()
    if not valid or len(name) > MAX_CLUSTER_NAME:
        raise FleetError(
            f'{label}: "cluster-name" must be lower-case letters, digits and "-", starting and ending '
            f"alphanumeric, at most {MAX_CLUSTER_NAME} characters"
        )


def _value(action: argparse.Action, value: Any, label: str) -> Any:
    """A JSON value as the flag's parser would have read it from the command line."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int | float | str):
        text = str(value)
    elif isinstance(value, list) and all(isinstance(item, str) for item in value):
        text = ",".join(value)  # the list flags (--cluster-zones, --controllers) are comma-separated
    else:
        raise FleetError(f"{label}: want a string, number, boolean or list of strings, got {json.dumps(value)}")
    convert = action.type if callable(action.type) else str
    try:
        converted = convert(text)
    except (argparse.ArgumentTypeError, ValueError, TypeError) as exc:
        raise FleetError(f"{label}: {exc or 'invalid value ' + repr(text)}") from None
    if action.choices is not None and converted not in action.choices:
        raise FleetError(f"{label}: {text!r} is not one of {', '.join(map(str, action.choices))}")
    return converted


def _substitute(values: dict[str, Any], name: str) -> None:
    for key, value in values.items():
        if isinstance(value, str) and PLACEHOLDER in value:
            values[key] = value.replace(PLACEHOLDER, name)


# -- logs that name their cluster --------------------------------------------


class ClusterLogFilter(logging.Filter):
    """Adds ``cluster`` (`` [member1]``, or empty outside any agent) to every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        name = CLUSTER.get()
        record.cluster = f" [{name}]" if name else ""
        return True


def name_clusters_in_logs() -> None:
    """Every handler of the root logger prefixes its lines with the agent's cluster."""
    from karmada.program import LOG_FORMAT

    fmt = LOG_FORMAT.replace("%(name)s:", "%(name)s%(cluster)s:")
    for handler in logging.getLogger().handlers:
        handler.addFilter(ClusterLogFilter())
        handler.setFormatter(logging.Formatter(fmt))


@contextlib.contextmanager
def cluster_context(name: str) -> Iterator[None]:
    token = CLUSTER.set(name)
    try:
        yield
    finally:
        CLUSTER.reset(token)


@dataclass
class Backoff:
    """Exponential backoff with jitter, reset after a run that lasted ``reset_after``."""

    initial: float = 1.0
    maximum: float = 60.0
    reset_after: float = 60.0
    current: float = 0.0

    def next(self, ran_for: float) -> float:
        if ran_for >= self.reset_after or self.current == 0.0:
            self.current = self.initial
        else:
            self.current = min(self.current * 2, self.maximum)
        return self.current * random.uniform(0.8, 1.2)  # agents that fail together do not retry in lockstep


async def sleep_or_stop(seconds: float, stop: asyncio.Event) -> None:
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await stop.wait()
