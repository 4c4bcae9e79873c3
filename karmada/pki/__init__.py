"""Identity material for pull-mode registration: bootstrap tokens, CA pins,
the detached JWS that signs ``cluster-info``, keys, CSRs and certificates.

Pure functions over bytes and strings (no network); the flows that use them
live in ``karmada.registration`` and the agent.
"""

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
