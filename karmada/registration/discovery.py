"""Finding and trusting a control plane from a bootstrap token (kubeadm's
token discovery, which Karmada's register reuses).

``kube-public/cluster-info`` is read anonymously without verifying TLS (the
CA is not known yet). Its ``jws-kubeconfig-<token id>`` signature proves that
whoever serves it knows the token secret; the CA pin proves it is the
control plane the administrator meant. Then the same ConfigMap is read again
over TLS verified with that CA and must be identical.

Waiting: an unreachable or not yet initialized control plane is retried for
the whole discovery timeout (it may be starting). A readable cluster-info
without this token's signature is retried only for ``signature_grace``
(the control plane's bootstrap signer adds a new token's signature within a
second or two): after that the token id is unknown to the control plane, and
waiting longer would not help. Each new reason for waiting is reported
through ``progress``.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

import yaml

from karmada.kube import ClusterConfig, KubeClient, KubeError
from karmada.pki import BootstrapToken, jws_matches, pin_matches
from karmada.pki.pins import ca_cert_hash, split_pem

log = logging.getLogger("karmada.registration.discovery")
CLUSTER_INFO_PATH = "/api/v1/namespaces/kube-public/configmaps/cluster-info"


class DiscoveryError(Exception):
    """The control plane could not be found or trusted; the message says why."""


@dataclass(frozen=True)
class ControlPlaneInfo:
    """A discovered control plane: where to connect and which CA to trust."""

    server: str
    ca_pem: bytes


def _endpoint_url(endpoint: str) -> str:
    return endpoint if endpoint.startswith("https://") else f"https://{endpoint}"


async def _read_cluster_info(config: ClusterConfig) -> dict[str, str]:
    async with KubeClient(config, timeout=10) as client:
        info = await client.raw_get(CLUSTER_INFO_PATH)
    return dict(info.get("data") or {})


def _ca_from(kubeconfig_text: str) -> bytes:
    try:
        config = yaml.safe_load(kubeconfig_text)
        clusters = config.get("clusters") or []
    except (yaml.YAMLError, AttributeError):
        raise DiscoveryError("the cluster-info ConfigMap does not hold a valid kubeconfig") from None
    if len(clusters) != 1:
        raise DiscoveryError(f"expected exactly one cluster in cluster-info, found {len(clusters)}")
    data = (clusters[0].get("cluster") or {}).get("certificate-authority-data")
    if not data:
        raise DiscoveryError("the cluster in cluster-info has no certificate-authority-data")
    return base64.b64decode(data)


async def discover(
    endpoint: str,
    token: BootstrapToken,
    pins: list[str],
    *,
    unsafe_skip_ca_verification: bool = False,
    timeout: float = 300.0,
    interval: float = 5.0,
    signature_grace: float = 10.0,
    progress: Callable[[str], None] = lambda line: None,
) -> ControlPlaneInfo:
    """Fetch, verify and pin the control plane's CA; DiscoveryError on any doubt."""
    if not pins and not unsafe_skip_ca_verification:
        raise DiscoveryError(
            "no --discovery-token-ca-cert-hash given: pass the hash printed by `kubectl karmada token create "
            "--print-register-command`, or accept the risk with --discovery-token-unsafe-skip-ca-verification"
        )
    server = _endpoint_url(endpoint)
    insecure = ClusterConfig(server=server, insecure=True)
    key = f"jws-kubeconfig-{token.id}"
    deadline = time.monotonic() + timeout
    unsigned_since: float | None = None
    last_problem = reported = ""
    while True:
        try:
            data = await _read_cluster_info(insecure)
            if key in data and "kubeconfig" in data:
                break
            if "kubeconfig" not in data:
                unsigned_since = None
                last_problem = f"the control plane at {server} has no kubeconfig in cluster-info (is it initialized?)"
                waiting = f"waiting for the control plane at {server} to publish cluster-info"
                if time.monotonic() + interval > deadline:
                    raise DiscoveryError(last_problem)
            else:
                unsigned_since = time.monotonic() if unsigned_since is None else unsigned_since
                signed = any(k.startswith("jws-kubeconfig-") for k in data)
                last_problem = (
                    f'token id "{token.id}" is invalid for this control plane or it has expired '
                    "(no signature for it in cluster-info"
                    + ("" if signed else ", nor for any other token: is its bootstrap signer running?")
                    + '); create a new one with "kubectl karmada token create"'
                )
                waiting = f'waiting for the control plane to sign cluster-info for token id "{token.id}"'
                if time.monotonic() + interval > min(deadline, unsigned_since + signature_grace):
                    raise DiscoveryError(last_problem)
        except KubeError as exc:
            unsigned_since = None
            last_problem = f"cannot read cluster-info from {server}: {exc.message}"
            waiting = f"waiting for the control plane at {server} to serve cluster-info ({exc.message})"
            if time.monotonic() + interval > deadline:
                raise DiscoveryError(last_problem) from None
        if waiting != reported:
            progress(f"[discovery] {waiting}")
            reported = waiting
        log.info("%s; retrying in %.0fs", last_problem, interval)
        await asyncio.sleep(interval * (1 + random.uniform(0, 0.3)))
    kubeconfig_text = data["kubeconfig"]
    if not jws_matches(data[key], kubeconfig_text, token.id, token.secret):
        raise DiscoveryError(
            "failed to verify JWS signature of received cluster info object, can't trust this API server"
        )
    ca_pem = _ca_from(kubeconfig_text)
    if pins:
        certificates = split_pem(ca_pem)
        if not any(pin_matches(cert, pins) for cert in certificates):
            found = ", ".join(ca_cert_hash(cert) for cert in certificates)
            raise DiscoveryError(
                f"cluster CA found in cluster-info ConfigMap is invalid: none of the public keys {found!r} are pinned "
                "(check --discovery-token-ca-cert-hash)"
            )
        trusted = ClusterConfig(server=server, ca_pem=ca_pem)
        try:
            again = await _read_cluster_info(trusted)
        except KubeError as exc:
            raise DiscoveryError(
                f"cannot read cluster-info over TLS verified with the pinned CA: {exc.message}"
            ) from None
        if again.get("kubeconfig") != kubeconfig_text:
            raise DiscoveryError(
                "cluster-info changed between the insecure and the verified read; refusing to trust it"
            )
    return ControlPlaneInfo(server=server, ca_pem=ca_pem)
