"""CertificateSigningRequests (pkg/apis/certificates/validation: ValidateCertificateRequestCreate):
the PKCS#10 request, signer name, usages and expiration."""

from __future__ import annotations

import base64
from typing import Any

from cryptography import x509

from localkube.errors import Cause, field_invalid, field_required, field_unsupported

Obj = dict[str, Any]

USAGES = [
    "signing",
    "digital signature",
    "content commitment",
    "key encipherment",
    "key agreement",
    "data encipherment",
    "cert sign",
    "crl sign",
    "encipher only",
    "decipher only",
    "any",
    "server auth",
    "client auth",
    "code signing",
    "email protection",
    "s/mime",
    "ipsec end system",
    "ipsec tunnel",
    "ipsec user",
    "timestamping",
    "ocsp signing",
    "microsoft sgc",
    "netscape sgc",
]


def parse_request(spec: Obj) -> x509.CertificateSigningRequest:
    """The PKCS#10 request in ``spec.request`` (base64 of PEM); ValueError when invalid."""
    pem = base64.b64decode(str(spec.get("request", "")), validate=True)
    request = x509.load_pem_x509_csr(pem)
    if not request.is_signature_valid:
        raise ValueError("the request's signature is invalid")
    return request


LEGACY_SIGNER = "kubernetes.io/legacy-unknown"
SIGNER_FORM = "must be a fully qualified domain and path of the form 'example.com/signer-name'"
LEGACY_REFUSED = "the legacy signerName is not allowed via this API version"


def validate_csr(obj: Obj) -> list[Cause]:
    spec: Obj = obj["spec"] if isinstance(obj.get("spec"), dict) else {}
    causes: list[Cause] = []
    try:
        parse_request(spec)
    except (ValueError, TypeError):
        causes.append(field_invalid("spec.request", "[]byte", "PEM block type must be CERTIFICATE REQUEST"))
    signer = str(spec.get("signerName") or "")
    if not signer:
        causes.append(field_required("spec.signerName"))
    elif signer.count("/") != 1:
        causes.append(
            field_invalid(
                "spec.signerName",
                signer,
                "must be a fully qualified domain and path of the form 'example.com/signer-name'",
            )
        )
    elif signer == LEGACY_SIGNER:
        causes.append(
            field_invalid("spec.signerName", signer, "the legacy signerName is not allowed via this API version")
        )
    usages = spec.get("usages") or []
    if not usages:
        causes.append(field_required("spec.usages"))
    for index, usage in enumerate(usages):
        if usage not in USAGES:
            causes.append(field_unsupported(f"spec.usages[{index}]", usage, USAGES))
    if len(set(usages)) != len(usages):
        causes.append(field_invalid("spec.usages", usages, "duplicate usages"))
    expiration = spec.get("expirationSeconds")
    if expiration is not None and (not isinstance(expiration, int) or expiration < 600):
        causes.append(
            field_invalid(
                "spec.expirationSeconds", expiration, "may not specify a duration less than 600 seconds (10 minutes)"
            )
        )
    return causes
