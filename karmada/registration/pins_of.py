"""The CA pins of a control plane whose CA bundle is known (for flows that
create the register command themselves, like the sandbox)."""

from __future__ import annotations

from karmada.pki import ca_cert_hash
from karmada.registration.tokens import split_pem


def pins_for(ca_pem: bytes | None) -> list[str]:
    """``sha256:`` pins of every certificate in the bundle (empty without one)."""
    return list(dict.fromkeys(ca_cert_hash(cert) for cert in split_pem(ca_pem or b"")))
