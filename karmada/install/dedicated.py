"""``init`` on a host cluster: a dedicated ``karmada-apiserver`` (localkube) in
``karmada-system``, Karmada's API installed into it, and the control plane and
karmada-webhook beside it in the host, connected to it.

Why: templates (Deployments, Jobs ...) submitted to the host's own API server
would run as Pods there, and its kube-controller-manager would fight the
binding-status controller over ``.status``. The dedicated server runs no
workload controller: it only stores.

The phases, each a server-side apply that converges when run again, each
reported by ``say``:

1. host: the namespace, the API server's Service (a LoadBalancer's address is
   waited for: it goes into the certificate), its PKI Secret (kept across runs,
   see :func:`~karmada.install.apiserver_localkube.ensure_pki`) and StatefulSet,
   whose pod template carries a hash of the mounted files so that a reissued
   certificate rolls the pod; then wait until it is ready;
2. the Karmada API server, reached at the advertised address with the admin
   certificate once ``/readyz`` answers: CRDs, namespaces, bootstrap RBAC,
   ``cluster-info`` naming that address and CA (what ``register`` verifies),
   the components' RBAC, and the webhook, called through an ExternalName
   Service naming its Service in the host (or ``webhook_url``);
3. host: the webhook's certificates, one kubeconfig Secret per component (a
   client certificate from the API server's CA) and their workloads; then wait
   until both Deployments are available.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from karmada.clusterproxy.endpoint import CONFIGMAP as PROXY_CONFIGMAP
from karmada.clusterproxy.endpoint import Endpoint, publish
from karmada.images import CONTROLPLANE_IMAGE
from karmada.install import apiserver_kube, cluster_proxy, hosted_components, webhook
from karmada.install import apiserver_localkube as apiserver
from karmada.install.init import FIELD_MANAGER, MANAGED_BY, InitOptions, cluster_info, deploy_documents, describe
from karmada.install.init import init as install_api
from karmada.kube import KubeClient, KubeError, ResourceMapper, from_kubeconfig_bytes
from karmada.kube.objects import apply_object, delete_if_present, delete_object, wait_until
from karmada.kube.resources import CONFIGMAPS, DEPLOYMENTS, NAMESPACES, NODES, SECRETS, Resource

Obj = dict[str, Any]
Say = Callable[[str], None]
STATEFULSETS = Resource("apps", "v1", "statefulsets", "StatefulSet", True)
SERVICES = Resource("", "v1", "services", "Service", True)
PVCS = Resource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True)
NAMESPACE = apiserver.NAMESPACE
ADMIN_CONFIG_SECRET = "karmada-admin-config"  # the admin kubeconfig, for who installs with the Helm chart
PKI_HASH_ANNOTATION = "karmada.io/pki-hash"  # changes roll the API server's pod onto new certificates
_CONTROL_PLANE_ROLES = ("node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master")


@dataclass(frozen=True)
class DedicatedOptions:
    """What ``init`` deploys into the host. ``advertise_address``: the address agents and users
    reach the API server at (a NodePort Service's default: a control-plane node's InternalIP; a
    LoadBalancer's: its ingress); ``extra_sans``: more names for its certificate;
    ``webhook_url``: where karmada-apiserver calls karmada-webhook instead of its Service;
    ``kube``: run Kubernetes' own API server on etcd (:mod:`~karmada.install.apiserver_kube`)
    instead of localkube; ``cluster_proxy``: the cluster proxy (:mod:`~karmada.install.cluster_proxy`),
    its Service of the API server's Service type."""

    apiserver: apiserver.ApiserverOptions = field(default_factory=apiserver.ApiserverOptions)
    advertise_address: str | None = None
    extra_sans: tuple[str, ...] = ()
    controlplane_image: str = CONTROLPLANE_IMAGE
    timeout: float = 300.0
    webhook_url: str | None = None
    cluster_domain: str = "cluster.local"
    kube: apiserver_kube.KubeOptions | None = None  # None: localkube
    cluster_proxy: cluster_proxy.ProxyOptions = field(default_factory=cluster_proxy.ProxyOptions)

    def __post_init__(self) -> None:
        if self.kube is not None and self.kube.cluster_domain != self.cluster_domain:
            raise ValueError(f"cluster domains differ: {self.kube.cluster_domain} and {self.cluster_domain}")


@dataclass(frozen=True, repr=False)
class Installed:
    """The advertised URL, the admin kubeconfig (credentials embedded: write it 0600) and
    where agents dial the cluster proxy (``None``: not deployed)."""

    server: str
    kubeconfig: str
    cluster_proxy: str | None = None


# ---- the objects, as the manifests in manifests/host and the Helm chart hold them too


def namespace_object() -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": NAMESPACE, "labels": {MANAGED_BY: FIELD_MANAGER}},
    }


def apiserver_workloads(options: DedicatedOptions) -> list[Obj]:
    """What runs karmada-apiserver in the host, without its Secrets, in apply order."""
    service = apiserver.service(options.apiserver)
    if options.kube is None:
        return [service, apiserver.statefulset(options.apiserver)]
    return [service, *apiserver_kube.host_objects(options.kube, options.apiserver.port)]


def secret_names(kube: bool) -> list[str]:
    """Every Secret init keeps in the host for a layout (what :func:`_credentials` writes)."""
    users = [*hosted_components.COMPONENTS, *([apiserver_kube.CONTROLLER_MANAGER] if kube else [])]
    return [
        apiserver.SECRET_NAME,
        ADMIN_CONFIG_SECRET,
        *([apiserver_kube.ETCD_SECRET] if kube else []),
        webhook.SECRET_NAME,
        *(hosted_components.config_secret_name(user) for user in users),
        cluster_proxy.SECRET_NAME,
    ]


def component_workloads(options: DedicatedOptions) -> list[Obj]:
    """karmada-controlplane and karmada-webhook in the host, their Service and budgets, and
    the cluster proxy's Deployment and Service."""
    _, workloads = hosted_components.split(deploy_documents(options.controlplane_image))
    hosted = hosted_components.hosted_workloads(workloads)
    if options.cluster_proxy.enabled:
        (controlplane,) = [o for o in hosted if _is(o, "Deployment", hosted_components.COMPONENTS[0])]
        hosted += [cluster_proxy.deployment(controlplane), proxy_service(options)]
    return hosted


def proxy_service(options: DedicatedOptions) -> Obj:
    return cluster_proxy.service(options.apiserver.service_type, options.cluster_proxy.node_port)


def _is(obj: Obj, kind: str, name: str) -> bool:
    return bool(obj["kind"] == kind and obj["metadata"]["name"] == name)


def host_objects(options: DedicatedOptions) -> list[Obj]:
    """Everything init deploys into the host except the Secrets (they hold keys)."""
    return [namespace_object(), *apiserver_workloads(options), *component_workloads(options)]


# ---- phase 1: the API server in the host


async def _advertise_address(host: KubeClient, options: DedicatedOptions, say: Say) -> str:
    if options.advertise_address:
        return options.advertise_address
    kind = options.apiserver.service_type
    if kind == "LoadBalancer":
        return await _load_balancer_address(host, apiserver.NAME, options, say)
    if kind == "NodePort":
        address = await _node_address(host)
        if address:
            say(f"advertising {address} (a node's InternalIP; --apiserver-advertise-address to choose)")
            return address
        raise ValueError("the host cluster has no Node with an InternalIP: pass --apiserver-advertise-address")
    raise ValueError(f"a {kind} Service has no address outside the cluster: pass --apiserver-advertise-address")


async def _load_balancer_address(host: KubeClient, name: str, options: DedicatedOptions, say: Say) -> str:
    say(f"waiting for service/{name} -n {NAMESPACE} to get a load balancer address")

    async def ingress() -> str | None:
        service = await host.get(SERVICES, name, NAMESPACE)
        for entry in ((service.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []:
            if entry.get("ip") or entry.get("hostname"):
                return str(entry.get("ip") or entry.get("hostname"))
        return None

    return str(await wait_until(ingress, options.timeout, interval=1.0, what=f"a load balancer address of {name}"))


async def _cluster_proxy_url(host: KubeClient, options: DedicatedOptions, address: str, say: Say) -> str | None:
    """Where agents and users dial the cluster proxy: the URL given, else the API server's
    advertised address on the proxy's node port, else its own load balancer's address."""
    proxy = options.cluster_proxy
    if not proxy.enabled:
        return None
    if proxy.advertise_url:
        return cluster_proxy.check_url(proxy.advertise_url)
    kind = options.apiserver.service_type
    if kind == "NodePort":
        return cluster_proxy.url_for(address, proxy.node_port)
    if kind == "LoadBalancer":
        ingress = await _load_balancer_address(host, cluster_proxy.NAME, options, say)
        return cluster_proxy.url_for(ingress, cluster_proxy.CONTAINER_PORT)
    raise ValueError(f"a {kind} Service has no address outside the cluster: pass --cluster-proxy-advertise-address")


async def _node_address(host: KubeClient) -> str | None:
    """A control-plane node's InternalIP (karmadactl init's choice), else any node's."""
    nodes = (await host.list(NODES)).get("items") or []

    def worker(node: Obj) -> bool:
        return not any(role in (node["metadata"].get("labels") or {}) for role in _CONTROL_PLANE_ROLES)

    ordered = sorted(nodes, key=worker)
    for node in ordered:
        for address in (node.get("status") or {}).get("addresses") or []:
            if address.get("type") == "InternalIP" and address.get("address"):
                return str(address["address"])
    return None


def _url(address: str, options: apiserver.ApiserverOptions) -> str:
    port = options.node_port if options.service_type == "NodePort" else options.port
    host = f"[{address}]" if ":" in address else address
    return f"https://{host}:{port}"


def pki_hash(secret: Obj) -> str:
    """A digest of what the API server's pod mounts from its Secret."""
    digest = hashlib.sha256()
    for key in sorted(secret["data"]):
        digest.update(key.encode() + b"\0" + secret["data"][key].encode() + b"\0")
    return digest.hexdigest()[:16]


async def _rolled_out(host: KubeClient, resource: Resource, name: str) -> bool:
    """Whether a StatefulSet or Deployment runs only its current template, every replica ready
    (``kubectl rollout status``'s test: an old ready pod beside a pending new one is not done)."""
    obj = await host.get_or_none(resource, name, NAMESPACE)
    if obj is None:
        return False
    status = obj.get("status") or {}
    wanted = (obj.get("spec") or {}).get("replicas", 1)
    if status.get("observedGeneration", 0) < obj["metadata"].get("generation", 0):
        return False
    if resource is STATEFULSETS:
        updated = status.get("updateRevision") in (None, status.get("currentRevision"))
        return bool(updated and status.get("readyReplicas", 0) >= wanted)
    counts = [status.get(key, 0) for key in ("replicas", "updatedReplicas", "availableReplicas")]
    return all(count == wanted for count in counts)


async def _wait_rolled_out(
    host: KubeClient, resource: Resource, name: str, options: DedicatedOptions, say: Say
) -> None:
    what = f"{resource.kind.lower()}/{name} -n {NAMESPACE}"
    say(f"waiting for {what} to be ready")
    await wait_until(lambda: _rolled_out(host, resource, name), options.timeout, interval=1.0, what=f"{name} ready")
    say(f"{what} ready")


async def _answering(client: KubeClient) -> bool:
    try:
        return (await client.raw_text("/readyz")).strip() == "ok"
    except (TimeoutError, KubeError, OSError):
        return False


# ---- the Secrets: every certificate and kubeconfig, kept across runs


Only = Literal["certs", "api"]


@dataclass(frozen=True, repr=False)
class Credentials:
    """The API server's PKI, the webhook's certificates and every Secret init keeps in the host
    (apply order: each before what mounts it)."""

    pki: apiserver.ApiserverPKI
    webhook: webhook.WebhookCertificates
    secrets: tuple[Obj, ...]

    def secret(self, name: str) -> Obj:
        (found,) = [s for s in self.secrets if s["metadata"]["name"] == name]
        return found


async def _credentials(
    host: KubeClient, url: str, address: str, options: DedicatedOptions, proxy_url: str | None = None
) -> Credentials:
    async def stored(name: str) -> Obj | None:
        return await host.get_or_none(SECRETS, name, NAMESPACE)

    kept = apiserver.pki_from_secret(await stored(apiserver.SECRET_NAME))
    pki = apiserver.ensure_pki(kept, [address], options.extra_sans, cluster_domain=options.cluster_domain)
    secrets = [apiserver.pki_secret(pki)]
    admin = apiserver.admin_kubeconfig(pki, url)
    secrets.append(hosted_components.config_secret(apiserver.NAME, admin, name=ADMIN_CONFIG_SECRET))
    users = {component: hosted_components.user_of(component) for component in hosted_components.COMPONENTS}
    if options.kube is not None:
        etcd = apiserver_kube.ensure_etcd_pki(
            apiserver_kube.etcd_pki_from_secret(await stored(apiserver_kube.ETCD_SECRET)), options.kube
        )
        secrets.append(apiserver_kube.etcd_secret(etcd))
        users[apiserver_kube.CONTROLLER_MANAGER] = apiserver_kube.CONTROLLER_MANAGER_USER
    certificates = webhook.certificates_from_secret(await stored(webhook.SECRET_NAME)) or webhook.new_certificates()
    secrets.append(webhook.certificates_secret(certificates))
    for component, user in users.items():
        name = hosted_components.config_secret_name(component)
        cert, key = hosted_components.client_certificate(
            component, pki.ca_cert, pki.ca_key, await stored(name), user=user
        )
        kubeconfig = hosted_components.component_kubeconfig(component, _service_url(options), pki.ca_cert, cert, key)
        secrets.append(hosted_components.config_secret(component, kubeconfig))
    if proxy_url is not None:
        hosts = [address, cluster_proxy.url_host(proxy_url)]
        sans = cluster_proxy.subject_alt_names(hosts, options.extra_sans, options.cluster_domain)
        cert, key = cluster_proxy.serving_pair(await stored(cluster_proxy.SECRET_NAME), pki.ca_cert, pki.ca_key, sans)
        secrets.append(cluster_proxy.secret(cert, key, pki.ca_cert))
    return Credentials(pki, certificates, tuple(secrets))


async def _stored_credentials(host: KubeClient) -> Credentials:
    """What ``--only certs`` stored (``--only api`` needs only the PKI and the webhook's CA)."""
    pki = apiserver.pki_from_secret(await host.get_or_none(SECRETS, apiserver.SECRET_NAME, NAMESPACE))
    stored = await host.get_or_none(SECRETS, webhook.SECRET_NAME, NAMESPACE)
    certificates = webhook.certificates_from_secret(stored)
    if pki is None or certificates is None:
        raise ValueError(
            f"secret/{apiserver.SECRET_NAME} or secret/{webhook.SECRET_NAME} -n {NAMESPACE} is missing or invalid: "
            "run init --only certs first"
        )
    return Credentials(pki, certificates, ())


# ---- phase 1: the API server in the host


async def _apiserver(
    host: KubeClient, mapper: ResourceMapper, credentials: Credentials, options: DedicatedOptions, say: Say
) -> None:
    _, *workloads = apiserver_workloads(options)
    secret = credentials.secret(apiserver.SECRET_NAME)
    if options.kube is None:
        (statefulset,) = workloads
        await _apply(host, mapper, _annotated(statefulset, secret), say)
        await _wait_rolled_out(host, STATEFULSETS, apiserver.NAME, options, say)
        return
    etcd_service, etcd, kube_apiserver, manager = workloads
    etcd_secret = credentials.secret(apiserver_kube.ETCD_SECRET)
    config = credentials.secret(hosted_components.config_secret_name(apiserver_kube.CONTROLLER_MANAGER))
    # etcd first, ready, then kube-apiserver and kube-controller-manager on it
    for obj in (etcd_service, _annotated(etcd, etcd_secret)):
        await _apply(host, mapper, obj, say)
    await _wait_rolled_out(host, STATEFULSETS, apiserver_kube.ETCD, options, say)
    for obj in (_annotated(kube_apiserver, secret, etcd_secret), _annotated(manager, secret, config)):
        await _apply(host, mapper, obj, say)
    await _wait_rolled_out(host, DEPLOYMENTS, apiserver.NAME, options, say)


def _annotated(workload: Obj, *secrets: Obj) -> Obj:
    """The workload with a digest of the Secrets its pods mount, so new certificates roll them."""
    digest = "-".join(pki_hash(secret) for secret in secrets)
    workload["spec"]["template"]["metadata"].setdefault("annotations", {})[PKI_HASH_ANNOTATION] = digest
    return workload


def _service_url(options: DedicatedOptions) -> str:
    """Where pods in the host reach the API server: its Service."""
    return f"https://{apiserver.NAME}.{NAMESPACE}.svc:{options.apiserver.port}"


# ---- phase 2: Karmada's API in it


async def _karmada_api(
    karmada: KubeClient,
    credentials: Credentials,
    url: str,
    options: DedicatedOptions,
    say: Say,
    proxy_url: str | None = None,
) -> None:
    """Karmada's API in the API server ``karmada`` reaches; ``url`` is the advertised one. Then
    the cluster proxy's address and CA published for callers (``proxy_url``), or, without
    one, a ConfigMap a run with the proxy published removed."""
    certificates = credentials.webhook
    server = karmada.config.server
    say(f"waiting for {apiserver.NAME} to answer at {server}")
    await wait_until(lambda: _answering(karmada), options.timeout, interval=1.0, what=f"{server}/readyz")
    say(f"{apiserver.NAME} answers at {server}")
    identities, _ = hosted_components.split(deploy_documents(options.controlplane_image))
    # cluster-info is init's here (it names the advertised address), so every run applies it
    extra = [cluster_info(karmada, server=url), *identities]
    if options.webhook_url is None:
        extra.append(webhook.external_name_service(options.cluster_domain))
    init_options = InitOptions(
        wait_timeout=options.timeout,
        webhook_url=options.webhook_url,
        webhook_certificates=certificates,
        extra_documents=tuple(extra),
    )
    await install_api(karmada, init_options, say)
    where = f"configmap/{PROXY_CONFIGMAP} -n {NAMESPACE}"
    if proxy_url is not None:
        await publish(karmada, Endpoint(proxy_url, credentials.pki.ca_cert))
        say(f"{where} applied (the cluster proxy at {proxy_url})")
    elif await delete_if_present(karmada, CONFIGMAPS, PROXY_CONFIGMAP, NAMESPACE):
        say(f"{where} deleted (--cluster-proxy=false)")


# ---- phase 3: the components in the host


async def _components(
    host: KubeClient, mapper: ResourceMapper, credentials: Credentials, options: DedicatedOptions, say: Say
) -> None:
    mounted = {
        component: [credentials.secret(hosted_components.config_secret_name(component))]
        for component in hosted_components.COMPONENTS
    }
    mounted["karmada-webhook"].append(credentials.secret(webhook.SECRET_NAME))
    proxy = options.cluster_proxy.enabled
    if proxy:
        mounted[cluster_proxy.NAME] = [*mounted["karmada-controlplane"], credentials.secret(cluster_proxy.SECRET_NAME)]
    for obj in component_workloads(options):
        if _is(obj, "Service", cluster_proxy.NAME):
            continue  # applied with the API server's, before its address was looked up
        if obj["kind"] == "Deployment":
            _annotated(obj, *mounted[obj["metadata"]["name"]])
        await _apply(host, mapper, obj, say)
    if not proxy:
        await _remove_cluster_proxy(host, say)
    waited = hosted_components.COMPONENTS + ((apiserver_kube.CONTROLLER_MANAGER,) if options.kube else ())
    waited += (cluster_proxy.NAME,) if proxy else ()
    for component in waited:
        say(f"waiting for deployment/{component} -n {NAMESPACE} to be available")
        await wait_until(
            lambda component=component: _rolled_out(host, DEPLOYMENTS, component),  # type: ignore[misc]
            options.timeout,
            interval=1.0,
            what=f"{component} available",
        )
        say(f"deployment/{component} -n {NAMESPACE} available")


# what the cluster proxy adds to the host
_PROXY_OBJECTS = (
    (DEPLOYMENTS, cluster_proxy.NAME),
    (SERVICES, cluster_proxy.NAME),
    (SECRETS, cluster_proxy.SECRET_NAME),
)


async def _remove_cluster_proxy(host: KubeClient, say: Say) -> None:
    """What a run with the proxy deployed into the host, removed by a run without it."""
    for resource, name in _PROXY_OBJECTS:
        if await delete_if_present(host, resource, name, NAMESPACE):
            say(f"{resource.kind.lower()}/{name} -n {NAMESPACE} deleted (--cluster-proxy=false)")


async def _apply(client: KubeClient, mapper: ResourceMapper, obj: Obj, say: Say) -> None:
    await apply_object(client, mapper, obj, FIELD_MANAGER)
    say(f"{describe(obj)} applied")


async def _refuse_other_layout(host: KubeClient, options: DedicatedOptions) -> None:
    """One karmada-apiserver at a time: the Service selects both layouts' pods, and the data of
    one (localkube's journal, etcd) does not move to the other."""
    other, given, kind = (STATEFULSETS, "kube", "localkube") if options.kube else (DEPLOYMENTS, "localkube", "kube")
    if await host.get_or_none(other, apiserver.NAME, NAMESPACE) is not None:
        raise ValueError(
            f"karmada-apiserver already runs in {NAMESPACE} as --apiserver {kind} ({other.kind.lower()}/"
            f"{apiserver.NAME}); its objects do not move to --apiserver {given}: run deinit --purge-data first, "
            f"or init again with --apiserver {kind}"
        )


async def _refuse_another_etcd_size(host: KubeClient, kube: apiserver_kube.KubeOptions) -> None:
    """etcd's members are fixed at its start: a member added by a bigger StatefulSet would start
    a second, empty cluster beside the first (and a smaller one loses the quorum). The size is
    the StatefulSet's, or, after a deinit that kept the data, the number of member volumes."""
    statefulset = await host.get_or_none(STATEFULSETS, apiserver_kube.ETCD, NAMESPACE)
    if statefulset is not None:
        members = int((statefulset.get("spec") or {}).get("replicas", 1))
    else:
        claims = await host.list(PVCS, NAMESPACE, labelSelector=f"app={apiserver_kube.ETCD}")
        members = len(claims.get("items") or []) or kube.etcd_replicas
    if members != kube.etcd_replicas:
        raise ValueError(
            f"etcd in {NAMESPACE} has {members} member(s); --etcd-replicas {kube.etcd_replicas} would start a "
            f"second cluster beside it (init does not add or remove etcd members): keep --etcd-replicas "
            f"{members}, or move the data yourself (etcdctl member add/remove) first, or deinit --purge-data"
        )


async def install(host: KubeClient, options: DedicatedOptions, say: Say, only: Only | None = None) -> Installed:
    """Deploy and connect everything; returns the advertised URL and the admin kubeconfig.

    ``only="certs"``: write the Secrets only (the namespace and the Service exist, e.g. made by
    the Helm chart, whose pre-install hook runs this); ``only="api"``: install Karmada's API
    into the running API server (the chart's post-install hook). Both reach it at the advertised
    address, as agents and users do."""
    await _refuse_other_layout(host, options)
    if options.kube is not None:
        await _refuse_another_etcd_size(host, options.kube)
    mapper = ResourceMapper(host)
    if only is None:
        services = [apiserver.service(options.apiserver)]
        services += [proxy_service(options)] if options.cluster_proxy.enabled else []  # before its address
        for obj in (namespace_object(), *services):
            await _apply(host, mapper, obj, say)
    address = await _advertise_address(host, options, say)
    url = _url(address, options.apiserver)
    proxy_url = await _cluster_proxy_url(host, options, address, say)
    if only == "api":
        credentials = await _stored_credentials(host)
    else:
        credentials = await _credentials(host, url, address, options, proxy_url)
        for secret in credentials.secrets:
            await _apply(host, mapper, secret, say)
    if only is None:
        await _apiserver(host, mapper, credentials, options, say)
    if only != "certs":
        config = from_kubeconfig_bytes(apiserver.admin_kubeconfig(credentials.pki, url))
        async with KubeClient(config) as karmada:
            await _karmada_api(karmada, credentials, url, options, say, proxy_url)
    if only is None:
        await _components(host, mapper, credentials, options, say)
    return Installed(url, apiserver.admin_kubeconfig(credentials.pki, url), proxy_url)


# ---- deinit


async def installed_here(host: KubeClient) -> bool:
    """Whether ``init`` deployed a dedicated API server into this cluster: its StatefulSet, or
    the CA a previous ``deinit`` kept (so a second ``deinit`` never takes the other path,
    which would delete the namespace holding the kept data)."""
    for resource, name, app in _MARKS:
        obj = await host.get_or_none(resource, name, NAMESPACE)
        if obj is not None and (obj["metadata"].get("labels") or {}).get("app") == app:
            return True
    return False


# what shows that init deployed a dedicated API server here (either layout, or the data kept)
_MARKS = (
    (STATEFULSETS, apiserver.NAME, apiserver.NAME),
    (DEPLOYMENTS, apiserver.NAME, apiserver.NAME),
    (SECRETS, apiserver.SECRET_NAME, apiserver.NAME),
    (STATEFULSETS, apiserver_kube.ETCD, apiserver_kube.ETCD),
    (SECRETS, apiserver_kube.ETCD_SECRET, apiserver_kube.ETCD),
)


async def uninstall(host: KubeClient, say: Say, *, purge_data: bool, timeout: float = 120.0) -> None:
    """Remove what :func:`install` put into the host. Kept unless ``purge_data``: the API server's
    volume and the CA that signed every certificate its objects rely on (``karmada-cert``),
    so that ``init`` again serves the same objects; with it, those and the namespace go too."""
    mapper = ResourceMapper(host)
    for obj in reversed(component_workloads(DedicatedOptions())):
        if await delete_object(host, mapper, obj):
            say(f"{describe(obj)} deleted")
    kept = (apiserver.SECRET_NAME, apiserver_kube.ETCD_SECRET)  # the CAs: with the data, unless purge_data
    made = [(DEPLOYMENTS, apiserver_kube.CONTROLLER_MANAGER)]
    made += [(SECRETS, name) for name in secret_names(kube=True) if name not in kept]
    made += [(DEPLOYMENTS, apiserver.NAME), (STATEFULSETS, apiserver.NAME), (SERVICES, apiserver.NAME)]
    made += [(STATEFULSETS, apiserver_kube.ETCD), (SERVICES, apiserver_kube.ETCD)]
    for resource, name in made:
        if await delete_if_present(host, resource, name, NAMESPACE):
            say(f"{resource.kind.lower()}/{name} -n {NAMESPACE} deleted")
    if not purge_data:
        say(
            f"kept: secret/{apiserver.SECRET_NAME}, secret/{apiserver_kube.ETCD_SECRET} if any, and the volumes of "
            f"{apiserver.NAME} or etcd (--purge-data removes them)"
        )
        return
    for app in (apiserver.NAME, apiserver_kube.ETCD):
        claims = (await host.list(PVCS, NAMESPACE, labelSelector=f"app={app}")).get("items") or []
        for claim in claims:
            if await delete_if_present(host, PVCS, claim["metadata"]["name"], NAMESPACE):
                say(f"persistentvolumeclaim/{claim['metadata']['name']} -n {NAMESPACE} deleted")
    for name in kept:
        if await delete_if_present(host, SECRETS, name, NAMESPACE):
            say(f"secret/{name} -n {NAMESPACE} deleted")
    namespace = await host.get_or_none(NAMESPACES, NAMESPACE)
    if namespace is not None and (namespace["metadata"].get("labels") or {}).get(MANAGED_BY) == FIELD_MANAGER:
        await host.delete(NAMESPACES, NAMESPACE)
        say(f"namespace/{NAMESPACE} deleted")

        async def gone() -> bool:
            return await host.get_or_none(NAMESPACES, NAMESPACE) is None

        await wait_until(gone, timeout, what=f"namespace {NAMESPACE} to be deleted")
