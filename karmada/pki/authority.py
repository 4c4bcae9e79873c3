"""A small certificate authority for installers: make a CA, issue a leaf certificate from it,
and tell whether a certificate is still one to keep.

Keys are ECDSA P-256. Certificates start 5 minutes in the past, as kube's signer backdates
them, to tolerate clock skew; a leaf never outlives its CA. Private keys leave as PEM only.
"""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Iterable, Sequence

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from karmada.pki.certificates import key_pem, new_ec_key

BACKDATE = datetime.timedelta(minutes=5)


def distinguished_name(common_name: str, organizations: Sequence[str] = ()) -> x509.Name:
    """A subject: O for each group, then the CN."""
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, org) for org in organizations]
    return x509.Name([*attributes, x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def ip_of(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``host`` as an IP address (brackets allowed), or None for a DNS name."""
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def general_names(hosts: Iterable[str]) -> list[x509.GeneralName]:
    """SAN entries: IP addresses as IP SANs, anything else as DNS SANs."""
    result: list[x509.GeneralName] = []
    for host in hosts:
        ip = ip_of(host)
        result.append(x509.IPAddress(ip) if ip is not None else x509.DNSName(host))
    return result


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def new_ca(
    common_name: str, now: datetime.datetime, validity: datetime.timedelta, path_length: int | None = None
) -> tuple[bytes, bytes]:
    """A self-signed CA: ``(certificate PEM, key PEM)``."""
    key = new_ec_key()
    subject = distinguished_name(common_name)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now + validity)
        .add_extension(x509.BasicConstraints(ca=True, path_length=path_length), critical=True)
        .add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return _pem(cert), key_pem(key)


def signing_key(pem: bytes) -> ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey:
    """A PEM private key that can sign certificates (ECDSA or RSA); ValueError otherwise."""
    key = serialization.load_pem_private_key(pem, None)
    if not isinstance(key, ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey):
        raise ValueError("the CA key is neither ECDSA nor RSA")
    return key


def issue(
    ca_cert: bytes,
    ca_key: bytes,
    subject: x509.Name,
    usage: x509.ObjectIdentifier | Sequence[x509.ObjectIdentifier],
    sans: Sequence[str],
    now: datetime.datetime,
    validity: datetime.timedelta,
) -> tuple[bytes, bytes]:
    """A leaf certificate for ``usage`` (server or client auth, or both: an etcd member's
    certificate serves clients and dials peers) with a new key, signed by the CA:
    ``(certificate PEM, key PEM)``."""
    usages = [usage] if isinstance(usage, x509.ObjectIdentifier) else list(usage)
    ca = x509.load_pem_x509_certificate(ca_cert)
    signer = signing_key(ca_key)
    key = new_ec_key()
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(min(now + validity, ca.not_valid_after_utc))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(True, False, False, False, False, False, False, False, False), critical=True)
        .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(signer.public_key()), critical=False)
    )
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(general_names(sans)), critical=False)
    return _pem(builder.sign(signer, hashes.SHA256())), key_pem(key)


def current(cert_pem: bytes, ca_pem: bytes, now: datetime.datetime, renew_before: datetime.timedelta) -> bool:
    """Whether the certificate was issued by the CA, is valid already, and has more than
    ``renew_before`` left (a CA passed as both checks itself)."""
    try:
        cert = x509.load_pem_x509_certificate(cert_pem)
        cert.verify_directly_issued_by(x509.load_pem_x509_certificate(ca_pem))
    except (ValueError, TypeError, InvalidSignature):
        return False
    return cert.not_valid_before_utc <= now and cert.not_valid_after_utc - now > renew_before
