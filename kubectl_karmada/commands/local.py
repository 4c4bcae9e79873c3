"""``local up|status|down``: a complete pull-mode Karmada on this machine."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from karmada.sandbox import DEFAULT_DIR
from kubectl_karmada.errors import CommandError, run_async
from kubectl_karmada.flags import timeout_duration


def add(commands: Any) -> None:
    local = commands.add_parser(
        "local",
        help="run a complete Karmada (control plane + member clusters) on this machine",
        description=(
            "A sandbox on 127.0.0.1 with no Docker: one API server for the control plane, one per member\n"
            "cluster (with simulated nodes and workloads), karmada-controlplane, and an agent per member that\n"
            "registered through the real bootstrap-token flow. It runs in the background; kubeconfigs and logs\n"
            "are in --dir:\n"
            "  kubectl --kubeconfig DIR/karmada.config get clusters\n"
            "  kubectl --kubeconfig DIR/members.config --context member1 get nodes"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verbs = local.add_subparsers(dest="local_command", metavar="COMMAND")
    up = verbs.add_parser("up", help="start the sandbox; returns when every member cluster is Ready")
    _dir(up)
    up.add_argument("--members", type=int, default=3, metavar="N", help="member clusters member1..N (3)")
    up.add_argument(
        "--member",
        action="append",
        default=[],
        metavar="NAME[:push]",
        help="a member by name (repeatable); NAME:push joins it in push mode",
    )
    up.add_argument(
        "--push-members", type=int, default=0, metavar="N", help="join the first N members in push mode (0)"
    )
    up.add_argument("--nodes-per-member", type=int, default=3, metavar="N", help="simulated nodes per member (3)")
    up.add_argument("--node-cpu", default="8", help="cpu of each simulated node (8)")
    up.add_argument("--node-memory", default="32Gi", help="memory of each simulated node (32Gi)")
    up.add_argument("--node-pods", type=int, default=110, help="pods per simulated node (110)")
    up.add_argument(
        "--no-simulate-workloads", action="store_true", help="do not simulate Deployments, Pods ... in the members"
    )
    up.add_argument(
        "--members-per-process",
        type=int,
        default=1,
        metavar="M",
        help=(
            "for simulating many clusters: serve M members from one `localkube serve --fleet` process and run"
            " their agents in one `karmada-agent --fleet` process (ceil(N/M) of each; push members need no"
            " agent); each member keeps its own API server, port, credentials and registration. Grouped"
            " agents run with --leader-elect=false: each simulated agent is its cluster's only candidate, and"
            " an election among one would cost a Lease write every 2s per cluster. 1 (the default) is one"
            " process per API server and per agent, as real clusters are"
        ),
    )
    up.add_argument(
        "--timeout",
        type=timeout_duration,
        default=None,
        metavar="DURATION",
        help="wait this long for Ready once all registered (180s, plus 0.5s a member beyond 100)",
    )
    up.add_argument(
        "--controlplane-arg",
        action="append",
        default=[],
        metavar="FLAG",
        help="a flag for karmada-controlplane, e.g. --controlplane-arg=--feature-gates=Failover=true (repeatable)",
    )
    up.set_defaults(run=_run_up)
    status = verbs.add_parser(
        "status", help="show the sandbox's processes and clusters; exit code 1 when a process is not running"
    )
    _dir(status)
    status.set_defaults(run=_run_status)
    down = verbs.add_parser("down", help="stop the sandbox and delete its state")
    _dir(down)
    down.set_defaults(run=_run_down)
    local.set_defaults(run=lambda _: (local.print_help(), 1)[1])


def _dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dir", type=Path, default=DEFAULT_DIR, metavar="DIR", help=f"state, kubeconfigs and logs ({DEFAULT_DIR})"
    )


def _say(line: str) -> None:
    print(line, flush=True)


def _progress(line: str) -> None:
    """A step of a long command: shown on a terminal, left out when the output is piped,
    except the closing summary ("all N members Ready in ...") that scripts may read."""
    if line.startswith("all ") or sys.stderr.isatty():
        print(line, file=sys.stderr if not line.startswith("all ") else sys.stdout, flush=True)


def _run_up(args: argparse.Namespace) -> int:
    from karmada.sandbox.sandbox import (
        CONTROLLER_MANAGER,
        PORTS_FILE,
        SandboxError,
        SandboxOptions,
        metrics_port_name,
        up,
    )

    named = [m.rsplit(":", 1) if m.endswith((":push", ":pull")) else [m, "pull"] for m in args.member]
    members = [m[0] for m in named] or [f"member{i}" for i in range(1, args.members + 1)]
    if args.members_per_process < 1:
        raise CommandError(f"--members-per-process: {args.members_per_process} is not at least 1")
    if not 0 <= args.push_members <= len(members):
        raise CommandError(f"--push-members: {args.push_members} is not between 0 and the {len(members)} members")
    push = {name for name, mode in named if mode == "push"} | set(members[: args.push_members])
    options = SandboxOptions(
        push_members=push,
        directory=args.dir.expanduser(),
        members=members,
        nodes_per_member=args.nodes_per_member,
        node_cpu=args.node_cpu,
        node_memory=args.node_memory,
        node_pods=args.node_pods,
        simulate_workloads=not args.no_simulate_workloads,
        ready_timeout=args.timeout,
        controlplane_args=list(args.controlplane_arg),
        members_per_process=args.members_per_process,
    )

    async def main() -> int:
        try:
            sandbox = await up(options, _progress)
        except (SandboxError, RuntimeError) as exc:
            raise CommandError(str(exc)) from None
        print(
            f"\nKarmada is running (in the background). To use it with plain kubectl:\n"
            f"  export KUBECONFIG={sandbox.karmada_config}\n"
            f"then try:\n"
            f"  kubectl get clusters\n"
            f"  kubectl karmada get deploy -A --all-clusters\n"
            f"  kubectl --kubeconfig {sandbox.members_config} --context {members[0]} get nodes\n"
            f"  kubectl karmada logs -C {members[0]} -n NAMESPACE POD    (the cluster proxy, over the agent's tunnel)\n"
            f"Metrics: curl http://127.0.0.1:{sandbox.ports[metrics_port_name(CONTROLLER_MANAGER)]}/metrics"
            f" (each program's port: {sandbox.directory / PORTS_FILE})\n"
            f"Logs: {sandbox.directory / 'logs'}    Stop: kubectl karmada local down"
            + ("" if args.dir.expanduser() == DEFAULT_DIR else f" --dir {args.dir}")
        )
        return 0

    return run_async(main)


def _run_status(args: argparse.Namespace) -> int:
    from karmada.kube import KubeClient, KubeError, from_kubeconfig
    from karmada.kube.resources import CLUSTERS
    from karmada.sandbox.sandbox import Sandbox
    from kubectl_karmada.output import table

    sandbox = Sandbox.load(args.dir.expanduser())
    if sandbox is None:
        print(f"no sandbox in {args.dir}")
        return 1
    rows, down = [], []
    for process in sandbox.processes:
        up, how = process.condition()
        pid = process.program_pid() if up else None
        rows.append([process.name, str(pid or "-"), how, process.log])
        if not up:
            down.append(f"{process.name} ({how})")
    print(table(["PROCESS", "PID", "STATE", "LOG"], rows), end="")

    async def clusters() -> int:
        if not sandbox.karmada_config.exists():
            return 0
        try:
            async with KubeClient(from_kubeconfig(sandbox.karmada_config)) as client:
                listed = await client.list(CLUSTERS)
        except KubeError as exc:
            print(f"\ncontrol plane unreachable: {exc.message}")
            return 1
        found = {cluster["metadata"]["name"]: cluster for cluster in listed.get("items") or []}
        groups = sandbox.group_of()
        lines = []
        for name in [*sandbox.members, *sorted(found.keys() - set(sandbox.members))]:
            cluster = found.get(name) or {}
            status = cluster.get("status") or {}
            ready = next((c["status"] for c in status.get("conditions") or [] if c.get("type") == "Ready"), "Unknown")
            nodes = status.get("nodeSummary") or {}
            mode = (cluster.get("spec") or {}).get("syncMode", "")
            if not mode and name in groups:
                mode = "Push" if name in sandbox.push_members else "Pull"
            group = groups.get(name)
            lines.append(
                [
                    name,
                    status.get("kubernetesVersion", ""),
                    mode,
                    ready if cluster else "(no Cluster)",
                    f"{nodes.get('readyNum', 0)}/{nodes.get('totalNum', 0)}",
                    group.server if group else "-",
                    (group.agent if name not in sandbox.push_members else None) or "-" if group else "-",
                ]
            )
        print()
        print(table(["CLUSTER", "VERSION", "MODE", "READY", "NODES", "SERVER PROCESS", "AGENT PROCESS"], lines), end="")
        return 0

    code = run_async(clusters)
    if down:
        print(f"error: not running: {', '.join(down)}", file=sys.stderr)
        return 1
    return code


def _run_down(args: argparse.Namespace) -> int:
    from karmada.sandbox.sandbox import Sandbox, down

    sandbox = Sandbox.load(args.dir.expanduser())
    if sandbox is None:
        print(f"no sandbox in {args.dir}")
        return 0
    down(sandbox, _say)
    print("sandbox stopped and removed")
    return 0
