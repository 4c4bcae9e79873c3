"""The agent's flags, with Karmada's names and defaults (durations in seconds)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from karmada.durations import parse_duration
from karmada.flagtypes import boolean, comma_list, controllers, duration, options_from
from karmada.metrics import add_serving_flags

ALL_CONTROLLERS = ("clusterStatus", "execution", "workStatus", "certRotation")


@dataclass
class Options:
    """How one ``karmada-agent`` runs."""

    cluster_name: str = ""
    karmada_kubeconfig: str = ""
    karmada_context: str | None = None
    karmada_kubeconfig_namespace: str = "karmada-system"
    kubeconfig: str | None = None
    context: str | None = None
    cluster_api_endpoint: str = ""
    cluster_provider: str = ""
    cluster_region: str = ""
    cluster_zones: list[str] = field(default_factory=list)
    cluster_namespace: str = "karmada-cluster"
    proxy_server_address: str = ""
    cluster_proxy_server: str = ""
    controllers: tuple[str, ...] = ALL_CONTROLLERS
    cluster_status_update_frequency: float = 10.0
    cluster_lease_duration: float = 40.0
    cluster_lease_renew_interval_fraction: float = 0.25
    cluster_success_threshold: float = 30.0
    cluster_failure_threshold: float = 30.0
    cert_rotation_checking_interval: float = 300.0
    cert_rotation_remaining_time_threshold: float = 0.2
    leader_elect: bool = True
    leader_elect_resource_namespace: str = ""
    leader_elect_lease_duration: float = 15.0
    leader_elect_renew_deadline: float = 10.0
    leader_elect_retry_period: float = 2.0
    concurrent_work_syncs: int = 5
    resync_period: float = 0.0
    health_probe_bind_address: str = ":10357"
    metrics_bind_address: str = ":8080"
    verbosity: int = 2


def add_flags(parser: argparse.ArgumentParser) -> None:
    # required, unless --fleet or --clusters name the agents (checked in agent.cli)
    parser.add_argument("--cluster-name", default="", help="this cluster's name in Karmada (required)")
    parser.add_argument(
        "--karmada-kubeconfig",
        default="",
        metavar="PATH",
        help="the agent's kubeconfig for the control plane (default: the register Secret in the member)",
    )
    parser.add_argument("--karmada-context", metavar="NAME", help="context in --karmada-kubeconfig")
    parser.add_argument(
        "--karmada-kubeconfig-namespace",
        default="karmada-system",
        metavar="NAMESPACE",
        help="member namespace of the karmada-kubeconfig Secret, which certificate rotation updates (karmada-system)",
    )
    parser.add_argument("--kubeconfig", metavar="PATH", help="member cluster kubeconfig (default: in-cluster)")
    parser.add_argument("--context", metavar="NAME", help="context in --kubeconfig")
    parser.add_argument("--cluster-api-endpoint", default="", metavar="URL", help="member API endpoint to record")
    parser.add_argument("--cluster-provider", default="", help="provider to record on the Cluster")
    parser.add_argument("--cluster-region", default="", help="region to record on the Cluster")
    parser.add_argument("--cluster-zones", type=comma_list, default=[], metavar="ZONES", help="zones to record (a,b)")
    parser.add_argument("--cluster-namespace", default="karmada-cluster", metavar="NAMESPACE", help="Lease namespace")
    parser.add_argument("--proxy-server-address", default="", metavar="URL", help="proxy to record on the Cluster")
    parser.add_argument(
        "--cluster-proxy-server",
        default="",
        metavar="URL",
        help="the control plane's cluster proxy (https://host:port) to keep a tunnel to, so `kubectl karmada "
        "logs/exec` and clusters/NAME/proxy reach this member from outside (empty: no tunnel)",
    )
    parser.add_argument(
        "--controllers",
        type=controllers(ALL_CONTROLLERS),
        default=ALL_CONTROLLERS,
        help="'*' for all, 'name' to enable, '-name' to disable (clusterStatus, execution, workStatus, certRotation)",
    )
    for flag, value in (
        ("--cluster-status-update-frequency", "10s"),
        ("--cluster-lease-duration", "40s"),
        ("--cluster-success-threshold", "30s"),
        ("--cluster-failure-threshold", "30s"),
        ("--cert-rotation-checking-interval", "5m"),
        ("--leader-elect-lease-duration", "15s"),
        ("--leader-elect-renew-deadline", "10s"),
        ("--leader-elect-retry-period", "2s"),
    ):
        parser.add_argument(flag, type=duration, default=parse_duration(value), metavar="DURATION", help=f"({value})")
    parser.add_argument("--cluster-lease-renew-interval-fraction", type=float, default=0.25, metavar="F", help="(0.25)")
    parser.add_argument("--cert-rotation-remaining-time-threshold", type=float, default=0.2, metavar="F", help="(0.2)")
    parser.add_argument("--leader-elect", type=boolean, default=True, metavar="BOOL", help="(true)")
    parser.add_argument(
        "--leader-elect-resource-namespace",
        default="",
        metavar="NAMESPACE",
        help="control-plane namespace of the election Lease (default: karmada-es-<cluster>, which the agent owns)",
    )
    parser.add_argument(
        "--concurrent-work-syncs", type=int, default=5, metavar="N", help="Works synced concurrently (5)"
    )
    parser.add_argument(
        "--resync-period",
        type=duration,
        default=0.0,
        metavar="DURATION",
        help="how often the informers replay their objects, each Work reconciled again (0: never)",
    )
    add_serving_flags(parser)
    parser.add_argument("--v", "-v", dest="verbosity", type=int, default=2, help="log verbosity (2)")


def from_args(args: argparse.Namespace) -> Options:
    return options_from(Options, args)
