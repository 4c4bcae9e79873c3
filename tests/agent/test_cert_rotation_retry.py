"""Certificate rotation survives a failed store: the member's API server
answers 500 to the first PATCH of the kubeconfig Secret; the agent keeps its
running certificate, stores the same renewed one again after a backoff and
only then switches, all in one process and with one CSR."""

from __future__ import annotations

import asyncio
import base64
import json

import yaml

from agent.cert_rotation import CertificateRotator
from agent.credentials import ControlPlaneCredentials
from karmada.kube import ClusterConfig, KubeClient, from_kubeconfig
from karmada.kube.resources import CLUSTERS, SECRETS
from tests.faults import FailingApiProxy, fail_first
from tests.pullmode import PullMode
from tests.servers import ServerThread

SECRET_PATH = "/api/v1/namespaces/karmada-system/secrets/karmada-kubeconfig"


def _stored_cert(secret: dict[str, object]) -> bytes:
    data = secret["data"]
    assert isinstance(data, dict)
    kubeconfig = yaml.safe_load(base64.b64decode(data["karmada-kubeconfig"]))
    return base64.b64decode(kubeconfig["users"][0]["user"]["client-certificate-data"])


async def test_a_failed_store_is_retried_and_the_old_certificate_works_meanwhile(
    pull_mode: PullMode, member1: ServerThread
) -> None:
    pull_mode.register(member1, "member1")
    member_config = from_kubeconfig(member1.kubeconfig(pull_mode.workdir, "member1-admin", ["system:masters"]))
    proxy = await FailingApiProxy(member_config, fail_first("PATCH", SECRET_PATH)).start()
    try:
        async with KubeClient(ClusterConfig(server=proxy.url)) as member:
            credentials = await ControlPlaneCredentials.load(member, "", None, "karmada-system")
            old = credentials.certificate_pem()
            assert old is not None
            async with KubeClient(credentials.config()) as control_plane:
                rotator = CertificateRotator(control_plane, member, credentials, threshold=1.0, store_backoff=1.0)
                rotation = asyncio.create_task(rotator.check())
                await asyncio.wait_for(proxy.refused.wait(), 30)
                # the store failed: the running certificate stays, and it still works
                assert credentials.certificate_pem() == old
                assert control_plane.config.credentials.client_cert_pem == old
                await control_plane.get(CLUSTERS, "member1")
                assert await asyncio.wait_for(rotation, 30)  # the same process completes the rotation
                renewed = credentials.certificate_pem()
                assert renewed is not None and renewed != old
                assert control_plane.config.credentials.client_cert_pem == renewed
                await control_plane.get(CLUSTERS, "member1")  # and the renewed one works
                assert _stored_cert(await member.get(SECRETS, "karmada-kubeconfig", "karmada-system")) == renewed
        assert proxy.failed == [("PATCH", SECRET_PATH)]
    finally:
        await proxy.close()
    csrs = json.loads(pull_mode.admin("get", "csr", "-o", "json").stdout)["items"]
    renewals = [c for c in csrs if c["spec"]["username"] == "system:karmada:agent:member1"]
    assert len(renewals) == 1, "the retry stores the issued certificate again instead of asking anew"
