"""The cluster CA and the certificates localkube issues with it.

One CA signs the serving certificate (SANs for every address clients use),
client certificates (CN = user, O = groups) and approved
``kubernetes.io/kube-apiserver-client`` CSRs. Keys are ECDSA P-256: fast to
generate, so a test server starts in well under a second.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from localkube.private_files import write_private

PrivateKey = ec.EllipticCurvePrivateKey


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def new_key() -> PrivateKey:
    """A fresh ECDSA P-256 private key."""
    return ec.generate_private_key(ec.SECP256R1())


def key_pem(key: PrivateKey) -> bytes:
    """PEM (PKCS#8, unencrypted) of a private key."""
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def cert_pem(cert: x509.Certificate) -> bytes:
    """PEM of a certificate."""
    return cert.public_bytes(serialization.Encoding.PEM)


@dataclass
class CertificateAuthority:
    """A CA certificate and its key."""

    cert: x509.Certificate
    key: PrivateKey

    @classmethod
    def create(cls, common_name: str = "localkube-ca", days: int = 3650) -> CertificateAuthority:
        """A new self-signed CA."""
        key = new_key()
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
        now = _now()
        cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=days))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256())
        )
        return cls(cert, key)

    @classmethod
    def load(cls, cert_file: Path, key_file: Path) -> CertificateAuthority:
        """Load a CA from PEM files."""
        cert = x509.load_pem_x509_certificate(cert_file.read_bytes())
        key = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
        if not isinstance(key, ec.EllipticCurvePrivateKey):
            from cryptography.hazmat.primitives.asymmetric import rsa

            if not isinstance(key, rsa.RSAPrivateKey):
                raise ValueError("the CA key must be an EC or RSA private key")
        return cls(cert, key)  # type: ignore[arg-type]

    def save(self, cert_file: Path, key_file: Path) -> None:
        """Write the CA as PEM files, created readable by the owner only."""
        write_private(cert_file, cert_pem(self.cert))
        write_private(key_file, key_pem(self.key))

    def issue(
        self,
        public_key: ec.EllipticCurvePublicKey | object,
        subject: x509.Name,
        *,
        server_names: list[str] | None = None,
        client: bool = True,
        server: bool = False,
        lifetime: datetime.timedelta = datetime.timedelta(days=365),
        extra_sans: list[x509.GeneralName] | None = None,
    ) -> x509.Certificate:
        """Sign a leaf certificate; NotAfter is clipped to the CA's own."""
        now = _now()
        not_after = min(now + lifetime, self.cert.not_valid_after_utc)
        usages = []
        if client:
            usages.append(ExtendedKeyUsageOID.CLIENT_AUTH)
        if server:
            usages.append(ExtendedKeyUsageOID.SERVER_AUTH)
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(self.cert.subject)
            .public_key(public_key)  # type: ignore[arg-type]
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(not_after)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=True,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=False,
                    crl_sign=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()), critical=False)
        )
        if usages:
            builder = builder.add_extension(x509.ExtendedKeyUsage(usages), critical=False)
        sans: list[x509.GeneralName] = list(extra_sans or [])
        for host in server_names or []:
            try:
                sans.append(x509.IPAddress(ipaddress.ip_address(host)))
            except ValueError:
                sans.append(x509.DNSName(host))
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        return builder.sign(self.key, hashes.SHA256())

    def issue_client(self, user: str, groups: list[str], lifetime_days: int = 365) -> tuple[bytes, bytes]:
        """``(certificate PEM, key PEM)`` for a user identity (CN = user, O = each group)."""
        key = new_key()
        attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups]
        attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, user))
        cert = self.issue(key.public_key(), x509.Name(attrs), lifetime=datetime.timedelta(days=lifetime_days))
        return cert_pem(cert), key_pem(key)

    def issue_server(self, hosts: list[str]) -> tuple[bytes, bytes]:
        """``(certificate PEM, key PEM)`` for serving on ``hosts`` (names and IPs)."""
        key = new_key()
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localkube-apiserver")])
        cert = self.issue(key.public_key(), subject, server_names=hosts, client=False, server=True)
        return cert_pem(cert), key_pem(key)


def subject_identity(subject: x509.Name) -> tuple[str, list[str]]:
    """``(CN, [O...])`` of a certificate subject."""
    cn = subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    orgs = subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
    return (str(cn[0].value) if cn else "", [str(o.value) for o in orgs])
