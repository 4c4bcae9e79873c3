"""Identity material for pull-mode registration: bootstrap tokens, CA pins,
the detached JWS that signs ``cluster-info``, keys, CSRs and certificates.

Pure functions over bytes and strings (no network); the flows that use them
live in ``karmada.registration`` and the agent.
"""

# Submodules load on first use: certificates loads cryptography, which an agent needs only
# when its certificate is due for rotation.
from typing import TYPE_CHECKING

from karmada.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from karmada.pki.bootstrap_tokens import (
        DEFAULT_GROUP,
        BootstrapToken,
        InvalidToken,
        token_secret,
    )
    from karmada.pki.certificates import (
        CertificateInfo,
        certificate_info,
        client_csr,
        key_pem,
        new_ec_key,
        new_rsa_key,
        random_suffix,
    )
    from karmada.pki.jws import detached_jws, jws_matches
    from karmada.pki.pins import ca_cert_hash, parse_pins, pin_matches

_LAZY = {
    "DEFAULT_GROUP": "karmada.pki.bootstrap_tokens",
    "BootstrapToken": "karmada.pki.bootstrap_tokens",
    "InvalidToken": "karmada.pki.bootstrap_tokens",
    "token_secret": "karmada.pki.bootstrap_tokens",
    "CertificateInfo": "karmada.pki.certificates",
    "certificate_info": "karmada.pki.certificates",
    "client_csr": "karmada.pki.certificates",
    "key_pem": "karmada.pki.certificates",
    "new_ec_key": "karmada.pki.certificates",
    "new_rsa_key": "karmada.pki.certificates",
    "random_suffix": "karmada.pki.certificates",
    "detached_jws": "karmada.pki.jws",
    "jws_matches": "karmada.pki.jws",
    "ca_cert_hash": "karmada.pki.pins",
    "parse_pins": "karmada.pki.pins",
    "pin_matches": "karmada.pki.pins",
}

__getattr__ = lazy_exports(__name__, _LAZY)


__all__ = [
    "DEFAULT_GROUP",
    "BootstrapToken",
    "CertificateInfo",
    "InvalidToken",
    "ca_cert_hash",
    "certificate_info",
    "client_csr",
    "detached_jws",
    "jws_matches",
    "key_pem",
    "new_ec_key",
    "new_rsa_key",
    "parse_pins",
    "pin_matches",
    "random_suffix",
    "token_secret",
]
