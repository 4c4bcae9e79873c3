"""karmada.pki.validity reads the dates cryptography reads, from real certificates and broken ones."""

from __future__ import annotations

import base64
import datetime

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from karmada.pki.validity import CertificateFormatError, certificate_validity, remaining_fraction

UTC = datetime.UTC


def _certificate(
    not_before: datetime.datetime,
    not_after: datetime.datetime,
    *,
    rsa_key: bool = False,
    long_subject: bool = False,
    serial: int = 7,
) -> bytes:
    key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
    if rsa_key:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    else:
        key = ec.generate_private_key(ec.SECP256R1())
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, "system:karmada:agent:member1")]
    if long_subject:  # a subject longer than 127 bytes: multi-byte DER lengths inside the TBS
        attributes += [x509.NameAttribute(NameOID.ORGANIZATION_NAME, f"org-{i}-" + "x" * 40) for i in range(4)]
    name = x509.Name(attributes)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(serial)
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM)


@pytest.mark.parametrize(
    ("not_before", "not_after", "options"),
    [
        # UTCTime both sides
        (datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC), datetime.datetime(2027, 1, 2, 3, 4, 5, tzinfo=UTC), {}),
        # 1950-1999 in UTCTime (two-digit years 50-99)
        (datetime.datetime(1999, 12, 31, 23, 59, 59, tzinfo=UTC), datetime.datetime(2049, 12, 31, tzinfo=UTC), {}),
        # from 2050 on, GeneralizedTime (RFC 5280)
        (datetime.datetime(2020, 5, 5, tzinfo=UTC), datetime.datetime(2130, 5, 5, tzinfo=UTC), {}),
        (datetime.datetime(2026, 1, 1, tzinfo=UTC), datetime.datetime(2026, 1, 2, tzinfo=UTC), {"rsa_key": True}),
        (datetime.datetime(2026, 1, 1, tzinfo=UTC), datetime.datetime(2036, 1, 1, tzinfo=UTC), {"long_subject": True}),
        (datetime.datetime(2026, 1, 1, tzinfo=UTC), datetime.datetime(2036, 1, 1, tzinfo=UTC), {"serial": 2**150}),
    ],
)
def test_validity_agrees_with_cryptography(
    not_before: datetime.datetime, not_after: datetime.datetime, options: dict[str, object]
) -> None:
    pem = _certificate(not_before, not_after, **options)  # type: ignore[arg-type]
    parsed = x509.load_pem_x509_certificate(pem)
    assert certificate_validity(pem) == (parsed.not_valid_before_utc, parsed.not_valid_after_utc)
    assert certificate_validity(pem) == (not_before, not_after)


def test_the_first_certificate_of_a_chain_counts() -> None:
    first = _certificate(datetime.datetime(2026, 1, 1, tzinfo=UTC), datetime.datetime(2026, 6, 1, tzinfo=UTC))
    second = _certificate(datetime.datetime(2020, 1, 1, tzinfo=UTC), datetime.datetime(2040, 1, 1, tzinfo=UTC))
    assert certificate_validity(b"junk before\n" + first + second)[1] == datetime.datetime(2026, 6, 1, tzinfo=UTC)


def _pem(der: bytes) -> bytes:
    return b"-----BEGIN CERTIFICATE-----\n" + base64.encodebytes(der) + b"-----END CERTIFICATE-----\n"


@pytest.mark.parametrize(
    ("pem", "message"),
    [
        (b"", "no PEM certificate"),
        (b"-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n", "not base64"),
        (_pem(b""), "truncated"),
        (_pem(b"\x02\x01\x05"), "not a certificate"),  # an INTEGER, not a SEQUENCE
        (_pem(b"\x30\x05\x30\x03\x02\x01"), "truncated"),  # lengths past the end
        (_pem(b"\x30\x84\xff\xff\xff\xff"), "truncated"),
        (_pem(b"\x30\x80"), "bad DER length"),  # indefinite length is not DER
        # a TBS whose validity holds an INTEGER where a time belongs
        (_pem(bytes.fromhex("3011300f020101300030003006020101020101")), "not a time"),
        # a time that is not a date
        (_pem(bytes.fromhex("3017301502010130003000300c170441424344170441424344")), "bad"),
    ],
)
def test_broken_certificates_are_refused_by_name(pem: bytes, message: str) -> None:
    with pytest.raises(CertificateFormatError, match=message):
        certificate_validity(pem)


@pytest.mark.parametrize(
    ("now_hours", "fraction"),
    [(0, 1.0), (2, 0.8), (8, 0.2), (10, 0.0), (12, 0.0), (-1, 1.0)],
)
def test_remaining_fraction(now_hours: float, fraction: float) -> None:
    start = datetime.datetime(2026, 1, 1, tzinfo=UTC)
    end = start + datetime.timedelta(hours=10)
    assert remaining_fraction(start, end, start + datetime.timedelta(hours=now_hours)) == pytest.approx(fraction)
    assert remaining_fraction(end, start, start) == 0.0  # a certificate that ends before it starts
