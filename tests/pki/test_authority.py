"""The installers' small CA (:mod:`karmada.pki.authority`): SAN kinds, backdating, a leaf
capped by its CA, and which certificates are still current."""

from __future__ import annotations

import datetime

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID

from karmada.pki.authority import BACKDATE, current, distinguished_name, general_names, issue, new_ca

NOW = datetime.datetime(2026, 12, 2, 12, 0, tzinfo=datetime.UTC)
DAY = datetime.timedelta(days=1)


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1", x509.IPAddress),
        ("[::1]", x509.IPAddress),
        ("2001:db8::1", x509.IPAddress),
        ("karmada-apiserver.karmada-system.svc", x509.DNSName),
        ("localhost", x509.DNSName),
    ],
)
def test_general_names(host: str, expected: type) -> None:
    (found,) = general_names([host])
    assert isinstance(found, expected)


def test_a_leaf_is_backdated_capped_by_its_ca_and_current_until_renewal() -> None:
    ca_cert, ca_key = new_ca("test-ca", NOW, 10 * DAY)
    subject = distinguished_name("someone", ["group"])
    cert_pem, _ = issue(ca_cert, ca_key, subject, ExtendedKeyUsageOID.CLIENT_AUTH, [], NOW, 365 * DAY)
    cert = x509.load_pem_x509_certificate(cert_pem)
    assert cert.not_valid_before_utc == NOW - BACKDATE
    assert cert.not_valid_after_utc == x509.load_pem_x509_certificate(ca_cert).not_valid_after_utc
    assert cert.subject.rfc4514_string() == "CN=someone,O=group"
    assert current(cert_pem, ca_cert, NOW, 5 * DAY)
    assert not current(cert_pem, ca_cert, NOW + 6 * DAY, 5 * DAY)  # within the renewal window
    assert not current(cert_pem, ca_cert, NOW - DAY, DAY)  # not valid yet
    other_ca, _ = new_ca("other-ca", NOW, 10 * DAY)
    assert not current(cert_pem, other_ca, NOW, DAY)  # another CA's
    assert not current(b"not a certificate", ca_cert, NOW, DAY)
    assert current(ca_cert, ca_cert, NOW, DAY)  # a CA checks itself
