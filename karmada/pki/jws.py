"""The detached JWS kube-controller-manager's bootstrap signer puts into
``kube-public/cluster-info`` (key ``jws-kubeconfig-<token id>``): HS256 keyed
with the token secret, header ``{"alg":"HS256","kid":"<token id>"}``, payload
omitted from the output (``header..signature``), base64url without padding."""

from __future__ import annotations

import base64
import hashlib
import hmac


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def detached_jws(content: str, token_id: str, token_secret: str) -> str:
    """The signature string of ``content`` for one token."""
    header = _b64url(('{"alg":"HS256","kid":"' + token_id + '"}').encode())
    signing_input = f"{header}.{_b64url(content.encode())}".encode()
    signature = hmac.new(token_secret.encode(), signing_input, hashlib.sha256).digest()
    return f"{header}..{_b64url(signature)}"


def jws_matches(signature: str, content: str, token_id: str, token_secret: str) -> bool:
    """Whether ``signature`` is the token's signature of ``content`` (constant time)."""
    return hmac.compare_digest(signature, detached_jws(content, token_id, token_secret))
