"""Who may approve and sign CSRs: ``approve``/``sign`` on the ``signers`` resource named
by the request's signer (or ``<domain>/*``), as kube-apiserver's certificate admission checks."""

from __future__ import annotations

import base64
import datetime
import json
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.conftest import UserFactory
from tests.servers import Kubectl, Raw, ServerThread

Obj = dict[str, Any]
CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client"


def csr(name: str, signer: str) -> Obj:
    key = ec.generate_private_key(ec.SECP256R1())
    request = (
        x509.CertificateSigningRequestBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .sign(key, hashes.SHA256())
    )
    return {
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": {
            "request": base64.b64encode(request.public_bytes(serialization.Encoding.PEM)).decode(),
            "signerName": signer,
            "usages": ["digital signature", "client auth"],
        },
    }


def self_signed(name: str) -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(hours=1))
        .sign(key, hashes.SHA256())
    )
    return certificate.public_bytes(serialization.Encoding.PEM)


def approver_role(name: str, verb: str, signers: list[str]) -> str:
    """A ClusterRole that may read CSRs and update their approval and status, plus ``verb`` on ``signers``."""
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name},
        "rules": [
            {
                "apiGroups": ["certificates.k8s.io"],
                "resources": [
                    "certificatesigningrequests",
                    "certificatesigningrequests/approval",
                    "certificatesigningrequests/status",
                ],
                "verbs": ["get", "list", "watch", "update", "patch"],
            },
            *(
                [
                    {
                        "apiGroups": ["certificates.k8s.io"],
                        "resources": ["signers"],
                        "resourceNames": signers,
                        "verbs": [verb],
                    }
                ]
                if signers
                else []
            ),
        ],
    }
    return json.dumps(role)


def grant(admin: Kubectl, user: str, verb: str, signers: list[str]) -> None:
    name = f"{user}-{verb}"
    admin("apply", "-f", "-", stdin=approver_role(name, verb, signers))
    admin("create", "clusterrolebinding", name, f"--clusterrole={name}", f"--user={user}")


def condition(admin: Kubectl, name: str) -> str:
    return str(admin("get", "csr", name, "-o", "jsonpath={.status.conditions[*].type}").stdout)


def test_approving_needs_approve_on_the_signer(admin: Kubectl, as_user: UserFactory) -> None:
    admin("apply", "-f", "-", stdin=json.dumps(csr("first", CLIENT_SIGNER)))
    grant(admin, "approver", "approve", [])
    approver = as_user("approver")
    refused = approver("certificate", "approve", "first", check=False)
    assert refused.returncode == 1
    assert (
        'certificatesigningrequests.certificates.k8s.io "first" is forbidden: '
        f'user not permitted to approve requests with signerName "{CLIENT_SIGNER}"'
    ) in refused.stderr
    denied = approver("certificate", "deny", "first", check=False)
    assert "user not permitted to approve requests" in denied.stderr  # denying is approving's other half
    assert condition(admin, "first") == ""
    grant(admin, "approver2", "approve", [CLIENT_SIGNER])
    as_user("approver2")("certificate", "approve", "first")
    assert condition(admin, "first").startswith("Approved")


def test_a_domain_wildcard_grants_every_signer_of_the_domain(admin: Kubectl, as_user: UserFactory) -> None:
    for name, signer in (("w1", "example.com/one"), ("w2", "example.com/two"), ("w3", "example.org/one")):
        admin("apply", "-f", "-", stdin=json.dumps(csr(name, signer)))
    grant(admin, "domain-approver", "approve", ["example.com/*"])
    approver = as_user("domain-approver")
    approver("certificate", "approve", "w1", "w2")
    assert condition(admin, "w1") == "Approved" and condition(admin, "w2") == "Approved"
    refused = approver("certificate", "approve", "w3", check=False)
    assert 'user not permitted to approve requests with signerName "example.org/one"' in refused.stderr
    grant(admin, "one-approver", "approve", ["example.org/two"])
    refused = as_user("one-approver")("certificate", "approve", "w3", check=False)
    assert 'user not permitted to approve requests with signerName "example.org/one"' in refused.stderr


@pytest.fixture(scope="module")
def signed(admin: Kubectl) -> Obj:
    """An approved CSR for a signer of our own (nothing in localkube signs it)."""
    admin("apply", "-f", "-", stdin=json.dumps(csr("external", "example.net/issuer")))
    admin("certificate", "approve", "external")
    stored: Obj = json.loads(admin("get", "csr", "external", "-o", "json").stdout)
    return stored


async def test_issuing_a_certificate_needs_sign_on_the_signer(
    admin: Kubectl, localkube: ServerThread, workdir: Path, signed: Obj
) -> None:
    grant(admin, "issuer", "sign", [])
    issuer = Raw(localkube, localkube.kubeconfig(workdir, "issuer", []))
    path = f"{CSRS}/external/status"
    # a condition without a certificate needs no sign
    noted = json.loads(json.dumps(signed))
    noted["status"]["conditions"].append({"type": "Failed", "status": "False", "reason": "Pending", "message": "-"})
    status, body, _ = await issuer.request("PUT", path, noted)
    assert status == 200, body
    issued = body
    issued["status"]["certificate"] = base64.b64encode(self_signed("external")).decode()
    status, body, _ = await issuer.request("PUT", path, issued)
    assert status == 403 and body["reason"] == "Forbidden"
    assert body["message"] == (
        'certificatesigningrequests.certificates.k8s.io "external" is forbidden: '
        'user not permitted to sign requests with signerName "example.net/issuer"'
    )
    grant(admin, "issuer2", "sign", ["example.net/*"])
    issuer2 = Raw(localkube, localkube.kubeconfig(workdir, "issuer2", []))
    status, body, _ = await issuer2.request("PUT", path, issued)
    assert status == 200, body
    assert body["status"]["certificate"] == issued["status"]["certificate"]
