"""A certificate's validity period, read straight from its DER.

The agent checks its certificate's remaining lifetime every few minutes; the
cryptography library costs it about 8 MiB of memory for the rest of its life,
so that check reads the two dates itself and cryptography loads only when a
rotation is due. RFC 5280: ``Certificate ::= SEQUENCE { tbsCertificate, ... }``,
``TBSCertificate ::= SEQUENCE { [0] version OPTIONAL, serialNumber, signature,
issuer, validity, ... }``, ``Validity ::= SEQUENCE { notBefore Time, notAfter
Time }``, Time being UTCTime (years 1950-2049) or GeneralizedTime.
"""

from __future__ import annotations

import base64
import binascii
import datetime

_SEQUENCE = 0x30
_VERSION = 0xA0  # [0] EXPLICIT
_UTC_TIME = 0x17
_GENERALIZED_TIME = 0x18
_BEGIN = b"-----BEGIN CERTIFICATE-----"
_END = b"-----END CERTIFICATE-----"


class CertificateFormatError(ValueError):
    """The bytes are not a PEM certificate whose validity can be read."""


def _element(der: bytes, at: int) -> tuple[int, int, int]:
    """``(tag, start of contents, end of contents)`` of the DER element at ``at``."""
    if at + 2 > len(der):
        raise CertificateFormatError("truncated DER element")
    tag, length = der[at], der[at + 1]
    start = at + 2
    if length & 0x80:
        count = length & 0x7F
        if count == 0 or count > 4 or start + count > len(der):
            raise CertificateFormatError("bad DER length")
        length = int.from_bytes(der[start : start + count], "big")
        start += count
    end = start + length
    if end > len(der):
        raise CertificateFormatError("truncated DER element")
    return tag, start, end


def _time(der: bytes, at: int) -> tuple[datetime.datetime, int]:
    tag, start, end = _element(der, at)
    formats = {_UTC_TIME: "%y%m%d%H%M%SZ", _GENERALIZED_TIME: "%Y%m%d%H%M%SZ"}
    if tag not in formats:
        raise CertificateFormatError(f"validity holds tag {tag:#x}, not a time")
    text = der[start:end].decode("ascii", "replace")
    try:
        parsed = datetime.datetime.strptime(text, formats[tag])
    except ValueError:
        raise CertificateFormatError(f"bad certificate time {text!r}") from None
    if tag == _UTC_TIME and parsed.year >= 2050:  # strptime's pivot is 1969; RFC 5280's is 1950
        parsed = parsed.replace(year=parsed.year - 100)
    return parsed.replace(tzinfo=datetime.UTC), end


def _first_der(cert_pem: bytes) -> bytes:
    begin = cert_pem.find(_BEGIN)
    end = cert_pem.find(_END, begin + 1)
    if begin < 0 or end < 0:
        raise CertificateFormatError("no PEM certificate")
    try:
        return base64.b64decode(b"".join(cert_pem[begin + len(_BEGIN) : end].split()), validate=True)
    except binascii.Error:
        raise CertificateFormatError("the PEM certificate is not base64") from None


def certificate_validity(cert_pem: bytes) -> tuple[datetime.datetime, datetime.datetime]:
    """``(notBefore, notAfter)`` in UTC of the first certificate in ``cert_pem``."""
    der = _first_der(cert_pem)
    tag, start, _ = _element(der, 0)
    if tag != _SEQUENCE:
        raise CertificateFormatError("not a certificate")
    tag, at, _ = _element(der, start)  # tbsCertificate
    if tag != _SEQUENCE:
        raise CertificateFormatError("not a certificate")
    if at < len(der) and der[at] == _VERSION:
        at = _element(der, at)[2]
    for _field in ("serialNumber", "signature", "issuer"):
        at = _element(der, at)[2]
    tag, at, _ = _element(der, at)
    if tag != _SEQUENCE:
        raise CertificateFormatError("no validity in the certificate")
    not_before, at = _time(der, at)
    not_after, _ = _time(der, at)
    return not_before, not_after


def remaining_fraction(
    not_before: datetime.datetime, not_after: datetime.datetime, now: datetime.datetime | None = None
) -> float:
    """Share of the lifetime still ahead (1.0 new, 0.0 expired)."""
    total = (not_after - not_before).total_seconds()
    if total <= 0:
        return 0.0
    left = (not_after - (now or datetime.datetime.now(datetime.UTC))).total_seconds()
    return max(0.0, min(1.0, left / total))
