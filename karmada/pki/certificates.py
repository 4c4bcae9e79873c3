"""Keys, certificate signing requests and certificate facts for agents.

Karmada's register makes RSA keys for the first certificate and its rotation
makes ECDSA P-256 keys; both are offered. Private keys leave this module only
as PEM bytes for a kubeconfig, never in logs or exceptions.
"""

from __future__ import annotations

import datetime
import secrets
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from karmada.pki.validity import remaining_fraction

PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # Kubernetes' utilrand alphabet: no vowels, no look-alikes


def new_ec_key() -> ec.EllipticCurvePrivateKey:
    """An ECDSA P-256 key (what Karmada's certificate rotation uses)."""
    return ec.generate_private_key(ec.SECP256R1())


def new_rsa_key(bits: int = 3072) -> rsa.RSAPrivateKey:
    """An RSA key (register's first agent certificate uses 3072 bits)."""
    return rsa.generate_private_key(public_exponent=65537, key_size=bits)


def key_pem(key: PrivateKey) -> bytes:
    """The key as unencrypted PEM (PKCS#8), as kubeconfigs carry it."""
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def client_csr(key: PrivateKey, common_name: str, organizations: list[str]) -> bytes:
    """A PEM CSR for a client certificate: CN is the user, O the groups, no SANs."""
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, org) for org in organizations]
    attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    request = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(attributes)).sign(key, hashes.SHA256())
    return request.public_bytes(serialization.Encoding.PEM)


def random_suffix(length: int = 5) -> str:
    """A random name suffix like the API server's ``generateName``."""
    return "".join(secrets.choice(_SUFFIX_ALPHABET) for _ in range(length))


@dataclass(frozen=True)
class CertificateInfo:
    """The facts about a certificate that registration and rotation look at."""

    common_name: str
    organizations: tuple[str, ...]
    not_before: datetime.datetime
    not_after: datetime.datetime

    @property
    def lifetime(self) -> datetime.timedelta:
        return self.not_after - self.not_before

    def remaining_fraction(self, now: datetime.datetime | None = None) -> float:
        """Share of the lifetime still ahead (1.0 new, 0.0 expired)."""
        return remaining_fraction(self.not_before, self.not_after, now)


def certificate_info(cert_pem: bytes) -> CertificateInfo:
    """Subject and validity of the first certificate in ``cert_pem``."""
    certificate = x509.load_pem_x509_certificate(cert_pem)
    subject = certificate.subject
    names = subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    orgs = subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
    return CertificateInfo(
        common_name=str(names[0].value) if names else "",
        organizations=tuple(str(o.value) for o in orgs),
        not_before=certificate.not_valid_before_utc,
        not_after=certificate.not_valid_after_utc,
    )


def csr_subject(csr_pem: bytes) -> tuple[str, tuple[str, ...], bool]:
    """``(CN, O, has_sans)`` of a PEM CSR, for approvers."""
    request = x509.load_pem_x509_csr(csr_pem)
    names = request.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    orgs = request.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
    try:
        request.extensions.get_extension_for_class(x509.SubjectAlternativeName)
        has_sans = True
    except x509.ExtensionNotFound:
        has_sans = False
    return (str(names[0].value) if names else "", tuple(str(o.value) for o in orgs), has_sans)
