"""``init`` and ``deinit``: Karmada's own API server in a host cluster, or Karmada's API
installed into an API server the user runs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from karmada.flagtypes import boolean
from karmada.images import CONTROLPLANE_IMAGE, ETCD_VERSION, KUBE_REGISTRY, KUBE_VERSION
from kubectl_karmada.errors import CommandError, run_async
from kubectl_karmada.flags import add_common, control_plane, duration

DEFAULT_WEBHOOK_CERT_DIR = Path.home() / ".karmada" / "webhook"
DEFAULT_KARMADA_DATA = Path.home() / ".karmada"
KARMADA_CONFIG = "karmada.config"
DEDICATED_NEXT_STEPS = """\
Karmada is running in {host}: karmada-apiserver answers at {server}.

Its admin kubeconfig: {config}
  kubectl --kubeconfig {config} get clusters

Next:
  1. Create a bootstrap token and print the command that registers a member cluster:
       kubectl karmada token create --print-register-command --kubeconfig {config}
  2. Run that command with the member cluster's kubeconfig (--kubeconfig/--context of the member):
     its agent reaches {server} and checks it with the CA above.{proxy}
  3. Submit Deployments and PropagationPolicies to karmada-apiserver (--kubeconfig {config}),
     never to the host cluster.
"""
PROXY_NEXT_STEP = """
     It carries --cluster-proxy-server {proxy}: the agent keeps a tunnel to the
     cluster proxy, so kubectl karmada logs/exec/attach and get --live reach the member
     even behind NAT (kubectl karmada proxy-config finds the proxy by itself)."""
EXTERNAL_NEXT_STEPS = """\
Karmada's API is installed in {server}.

Next:
  1. Run the control plane against this API server (or re-run init with --deploy):
       karmada-controlplane --kubeconfig {kubeconfig}
  2. Create a bootstrap token and print the command that registers a member cluster:
       kubectl karmada token create --print-register-command{kubeconfig_flag}
  3. Run that command with the member cluster's kubeconfig (--kubeconfig/--context of the member).
"""
DESCRIPTION = """\
Install Karmada. --kubeconfig/--context name the host cluster.

--apiserver localkube (the default) deploys into the host's namespace karmada-system a
dedicated karmada-apiserver (localkube as a StatefulSet with a volume, serving TLS from its
own CA), installs Karmada's API into it, runs karmada-controlplane and karmada-webhook beside it
connected to it, and the cluster proxy (karmada-cluster-proxy: a Service on node port 32444 whose
address it publishes in the ConfigMap karmada-system/karmada-cluster-proxy; --cluster-proxy=false
leaves it out), and writes its admin kubeconfig to DIR/karmada.config (--karmada-data). Your
Deployments and policies go to that API server, so the host never runs them itself.

--apiserver kube deploys Karmada's own layout instead: etcd (a StatefulSet of 1 or 3 members,
--etcd-replicas), kube-apiserver as karmada-apiserver (--karmada-apiserver-replicas) and a
kube-controller-manager running only namespace, garbagecollector, serviceaccount-token,
bootstrapsigner, tokencleaner, csrsigning, csrcleaner, clusterrole-aggregation and
ttl-after-finished (no workload controller), from registry.k8s.io images at pinned versions
(--kube-image-registry for a mirror). Pick it for HA: 3 etcd members and 2 API servers.

--apiserver external installs Karmada's API (CRDs, namespaces, the bootstrap RBAC, cluster-info,
the webhook's registration) into the API server of --karmada-kubeconfig (default: the host's
own), after checking that it runs no workload controllers. With --deploy, the control plane and
karmada-webhook run in that same cluster.

Safe to run again: it converges (certificates and data are kept).
"""


def add(commands: Any) -> None:
    parser = commands.add_parser(
        "init",
        help="deploy Karmada into a host cluster (its own API server, control plane and webhook)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common(parser)
    parser.add_argument(
        "--apiserver",
        choices=("localkube", "kube", "external"),
        default="localkube",
        help="where Karmada's objects live: a dedicated karmada-apiserver deployed into the host (localkube: "
        "one replica; kube: kube-apiserver on etcd, for HA), or an API server you run (external)",
    )
    parser.add_argument(
        "--karmada-kubeconfig",
        metavar="FILE",
        help="--apiserver external: kubeconfig of that API server (default: the host's --kubeconfig)",
    )
    parser.add_argument(
        "--image",
        "--controlplane-image",
        dest="controlplane_image",
        default=CONTROLPLANE_IMAGE,
        metavar="IMAGE",
        help=f"image of the karmada-controlplane and karmada-webhook pods ({CONTROLPLANE_IMAGE})",
    )
    parser.add_argument(
        "--timeout",
        type=duration,
        metavar="DURATION",
        help="how long to wait for each part: pods to be ready, CRDs to be established (localkube 5m, external 60s)",
    )
    dedicated = parser.add_argument_group("--apiserver localkube and kube")
    dedicated.add_argument(
        "--apiserver-advertise-address",
        "--karmada-apiserver-advertise-address",
        dest="advertise_address",
        metavar="ADDRESS",
        help="IP or DNS name agents and users reach karmada-apiserver at (default: a node's InternalIP for "
        "NodePort, the load balancer's address for LoadBalancer)",
    )
    dedicated.add_argument(
        "--apiserver-service-type",
        choices=("NodePort", "LoadBalancer", "ClusterIP"),
        default="NodePort",
        help="type of the karmada-apiserver Service (NodePort; ClusterIP needs --apiserver-advertise-address)",
    )
    dedicated.add_argument(
        "--apiserver-node-port",
        "--port",
        dest="node_port",
        type=int,
        default=32443,
        metavar="PORT",
        help="node port of a NodePort Service (32443)",
    )
    dedicated.add_argument(
        "--cert-external-ip",
        default="",
        metavar="IPS",
        help="more IP addresses for karmada-apiserver's certificate, comma-separated",
    )
    dedicated.add_argument(
        "--cert-external-dns",
        default="",
        metavar="NAMES",
        help="more DNS names for karmada-apiserver's certificate, comma-separated",
    )
    dedicated.add_argument(
        "--apiserver-image",
        "--karmada-apiserver-image",
        dest="apiserver_image",
        metavar="IMAGE",
        help="image of karmada-apiserver: localkube's (default: --image's), or kube-apiserver's "
        f"(default: {{--kube-image-registry}}/kube-apiserver:{KUBE_VERSION})",
    )
    dedicated.add_argument(
        "--apiserver-pvc-size",
        "--etcd-pvc-size",
        dest="apiserver_pvc_size",
        default="5Gi",
        metavar="SIZE",
        help="size of karmada-apiserver's volume, or of each etcd member's (5Gi)",
    )
    dedicated.add_argument(
        "--storage-classes-name",
        metavar="NAME",
        help="StorageClass of those volumes (default: the host's default StorageClass)",
    )
    dedicated.add_argument(
        "--karmada-data",
        type=Path,
        default=DEFAULT_KARMADA_DATA,
        metavar="DIR",
        help=f"where the admin kubeconfig karmada.config is written (0600 in a 0700 directory; {DEFAULT_KARMADA_DATA})",
    )
    dedicated.add_argument(
        "--only",
        choices=("certs", "api"),
        help="run one step: certs writes every certificate and kubeconfig Secret into the host; api installs "
        "Karmada's API into a karmada-apiserver already running there, at the advertised address "
        "(the Helm chart charts/karmada-py runs these as hooks; its templates deploy the rest)",
    )
    proxy = parser.add_argument_group("--apiserver localkube and kube: the cluster proxy")
    proxy.add_argument(
        "--cluster-proxy",
        type=boolean,
        nargs="?",
        const=True,
        default=True,
        metavar="BOOL",
        help="deploy the cluster proxy (karmada-cluster-proxy, serving clusters/NAME/proxy and the agents' "
        "tunnels) and publish its address; false removes one a previous run deployed (true)",
    )
    proxy.add_argument(
        "--cluster-proxy-node-port",
        type=int,
        default=32444,
        metavar="PORT",
        help="node port of its Service when --apiserver-service-type is NodePort (32444)",
    )
    proxy.add_argument(
        "--cluster-proxy-advertise-address",
        "--cluster-proxy-advertise-url",
        dest="cluster_proxy_url",
        metavar="URL",
        help="https://HOST[:PORT] agents and users dial the proxy at (default: https://{the API server's "
        "advertised address}:{--cluster-proxy-node-port}, or the proxy's load balancer on 8443); HOST goes "
        "into its certificate. Needed with a ClusterIP Service",
    )
    kube = parser.add_argument_group("--apiserver kube")
    kube.add_argument(
        "--etcd-replicas",
        type=int,
        choices=(1, 3, 5),
        default=1,
        help="etcd members (1; 3 for HA: a quorum survives the loss of one)",
    )
    kube.add_argument(
        "--karmada-apiserver-replicas",
        dest="apiserver_replicas",
        type=int,
        default=1,
        metavar="N",
        help="kube-apiserver replicas, each on its own node (1; 2 for HA)",
    )
    kube.add_argument(
        "--kube-image-registry",
        default=KUBE_REGISTRY,
        metavar="REGISTRY",
        help=f"registry of the etcd, kube-apiserver and kube-controller-manager images: a mirror ({KUBE_REGISTRY})",
    )
    kube.add_argument(
        "--kube-image-tag",
        default=KUBE_VERSION,
        metavar="TAG",
        help=f"version of kube-apiserver and kube-controller-manager ({KUBE_VERSION})",
    )
    kube.add_argument(
        "--etcd-image", metavar="IMAGE", help=f"etcd's image (default: {{--kube-image-registry}}/etcd:{ETCD_VERSION})"
    )
    kube.add_argument(
        "--kube-controller-manager-image",
        metavar="IMAGE",
        help=f"its image (default: {{--kube-image-registry}}/kube-controller-manager:{KUBE_VERSION})",
    )
    external = parser.add_argument_group("--apiserver external")
    external.add_argument(
        "--deploy",
        action="store_true",
        help="also run karmada-controlplane and karmada-webhook in that cluster (its API server is the host's)",
    )
    parser.add_argument(
        "--webhook-url",
        metavar="URL",
        help="where the API server calls karmada-webhook (https://host:port): with --apiserver external and no "
        "--deploy, a webhook you run; with localkube, instead of its Service in the host",
    )
    parser.add_argument(
        "--webhook-cert-dir",
        type=Path,
        default=DEFAULT_WEBHOOK_CERT_DIR,
        metavar="DIR",
        help=f"external: where the webhook's CA and serving certificate are kept for --webhook-url "
        f"({DEFAULT_WEBHOOK_CERT_DIR})",
    )
    parser.set_defaults(run=_run_init)
    undo = commands.add_parser(
        "deinit",
        help="remove Karmada from a host cluster or an API server (deletes every Karmada object)",
        description=(
            "Undo init. On a host cluster with a dedicated karmada-apiserver: delete its StatefulSet, Service,\n"
            "the control plane, karmada-webhook and their Secrets; its volume and CA (secret karmada-cert) stay\n"
            "unless --purge-data, so that init again serves the same objects. Otherwise: delete what init\n"
            "installed into the API server, CRDs last (every Cluster, policy, binding and Work goes with them)."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common(undo)
    undo.add_argument(
        "--purge-data",
        action="store_true",
        help="also delete karmada-apiserver's volume, its CA and the namespace init created",
    )
    undo.add_argument("--timeout", type=duration, default=120.0, metavar="DURATION", help="wait for deletion (2m)")
    undo.set_defaults(run=_run_deinit)


def _say(line: str) -> None:
    print(line, flush=True)


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _run_init(args: argparse.Namespace) -> int:
    if args.apiserver == "external":
        return _run_external(args)
    return _run_dedicated(args)


# flags that mean something only with --apiserver kube: (flag, dest, default)
_KUBE_ONLY = (
    ("--etcd-replicas", "etcd_replicas", 1),
    ("--karmada-apiserver-replicas", "apiserver_replicas", 1),
    ("--kube-image-registry", "kube_image_registry", KUBE_REGISTRY),
    ("--kube-image-tag", "kube_image_tag", KUBE_VERSION),
    ("--etcd-image", "etcd_image", None),
    ("--kube-controller-manager-image", "kube_controller_manager_image", None),
)
# flags of the dedicated layouts' cluster proxy: (flag, dest, default)
_PROXY_FLAGS = (
    ("--cluster-proxy", "cluster_proxy", True),
    ("--cluster-proxy-node-port", "cluster_proxy_node_port", 32444),
    ("--cluster-proxy-advertise-address", "cluster_proxy_url", None),
)


def _proxy_options(args: argparse.Namespace) -> Any:
    from karmada.install.cluster_proxy import ProxyOptions, check_url

    if not 30000 <= args.cluster_proxy_node_port <= 32767:
        raise CommandError(f"--cluster-proxy-node-port {args.cluster_proxy_node_port} is outside 30000-32767")
    if args.cluster_proxy_node_port == args.node_port and args.apiserver_service_type == "NodePort":
        raise CommandError(f"--cluster-proxy-node-port {args.node_port} is karmada-apiserver's node port too")
    if not args.cluster_proxy:
        for flag, value, default in _PROXY_FLAGS[1:]:
            if getattr(args, value) != default:
                raise CommandError(f"{flag} is for the cluster proxy, which --cluster-proxy=false leaves out")
        return ProxyOptions(enabled=False)
    url = None
    if args.cluster_proxy_url:
        try:
            url = check_url(args.cluster_proxy_url)
        except ValueError as exc:
            raise CommandError(f"--cluster-proxy-advertise-address: {exc}") from None
    elif args.apiserver_service_type == "ClusterIP":
        raise CommandError(
            "a ClusterIP Service needs --cluster-proxy-advertise-address for the cluster proxy (where it is "
            "reachable), or --cluster-proxy=false"
        )
    return ProxyOptions(node_port=args.cluster_proxy_node_port, advertise_url=url)


def _run_dedicated(args: argparse.Namespace) -> int:
    from karmada.install.apiserver_kube import KubeOptions
    from karmada.install.apiserver_localkube import ApiserverOptions
    from karmada.install.dedicated import DedicatedOptions, install
    from karmada.kube import KubeClient
    from karmada.private_files import private_directory, write_private

    async def main() -> int:
        for flag, given in (("--deploy", args.deploy), ("--karmada-kubeconfig", args.karmada_kubeconfig)):
            if given:
                raise CommandError(f"{flag} is for --apiserver external")
        if args.apiserver_service_type == "ClusterIP" and not args.advertise_address:
            raise CommandError("a ClusterIP Service needs --apiserver-advertise-address (where it is reachable)")
        if not 30000 <= args.node_port <= 32767:
            raise CommandError(f"--apiserver-node-port {args.node_port} is outside 30000-32767")
        kube = None
        if args.apiserver == "kube":
            kube = KubeOptions(
                registry=args.kube_image_registry,
                kube_version=args.kube_image_tag,
                etcd_image=args.etcd_image,
                apiserver_image=args.apiserver_image,
                controller_manager_image=args.kube_controller_manager_image,
                etcd_replicas=args.etcd_replicas,
                apiserver_replicas=args.apiserver_replicas,
                storage_size=args.apiserver_pvc_size,
                storage_class_name=args.storage_classes_name,
            )
        else:
            for flag, value, default in _KUBE_ONLY:
                if getattr(args, value) != default:
                    raise CommandError(f"{flag} is for --apiserver kube")
        host_config = control_plane(args)
        options = DedicatedOptions(
            kube=kube,
            apiserver=ApiserverOptions(
                image=(args.apiserver_image if kube is None else None) or args.controlplane_image,
                service_type=args.apiserver_service_type,
                node_port=args.node_port,
                storage_size=args.apiserver_pvc_size,
                storage_class_name=args.storage_classes_name,
            ),
            advertise_address=args.advertise_address,
            extra_sans=tuple(_names(args.cert_external_ip) + _names(args.cert_external_dns)),
            controlplane_image=args.controlplane_image,
            timeout=args.timeout or 300.0,
            webhook_url=args.webhook_url,
            cluster_proxy=_proxy_options(args),
        )
        async with KubeClient(host_config) as host:
            installed = await install(host, options, _say, only=args.only)
        proxy = f", the cluster proxy at {installed.cluster_proxy}" if installed.cluster_proxy else ""
        if args.only:
            print(f"init --only {args.only}: done (karmada-apiserver is advertised at {installed.server}{proxy})")
            return 0
        config = write_private(private_directory(args.karmada_data) / KARMADA_CONFIG, installed.kubeconfig.encode())
        print(f"wrote {config}")
        step = PROXY_NEXT_STEP.format(proxy=installed.cluster_proxy) if installed.cluster_proxy else ""
        print(
            DEDICATED_NEXT_STEPS.format(host=host_config.server, server=installed.server, config=config, proxy=step),
            end="",
        )
        return 0

    return run_async(main)


def _run_external(args: argparse.Namespace) -> int:
    from karmada.install import InitOptions, init
    from karmada.install.workload_controllers import refusal, workload_controller_signs
    from karmada.kube import KubeClient, from_kubeconfig

    async def main() -> int:
        if args.only:
            raise CommandError("--only is for --apiserver localkube or kube (the steps of a dedicated install)")
        for flag, value, default in _PROXY_FLAGS[1:]:  # --cluster-proxy=false: what external does anyway
            if getattr(args, value) != default:
                raise CommandError(
                    f"{flag} is for --apiserver localkube or kube: with an external API server init has no key "
                    "of its CA to issue the proxy's certificate (run karmada-controlplane --cluster-proxy-* yourself)"
                )
        host_config = control_plane(args)
        config = from_kubeconfig(args.karmada_kubeconfig) if args.karmada_kubeconfig else host_config
        if args.deploy and config.server != host_config.server:
            raise CommandError(
                "--deploy runs the control plane in the cluster whose API server holds Karmada's objects; "
                f"{config.server} is not the host's ({host_config.server}): run karmada-controlplane and "
                "karmada-webhook with --kubeconfig FILE yourself, or use --apiserver localkube"
            )
        async with KubeClient(config) as client:
            signs = await workload_controller_signs(client)
            if signs:
                raise CommandError(refusal(config.server, signs))
            options = InitOptions(
                args.deploy, args.controlplane_image, args.timeout or 60.0, args.webhook_url, args.webhook_cert_dir
            )
            await init(client, options, _say)
        kubeconfig = args.karmada_kubeconfig or getattr(args, "kubeconfig", None)
        print(
            EXTERNAL_NEXT_STEPS.format(
                server=config.server,
                kubeconfig=kubeconfig or "<this kubeconfig>",
                kubeconfig_flag=f" --kubeconfig {kubeconfig}" if kubeconfig else "",
            ),
            end="",
        )
        return 0

    return run_async(main)


def _run_deinit(args: argparse.Namespace) -> int:
    from karmada.install import deinit
    from karmada.install.dedicated import installed_here, uninstall
    from karmada.kube import KubeClient

    async def main() -> int:
        async with KubeClient(control_plane(args)) as client:
            if await installed_here(client):
                await uninstall(client, _say, purge_data=args.purge_data, timeout=args.timeout)
            else:
                await deinit(client, _say, args.timeout)
        print("Karmada removed.", file=sys.stdout)
        return 0

    return run_async(main)
