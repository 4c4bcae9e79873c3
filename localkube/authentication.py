"""Who a request comes from: a bearer token (static, bootstrap or service account),
a client certificate, or nobody (anonymous, when allowed).

The order is kube-apiserver's: a request with an ``Authorization`` header is judged
by it alone (a bad token is a 401, never a fallback to the certificate); only one
without a header is judged by its client certificate. Runs on the server's event
loop and only reads the store.
"""

from __future__ import annotations

import functools

from cryptography import x509

from localkube.auth import ANONYMOUS_IDENTITY, Identity, authenticate_bootstrap_token, with_authenticated
from localkube.errors import unauthorized
from localkube.pki import subject_identity
from localkube.store import Store
from localkube.tokens import TokenSigner


class Authenticator:
    """The authenticators of one server, over its store."""

    def __init__(
        self,
        store: Store,
        static_tokens: dict[str, tuple[str, list[str]]],
        anonymous: bool,
        signer: TokenSigner,
        static_token_uids: dict[str, str] | None = None,
    ) -> None:
        self.store = store
        self.signer = signer
        self.static_tokens = dict(static_tokens)
        self.static_token_uids = dict(static_token_uids or {})
        self.anonymous = anonymous

    def token_identity(self, token: str) -> Identity | None:
        """The identity a bearer token proves, or None (TokenReview asks the same)."""
        if token in self.static_tokens:
            user, groups = self.static_tokens[token]
            return with_authenticated(user, groups, self.static_token_uids.get(token, ""))
        return authenticate_bootstrap_token(self.store, token) or self.signer.verify(self.store, token)

    def authenticate(self, authorization: str, peer_certificate: bytes | None) -> Identity:
        """The identity of a request from its ``Authorization`` header and the DER
        client certificate of its TLS connection; 401 if it claims one it cannot prove."""
        if authorization.lower().startswith("bearer "):
            identity = self.token_identity(authorization[7:].strip())
            if identity is None:
                raise unauthorized()
            return identity
        if authorization:
            raise unauthorized()
        if peer_certificate:
            user, groups = _certificate_subject(peer_certificate)
            if user:
                return with_authenticated(user, list(groups))
        if not self.anonymous:
            raise unauthorized()
        return ANONYMOUS_IDENTITY


@functools.lru_cache(maxsize=16384)
def _certificate_subject(der: bytes) -> tuple[str, tuple[str, ...]]:
    """User and groups of a client certificate (the TLS layer verified it; parsed once per
    certificate, not per request: room for the certificates of thousands of agents, a
    few hundred bytes each, so that a fleet's requests never parse one again)."""
    user, groups = subject_identity(x509.load_der_x509_certificate(der).subject)
    return user, tuple(groups)
