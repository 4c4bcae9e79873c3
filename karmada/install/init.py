"""``init``: CRDs (waiting until Established), namespaces, bootstrap RBAC,
``kube-public/cluster-info`` when the server lacks one, and with ``deploy`` the
control plane's RBAC and Deployment. Every step is a server-side apply, so
running it again converges instead of failing; ``deinit`` deletes the same
objects in reverse order (the CRDs last, which removes every Karmada object).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from karmada.images import CONTROLPLANE_IMAGE as DEFAULT_IMAGE
from karmada.install import webhook
from karmada.kube import KubeClient, ResourceMapper
from karmada.kube.objects import apply_object, delete_object, wait_gone, wait_until
from karmada.kube.resources import CONFIGMAPS, CRDS, SECRETS
from manifests import controlplane_files, crd_files, deploy_files, load_documents

Obj = dict[str, Any]
FIELD_MANAGER = "kubectl-karmada"
MANAGED_BY = "app.kubernetes.io/managed-by"
CLUSTER_INFO_OWNER_LABEL = {MANAGED_BY: FIELD_MANAGER}


@dataclass
class InitOptions:
    """What ``init`` installs besides the always-needed parts."""

    deploy: bool = False
    controlplane_image: str = DEFAULT_IMAGE
    wait_timeout: float = 60.0
    # where a karmada-webhook outside the cluster serves (https://host:port), with its
    # certificates kept in webhook_cert_dir; --deploy points at the deployed Service instead
    webhook_url: str | None = None
    webhook_cert_dir: Path | None = None
    # the webhook's certificates kept elsewhere (a dedicated karmada-apiserver: a Secret of the host
    # cluster); registered at webhook_url, else at its Service
    webhook_certificates: webhook.WebhookCertificates | None = None
    # applied after Karmada's own objects, before the webhook is registered
    extra_documents: tuple[Obj, ...] = ()


def deploy_documents(image: str) -> list[Obj]:
    """The control plane's and the webhook's RBAC and workloads, running ``image``."""
    documents = []
    for path in deploy_files():
        for doc in load_documents(path):
            if doc["kind"] == "Deployment":
                for container in doc["spec"]["template"]["spec"]["containers"]:
                    container["image"] = image
            documents.append(doc)
    return documents


def _documents(deploy: bool, image: str) -> list[Obj]:
    documents = [doc for path in crd_files() for doc in load_documents(path)]
    documents += [doc for path in controlplane_files() for doc in load_documents(path)]
    if deploy:
        documents += deploy_documents(image)
    return documents


def describe(obj: Obj) -> str:
    namespace = obj["metadata"].get("namespace")
    where = f" -n {namespace}" if namespace else ""
    return f"{obj['kind'].lower()}/{obj['metadata']['name']}{where}"


def cluster_info(client: KubeClient, server: str | None = None) -> Obj:
    """The ``cluster-info`` ConfigMap for the server this client talks to, named as ``server``
    when agents reach it at another address than this client."""
    config = client.config
    if not config.ca_pem:
        raise ValueError(
            "the kubeconfig has no certificate authority for this server (insecure-skip-tls-verify?); "
            "agents could not verify the control plane: use a kubeconfig with certificate-authority-data"
        )
    kubeconfig = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "",
                "cluster": {
                    "server": server or config.server,
                    "certificate-authority-data": base64.b64encode(config.ca_pem).decode(),
                },
            }
        ],
        "contexts": [],
        "users": [],
        "preferences": {},
        "current-context": "",
    }
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cluster-info", "namespace": "kube-public", "labels": dict(CLUSTER_INFO_OWNER_LABEL)},
        "data": {"kubeconfig": yaml.safe_dump(kubeconfig, sort_keys=False)},
    }


async def _established(client: KubeClient, names: list[str]) -> bool:
    for name in names:
        crd = await client.get_or_none(CRDS, name)
        conditions = ((crd or {}).get("status") or {}).get("conditions") or []
        if not any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions):
            return False
    return True


async def init(client: KubeClient, options: InitOptions, say: Callable[[str], None]) -> None:
    """Install Karmada's API and bootstrap objects; ``say`` receives one line per step."""
    mapper = ResourceMapper(client)
    documents = _documents(options.deploy, options.controlplane_image)
    crds = [doc for doc in documents if doc["kind"] == "CustomResourceDefinition"]
    for doc in crds:
        await apply_object(client, mapper, doc, FIELD_MANAGER)
        say(f"{describe(doc)} applied")
    names = [doc["metadata"]["name"] for doc in crds]
    await wait_until(lambda: _established(client, names), options.wait_timeout, what="Karmada's CRDs to be Established")
    say(f"{len(names)} CustomResourceDefinitions established")
    for doc in documents:
        if doc["kind"] != "CustomResourceDefinition":
            await apply_object(client, mapper, doc, FIELD_MANAGER)
            say(f"{describe(doc)} applied")
    for doc in options.extra_documents:
        await apply_object(client, mapper, doc, FIELD_MANAGER)
        say(f"{describe(doc)} applied")
    existing = await client.get_or_none(CONFIGMAPS, "cluster-info", "kube-public")
    if existing is None or "kubeconfig" not in (existing.get("data") or {}):
        info = cluster_info(client)
        await apply_object(client, mapper, info, FIELD_MANAGER)
        say(f"{describe(info)} created (the server had none)")
    await _install_webhook(client, mapper, options, say)


async def _install_webhook(
    client: KubeClient, mapper: ResourceMapper, options: InitOptions, say: Callable[[str], None]
) -> None:
    """The webhook's certificates, then its two configurations (last: they make the API server call it)."""
    url: str | None
    if options.webhook_certificates is not None:
        certificates, url = options.webhook_certificates, options.webhook_url
    elif options.deploy:
        stored = await client.get_or_none(SECRETS, webhook.SECRET_NAME, webhook.NAMESPACE)
        certificates = webhook.certificates_from_secret(stored) or webhook.new_certificates()
        secret = webhook.certificates_secret(certificates)
        await apply_object(client, mapper, secret, FIELD_MANAGER)
        say(f"{describe(secret)} applied")
        url = None
    elif options.webhook_url:
        if options.webhook_cert_dir is None:
            raise ValueError("a webhook URL needs a directory for the webhook's certificates")
        certificates = webhook.load_or_create(options.webhook_cert_dir)
        say(f"webhook certificates in {options.webhook_cert_dir} (serve them with karmada-webhook --cert-dir)")
        url = options.webhook_url
    else:
        return
    for configuration in webhook.webhook_configurations(certificates.ca_cert, url):
        await apply_object(client, mapper, configuration, FIELD_MANAGER)
        say(f"{describe(configuration)} applied")


async def deinit(client: KubeClient, say: Callable[[str], None], timeout: float = 120.0) -> None:
    """Remove what ``init`` (with or without ``deploy``) installed, CRDs last."""
    mapper = ResourceMapper(client)
    for configuration in reversed(webhook.webhook_configurations(b"")):
        if await delete_object(client, mapper, configuration):
            say(f"{describe(configuration)} deleted")  # first: a webhook gone would block the deletions
    if await client.get_or_none(SECRETS, webhook.SECRET_NAME, webhook.NAMESPACE) is not None:
        await client.delete(SECRETS, webhook.SECRET_NAME, webhook.NAMESPACE)
        say(f"secret/{webhook.SECRET_NAME} -n {webhook.NAMESPACE} deleted")
    documents = _documents(True, DEFAULT_IMAGE)
    others = [doc for doc in documents if doc["kind"] != "CustomResourceDefinition"]
    crds = [doc for doc in documents if doc["kind"] == "CustomResourceDefinition"]
    for doc in reversed(others):
        if doc["kind"] == "Namespace":
            continue  # after the CRDs: Karmada objects in them must go first
        if await delete_object(client, mapper, doc):
            say(f"{describe(doc)} deleted")
    existing = await client.get_or_none(CONFIGMAPS, "cluster-info", "kube-public")
    labels = ((existing or {}).get("metadata") or {}).get("labels") or {}
    if existing is not None and labels.get(MANAGED_BY) == FIELD_MANAGER:
        await client.delete(CONFIGMAPS, "cluster-info", "kube-public")
        say("configmap/cluster-info -n kube-public deleted (init had created it)")
    for doc in crds:
        if await delete_object(client, mapper, doc):
            say(f"{describe(doc)} deleted")
    for doc in crds:
        await wait_gone(client, mapper, doc, timeout)
    for doc in others:
        if doc["kind"] == "Namespace" and await delete_object(client, mapper, doc):
            say(f"{describe(doc)} deleted")
    for doc in others:
        if doc["kind"] == "Namespace":
            await wait_gone(client, mapper, doc, timeout)
