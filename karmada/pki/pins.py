"""CA pins as kubeadm and Karmada print them: ``sha256:`` and the lowercase hex
SHA-256 of the CA certificate's SubjectPublicKeyInfo (DER), so a pin survives
re-issuing the CA certificate with the same key."""

from __future__ import annotations

import hashlib
import hmac

from cryptography import x509
from cryptography.hazmat.primitives import serialization

PREFIX = "sha256:"


def ca_cert_hash(cert_pem: bytes) -> str:
    """The pin of one PEM certificate (the first, if several)."""
    certificate = x509.load_pem_x509_certificate(cert_pem)
    spki = certificate.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return PREFIX + hashlib.sha256(spki).hexdigest()


def parse_pins(values: list[str] | str) -> list[str]:
    """Pins from flags (repeated or comma-separated); ValueError naming a bad one."""
    items = [values] if isinstance(values, str) else values
    pins: list[str] = []
    for item in items:
        for pin in filter(None, (part.strip() for part in item.split(","))):
            digest = pin.removeprefix(PREFIX)
            if (
                not pin.startswith(PREFIX)
                or len(digest) != 64
                or any(c not in "0123456789abcdefABCDEF" for c in digest)
            ):
                raise ValueError(f'invalid CA pin "{pin}": expected "sha256:" and 64 hex digits')
            pins.append(PREFIX + digest.lower())
    return pins


def pin_matches(cert_pem: bytes, pins: list[str]) -> bool:
    """Whether the certificate's pin is one of ``pins``."""
    actual = ca_cert_hash(cert_pem)
    return any(hmac.compare_digest(actual, pin) for pin in pins)


def split_pem(bundle: bytes) -> list[bytes]:
    """The certificates of a PEM bundle, one by one."""
    marker = b"-----END CERTIFICATE-----"
    return [block.strip() + b"\n" + marker + b"\n" for block in bundle.split(marker) if b"BEGIN" in block]


def pins_for(ca_pem: bytes | None) -> list[str]:
    """The pins of every certificate in a CA bundle, in order, without repeats (empty without one)."""
    return list(dict.fromkeys(ca_cert_hash(cert) for cert in split_pem(ca_pem or b"")))
