"""A PKI given to localkube as files, as kube-apiserver and kube-controller-manager
take theirs: the serving certificate, the client CA bundle, the cluster-signing CA
and the service-account keys.

:func:`load_given_pki` reads and checks every file once, before the server
starts (the command line calls it; a test may too), and returns the parsed
objects: nothing is written, narrowed or kept open, so the files may be a
read-only Secret mount. The serving certificate and key stay files because
Python's ``ssl`` loads a chain only from files; they are read again from the
same paths when the listener starts. Every problem is a :class:`GivenFileError`
whose one-line message names the flag and the file, never a key's contents.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from localkube.pki import CertificateAuthority, cert_pem
from localkube.tokens import KEY_BYTES, SigningKey, TokenSigner, UnsupportedKeyError, VerifyingKey, jwt_algorithm

_PEM_BLOCK = re.compile(rb"-----BEGIN ([A-Z0-9 ]+)-----\r?\n.*?-----END \1-----", re.DOTALL)


class GivenFileError(ValueError):
    """A given file localkube cannot use: ``FLAG FILE: why``."""

    def __init__(self, flag: str, path: Path, problem: str) -> None:
        super().__init__(f"{flag} {path}: {problem}")


@dataclass(frozen=True)
class ServingCertificate:
    """``--tls-cert-file`` (the leaf first, then any intermediates) and ``--tls-private-key-file``."""

    cert_file: Path
    key_file: Path
    chain: list[x509.Certificate]


@dataclass
class GivenPKI:
    """What was given; ``None`` (or empty) where localkube makes its own."""

    serving: ServingCertificate | None = None
    client_ca: list[x509.Certificate] = field(default_factory=list)
    signing_ca: CertificateAuthority | None = None
    token_signer: TokenSigner | None = None

    def client_ca_pem(self, own: CertificateAuthority) -> bytes:
        """The bundle client certificates are verified against: the given one, else ``own`` CA."""
        if self.client_ca:
            return b"".join(cert_pem(cert) for cert in self.client_ca)
        return cert_pem(own.cert)

    def serving_ca(self, own: CertificateAuthority) -> list[x509.Certificate]:
        """The CA certificates that verify the serving certificate, for kubeconfigs, cluster-info
        and kube-root-ca.crt: the issuers of the given one found among ``own`` CA, the client CA
        bundle and the intermediates of --tls-cert-file, up to the root (empty if none is found);
        ``own`` CA when localkube issues its serving certificate itself."""
        if self.serving is None:
            return [own.cert]
        leaf, *rest = self.serving.chain
        candidates = [own.cert, *self.client_ca, *rest]
        found: list[x509.Certificate] = []
        current = leaf
        for _ in range(len(candidates)):
            issuer = next((c for c in candidates if c not in found and _issued_by(current, c)), None)
            if issuer is None:
                break
            found.append(issuer)
            if issuer.subject == issuer.issuer:
                break
            current = issuer
        if not found and leaf.subject == leaf.issuer and _issued_by(leaf, leaf):
            return [leaf]  # a self-signed serving certificate is its own CA
        return found[-1:]


def _issued_by(cert: x509.Certificate, issuer: x509.Certificate) -> bool:
    try:
        cert.verify_directly_issued_by(issuer)
    except Exception:  # a wrong name, key type or signature: not this issuer
        return False
    return True


def _read(flag: str, path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise GivenFileError(flag, path, f"cannot read it ({exc.strerror or exc})") from None


def _certificates(flag: str, path: Path) -> list[x509.Certificate]:
    data = _read(flag, path)
    blocks = [m.group(0) for m in _PEM_BLOCK.finditer(data) if m.group(1) == b"CERTIFICATE"]
    if not blocks:
        raise GivenFileError(flag, path, "holds no PEM certificate")
    try:
        return [x509.load_pem_x509_certificate(block) for block in blocks]
    except ValueError:
        raise GivenFileError(flag, path, "holds a certificate that cannot be parsed") from None


def _private_key(flag: str, path: Path) -> SigningKey:
    data = _read(flag, path)
    if b"-----BEGIN ENCRYPTED PRIVATE KEY-----" in data or b"Proc-Type: 4,ENCRYPTED" in data:
        raise GivenFileError(flag, path, "the private key is encrypted (give it unencrypted)")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        raise GivenFileError(flag, path, "holds no PEM private key that can be parsed") from None
    if not isinstance(key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey):
        raise GivenFileError(flag, path, f"{_kind(key)} is not supported (RSA or ECDSA)")
    return key


def _public_key_der(key: SigningKey | VerifyingKey) -> bytes:
    public = key.public_key() if isinstance(key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) else key
    return public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def _matching_pair(
    cert_flag: str, cert_file: Path, key_flag: str, key_file: Path
) -> tuple[list[x509.Certificate], SigningKey]:
    chain = _certificates(cert_flag, cert_file)
    key = _private_key(key_flag, key_file)
    if _public_key_der(key) != chain[0].public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    ):
        raise GivenFileError(key_flag, key_file, f"is not the key of the certificate in {cert_flag} {cert_file}")
    return chain, key


def _public_keys(flag: str, path: Path) -> list[VerifyingKey]:
    """Every key of a PEM file: public keys, certificates and private keys (their public halves),
    as kube-apiserver reads --service-account-key-file."""
    data = _read(flag, path)
    keys: list[VerifyingKey] = []
    for match in _PEM_BLOCK.finditer(data):
        kind, block = match.group(1), match.group(0)
        try:
            if kind == b"CERTIFICATE":
                public: object = x509.load_pem_x509_certificate(block).public_key()
            elif kind in (b"PUBLIC KEY", b"RSA PUBLIC KEY"):
                public = serialization.load_pem_public_key(block)
            elif kind in (b"PRIVATE KEY", b"RSA PRIVATE KEY", b"EC PRIVATE KEY"):
                public = serialization.load_pem_private_key(block, password=None).public_key()
            else:
                continue
        except (ValueError, TypeError, UnsupportedAlgorithm):
            raise GivenFileError(flag, path, f"a {kind.decode()} block cannot be parsed") from None
        if not isinstance(public, rsa.RSAPublicKey | ec.EllipticCurvePublicKey):
            raise GivenFileError(flag, path, f"{_kind(public)} is not supported (RSA or ECDSA)")
        keys.append(public)
    if not keys:
        raise GivenFileError(flag, path, "holds no PEM public key, certificate or private key")
    return keys


def _both(flags: tuple[str, str], paths: tuple[Path | None, Path | None]) -> bool:
    """Whether a pair of flags is given (both) or not (neither); one alone is an error."""
    if (paths[0] is None) != (paths[1] is None):
        given, missing = (0, 1) if paths[0] is not None else (1, 0)
        path = paths[given]
        assert path is not None
        raise GivenFileError(flags[given], path, f"needs {flags[missing]} too")
    return paths[0] is not None


def load_given_pki(
    *,
    tls_cert_file: Path | None = None,
    tls_private_key_file: Path | None = None,
    client_ca_file: Path | None = None,
    cluster_signing_cert_file: Path | None = None,
    cluster_signing_key_file: Path | None = None,
    service_account_signing_key_file: Path | None = None,
    service_account_key_files: list[Path] | None = None,
) -> GivenPKI:
    """Read and check the given files (``None``: not given); :class:`GivenFileError` on the first problem."""
    given = GivenPKI()
    if _both(("--tls-cert-file", "--tls-private-key-file"), (tls_cert_file, tls_private_key_file)):
        assert tls_cert_file is not None and tls_private_key_file is not None
        chain, _ = _matching_pair("--tls-cert-file", tls_cert_file, "--tls-private-key-file", tls_private_key_file)
        given.serving = ServingCertificate(tls_cert_file, tls_private_key_file, chain)
    if client_ca_file is not None:
        given.client_ca = _certificates("--client-ca-file", client_ca_file)
    signing = ("--cluster-signing-cert-file", "--cluster-signing-key-file")
    if _both(signing, (cluster_signing_cert_file, cluster_signing_key_file)):
        assert cluster_signing_cert_file is not None and cluster_signing_key_file is not None
        chain, key = _matching_pair(signing[0], cluster_signing_cert_file, signing[1], cluster_signing_key_file)
        if not _is_ca(chain[0]):
            raise GivenFileError(signing[0], cluster_signing_cert_file, "is not a CA certificate (CA:FALSE)")
        given.signing_ca = CertificateAuthority(chain[0], key)  # type: ignore[arg-type]  # RSA signs as well
    given.token_signer = _token_signer(service_account_signing_key_file, list(service_account_key_files or []))
    return given


def _token_signer(signing_file: Path | None, verifying_files: list[Path]) -> TokenSigner | None:
    signing_flag, verifying_flag = "--service-account-signing-key-file", "--service-account-key-file"
    if signing_file is None:
        if verifying_files:
            raise GivenFileError(verifying_flag, verifying_files[0], f"needs {signing_flag} too")
        return None
    data = _read(signing_flag, signing_file)
    if b"-----BEGIN" not in data:
        return _hmac_signer(signing_file, data, verifying_files)
    private = _private_key(signing_flag, signing_file)
    try:
        jwt_algorithm(private)
    except UnsupportedKeyError as exc:
        raise GivenFileError(signing_flag, signing_file, str(exc)) from None
    public: list[VerifyingKey] = []
    for path in verifying_files:
        for key in _public_keys(verifying_flag, path):
            try:
                jwt_algorithm(key)
            except UnsupportedKeyError as exc:
                raise GivenFileError(verifying_flag, path, str(exc)) from None
            public.append(key)
    signer = TokenSigner.asymmetric(private, public or None)
    if not signer.verifies_own_tokens:
        raise GivenFileError(
            verifying_flag,
            verifying_files[0],
            f"none of the keys given verifies the tokens that {signing_flag} {signing_file} signs",
        )
    return signer


def _hmac_signer(path: Path, data: bytes, verifying_files: list[Path]) -> TokenSigner:
    """localkube's own ``sa.key`` (base64 of an HMAC key), which has no public key."""
    flag = "--service-account-signing-key-file"
    try:
        key = base64.b64decode(data.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise GivenFileError(flag, path, "neither a PEM private key nor a localkube sa.key (base64)") from None
    if len(key) < KEY_BYTES:
        raise GivenFileError(flag, path, f"a localkube sa.key has at least {KEY_BYTES} bytes")
    if verifying_files:
        raise GivenFileError(
            "--service-account-key-file", verifying_files[0], f"an HMAC {flag} (a localkube sa.key) has no public key"
        )
    return TokenSigner(key)


def _is_ca(cert: x509.Certificate) -> bool:
    try:
        return bool(cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca)
    except x509.ExtensionNotFound:
        return True  # an old v1 CA certificate has no extensions


def _kind(key: object) -> str:
    """``an Ed25519 key`` and the like, from the key's class."""
    name = type(key).__name__.replace("PrivateKey", "").replace("PublicKey", "").lstrip("_")
    return f"{'an' if name[:1] in 'AEIOU' else 'a'} {name} key"
