"""The control plane's flags, with Karmada's names and defaults."""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field

from karmada.durations import parse_duration
from karmada.flagtypes import boolean, comma_list, controllers, duration, options_from
from karmada.health_server import parse_bind_address
from karmada.metrics import add_serving_flags

ALL_CONTROLLERS = (
    "cluster",
    "clusterStatus",
    "agentcsrapproving",
    "detector",
    "scheduler",
    "binding",
    "bindingStatus",
    "execution",
    "workStatus",
    "namespace",
    "clustertaintpolicy",
    "gracefulEviction",
    "applicationFailover",
)


@dataclass
class Options:
    """Timing knobs and switches of ``karmada-controlplane`` (durations in seconds)."""

    kubeconfig: str | None = None
    context: str | None = None
    controllers: tuple[str, ...] = ALL_CONTROLLERS
    leader_elect: bool = True
    leader_elect_resource_namespace: str = "karmada-system"
    leader_elect_resource_name: str = "karmada-controlplane"
    leader_elect_lease_duration: float = 15.0
    leader_elect_renew_deadline: float = 10.0
    leader_elect_retry_period: float = 2.0
    cluster_monitor_period: float = 5.0
    cluster_monitor_grace_period: float = 40.0
    cluster_startup_grace_period: float = 60.0
    cleanup_check_interval: float = 10.0
    resync_period: float = 0.0  # Karmada's --resync-period: 0, the shared caches never replay
    # Push clusters' status and heartbeat (karmada-controller-manager's flags of these names)
    cluster_namespace: str = "karmada-cluster"
    cluster_status_update_frequency: float = 10.0
    cluster_lease_duration: float = 40.0
    cluster_lease_renew_interval_fraction: float = 0.25
    cluster_success_threshold: float = 30.0
    cluster_failure_threshold: float = 30.0
    concurrent_work_syncs: int = 5
    concurrent_cluster_syncs: int = 5
    scheduler_name: str = "default-scheduler"
    enable_empty_workload_propagation: bool = False
    # regexes (anchored) of namespaces never propagated, on top of Karmada's reserved ones
    skipped_propagating_namespaces: tuple[str, ...] = ("kube-.*",)
    concurrent_resource_template_syncs: int = 5
    concurrent_resourcebinding_syncs: int = 5
    concurrent_clusterresourcebinding_syncs: int = 5
    concurrent_dependent_resource_syncs: int = 2
    # failover (the taint manager runs inside the cluster controller, as in Karmada)
    enable_taint_manager: bool = True
    enable_no_execute_taint_eviction: bool = False
    no_execute_taint_eviction_purge_mode: str = "Gracefully"
    resource_eviction_rate: float = 0.5
    graceful_eviction_timeout: float = 600.0
    # Karmada's --feature-gates; gates not named keep their defaults (see FEATURE_GATE_DEFAULTS)
    feature_gates: dict[str, bool] = field(default_factory=dict)
    health_probe_bind_address: str = ":10357"
    metrics_bind_address: str = ":8080"
    # the cluster proxy (clusters/NAME/proxy and the agents' tunnels); empty: not served
    cluster_proxy_bind_address: str = ""
    cluster_proxy_tls_cert_file: str = ""
    cluster_proxy_tls_private_key_file: str = ""
    cluster_proxy_client_ca_file: str = ""
    cluster_proxy_response_timeout: float = 30.0
    verbosity: int = 2

    def feature_enabled(self, gate: str) -> bool:
        return self.feature_gates.get(gate, FEATURE_GATE_DEFAULTS.get(gate, False))


# Karmada's defaults for the gates this implementation consults
FEATURE_GATE_DEFAULTS = {
    "PropagationPolicyPreemption": False,
    "PriorityBasedScheduling": True,
    "PropagateDeps": True,
    "Failover": False,
    "GracefulEviction": True,
    "StatefulFailoverInjection": False,
}


def feature_gates(text: str) -> dict[str, bool]:
    """``A=true,B=false`` (Go's mapStringBool flag)."""
    gates: dict[str, bool] = {}
    for item in comma_list(text):
        name, sep, value = item.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f'missing bool value for feature gate "{name}"')
        gates[name.strip()] = boolean(value.strip())
    return gates


def add_flags(parser: argparse.ArgumentParser) -> None:
    defaults = Options()
    parser.add_argument("--kubeconfig", help="kubeconfig of the control-plane API server (default: in-cluster)")
    parser.add_argument("--context", help="kubeconfig context to use")
    parser.add_argument(
        "--controllers",
        type=controllers(ALL_CONTROLLERS),
        default=defaults.controllers,
        help=f"controllers to run: '*' for all, 'name' to enable, '-name' to disable ({', '.join(ALL_CONTROLLERS)})",
    )
    parser.add_argument("--leader-elect", type=boolean, default=True, metavar="BOOL", help="elect a leader (true)")
    parser.add_argument(
        "--leader-elect-resource-namespace", default=defaults.leader_elect_resource_namespace, metavar="NAMESPACE"
    )
    for flag, value in (
        ("--leader-elect-lease-duration", "15s"),
        ("--leader-elect-renew-deadline", "10s"),
        ("--leader-elect-retry-period", "2s"),
        ("--cluster-monitor-period", "5s"),
        ("--cluster-monitor-grace-period", "40s"),
        ("--cluster-startup-grace-period", "60s"),
        ("--cleanup-check-interval", "10s"),
        ("--resync-period", "0s"),
        ("--graceful-eviction-timeout", "10m"),
        ("--cluster-status-update-frequency", "10s"),
        ("--cluster-lease-duration", "40s"),
        ("--cluster-success-threshold", "30s"),
        ("--cluster-failure-threshold", "30s"),
    ):
        parser.add_argument(flag, type=duration, default=parse_duration(value), metavar="DURATION", help=f"({value})")
    parser.add_argument("--cluster-lease-renew-interval-fraction", type=float, default=0.25, metavar="F", help="(0.25)")
    parser.add_argument(
        "--cluster-namespace", default="karmada-cluster", metavar="NAMESPACE", help="Push clusters' Leases"
    )
    parser.add_argument(
        "--concurrent-cluster-syncs",
        type=int,
        default=5,
        metavar="N",
        help="Clusters synced at once by the cluster controller (5)",
    )
    parser.add_argument(
        "--concurrent-work-syncs",
        type=int,
        default=5,
        metavar="N",
        help="Works of each Push cluster synced at once (5)",
    )
    # karmada-scheduler's flags
    parser.add_argument("--scheduler-name", default=defaults.scheduler_name, metavar="NAME", help="(default-scheduler)")
    parser.add_argument(
        "--enable-empty-workload-propagation",
        type=boolean,
        nargs="?",
        const=True,
        default=False,
        metavar="BOOL",
        help="propagate workloads scaled to 0 replicas to the selected clusters (false)",
    )
    parser.add_argument(
        "--skipped-propagating-namespaces",
        type=_regex_list,
        default=defaults.skipped_propagating_namespaces,
        metavar="REGEX,...",
        help="comma-separated regexes of namespaces never propagated (kube-.*)",
    )
    for flag, kind in (
        ("--concurrent-resource-template-syncs", "resource templates"),
        ("--concurrent-resourcebinding-syncs", "ResourceBindings"),
        ("--concurrent-clusterresourcebinding-syncs", "ClusterResourceBindings"),
    ):
        parser.add_argument(flag, type=int, default=5, metavar="N", help=f"{kind} synced at once (5)")
    parser.add_argument(
        "--concurrent-dependent-resource-syncs",
        type=int,
        default=2,
        metavar="N",
        help="dependent resources synced at once (2); the distributor runs while the PropagateDeps gate is on",
    )
    parser.add_argument(
        "--enable-taint-manager",
        type=boolean,
        nargs="?",
        const=True,
        default=True,
        metavar="BOOL",
        help="evict workloads from clusters with NoExecute taints they do not tolerate (true; needs Failover=true)",
    )
    parser.add_argument(
        "--enable-no-execute-taint-eviction",
        type=boolean,
        nargs="?",
        const=True,
        default=False,
        metavar="BOOL",
        help="let the taint manager act on NoExecute taints (false: an administrator turns it on deliberately)",
    )
    parser.add_argument(
        "--no-execute-taint-eviction-purge-mode",
        type=_purge_mode,
        default=defaults.no_execute_taint_eviction_purge_mode,
        metavar="MODE",
        help="purge mode when the policy sets no failover.cluster: Gracefully or Directly (Gracefully)",
    )
    parser.add_argument(
        "--resource-eviction-rate",
        type=_eviction_rate,
        default=defaults.resource_eviction_rate,
        metavar="RATE",
        help="bindings evicted per second in a cluster failover (0.5; 0 means one per 1800s)",
    )
    parser.add_argument(
        "--feature-gates",
        type=feature_gates,
        default={},
        metavar="GATES",
        help="key=value pairs of feature gates, e.g. PropagationPolicyPreemption=true",
    )
    add_serving_flags(parser)
    add_proxy_flags(parser)
    parser.add_argument("--v", "-v", dest="verbosity", type=int, default=2, help="log verbosity (2)")


def add_proxy_flags(parser: argparse.ArgumentParser, bind_default: str = "") -> None:
    """The cluster proxy's flags: karmada-controlplane's (off unless an address is given) and
    karmada-cluster-proxy's (on ``bind_default``)."""
    proxy = parser.add_argument_group(
        "cluster proxy",
        "serve /apis/cluster.karmada.io/v1alpha1/clusters/NAME/proxy/... over HTTPS, and the tunnels agents "
        "dial to carry it to members behind NAT",
    )
    proxy.add_argument(
        "--cluster-proxy-bind-address",
        type=_proxy_address,
        default=bind_default,
        metavar="ADDRESS",
        help=f"host:port or :port to serve the cluster proxy on ({bind_default or 'empty: not served'})",
    )
    proxy.add_argument("--cluster-proxy-tls-cert-file", default="", metavar="FILE", help="its serving certificate")
    proxy.add_argument("--cluster-proxy-tls-private-key-file", default="", metavar="FILE", help="its serving key")
    proxy.add_argument(
        "--cluster-proxy-client-ca-file",
        default="",
        metavar="FILE",
        help="the CA of the Karmada API server's client certificates (users' and agents')",
    )
    proxy.add_argument(
        "--cluster-proxy-response-timeout",
        type=duration,
        default=30.0,
        metavar="DURATION",
        help="how long a member has to start answering a proxied request (30s)",
    )


def _regex_list(text: str) -> tuple[str, ...]:
    patterns = tuple(comma_list(text))
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise argparse.ArgumentTypeError(f'invalid regular expression "{pattern}": {exc}') from None
    return patterns


def _purge_mode(text: str) -> str:
    if text not in ("Gracefully", "Directly"):
        raise argparse.ArgumentTypeError(f'unsupported purge mode "{text}": use Gracefully or Directly')
    return text


def _eviction_rate(text: str) -> float:
    try:
        rate = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'invalid rate "{text}": a number of evictions per second') from None
    if rate < 0:
        raise argparse.ArgumentTypeError(f'invalid rate "{text}": must not be negative')
    return rate


def _proxy_address(text: str) -> str:
    if not text:
        return text
    try:
        parse_bind_address(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid address {text!r}: want host:port or :port") from None
    return text


def proxy_files_missing(args: argparse.Namespace) -> list[str]:
    """The TLS flags a served cluster proxy needs and were not given."""
    if not args.cluster_proxy_bind_address:
        return []
    return [
        flag
        for flag, value in (
            ("--cluster-proxy-tls-cert-file", args.cluster_proxy_tls_cert_file),
            ("--cluster-proxy-tls-private-key-file", args.cluster_proxy_tls_private_key_file),
            ("--cluster-proxy-client-ca-file", args.cluster_proxy_client_ca_file),
        )
        if not value
    ]


def from_args(args: argparse.Namespace) -> Options:
    missing = proxy_files_missing(args)
    if missing:
        print(f"error: --cluster-proxy-bind-address needs {', '.join(missing)}", file=sys.stderr)
        raise SystemExit(2)
    return options_from(Options, args)
