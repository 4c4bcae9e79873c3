"""CertificateSigningRequests: create-time checks, the approval and status rules, who
may approve or sign for a signer, and the ``kubernetes.io/kube-apiserver-client``
signer of kube-controller-manager."""

from __future__ import annotations

import base64
import contextlib
import copy
import datetime
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import ExtendedKeyUsageOID

from localkube.auth import Attributes, Identity
from localkube.errors import (
    Cause,
    field_forbidden,
    field_invalid,
    field_unsupported,
    forbidden,
    invalid,
)
from localkube.kinds import Context, Strategy, register
from localkube.meta import now_time
from localkube.pki import CertificateAuthority
from localkube.rbac import Authorizer
from localkube.resources import ResourceType
from localkube.validation.certificates import parse_request

Obj = dict[str, Any]

CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client"
CLIENT_USAGES = {"digital signature", "key encipherment", "client auth"}


class CSRStrategy(Strategy):
    def prepare_create(self, obj: Obj, context: Context) -> None:
        spec = obj.setdefault("spec", {})
        spec["username"] = context.user
        spec["groups"] = list(context.groups)
        if context.uid:
            spec["uid"] = context.uid
        else:
            spec.pop("uid", None)
        if context.extra:
            spec["extra"] = context.extra
        else:
            spec.pop("extra", None)
        obj["status"] = {}

    def prepare_update(self, obj: Obj, old: Obj, context: Context) -> None:
        obj["spec"] = copy.deepcopy(old.get("spec", {}))
        if "status" in old:
            obj["status"] = copy.deepcopy(old["status"])


register("CertificateSigningRequest", CSRStrategy())


def _conditions(obj: Obj) -> list[Obj]:
    return list((obj.get("status") or {}).get("conditions") or [])


def approval_update(obj: Obj, old: Obj, context: Context) -> Obj:
    """``/approval``: only conditions change; Approved/Denied are final and exclusive."""
    new = copy.deepcopy(old)
    conditions = _conditions(obj)
    previous = {c.get("type"): c for c in _conditions(old)}
    name = old["metadata"]["name"]
    causes: list[Cause] = []
    kinds = [c.get("type") for c in conditions]
    if "Approved" in kinds and "Denied" in kinds:
        causes.append(
            field_invalid("status.conditions", "Approved", "Approved and Denied conditions are mutually exclusive")
        )
    for kind in ("Approved", "Denied"):
        if kinds.count(kind) > 1:
            causes.append(field_invalid("status.conditions", kind, f"{kind} condition may only appear once"))
        if kind in previous and kind not in kinds:
            causes.append(field_forbidden("status.conditions", f"updates may not remove a condition of type {kind!r}"))
    now = now_time()
    for condition in conditions:
        if condition.get("type") in ("Approved", "Denied") and condition.get("status") != "True":
            causes.append(field_unsupported("status.conditions[].status", condition.get("status"), ["True"]))
        condition.setdefault("lastUpdateTime", now)
        condition.setdefault("lastTransitionTime", now)
        earlier = previous.get(condition.get("type"))
        if (
            earlier is not None
            and earlier.get("type") in ("Approved", "Denied")
            and {k: v for k, v in earlier.items() if k not in ("lastUpdateTime", "lastTransitionTime")}
            != {k: v for k, v in condition.items() if k not in ("lastUpdateTime", "lastTransitionTime")}
        ):
            causes.append(
                field_forbidden(
                    "status.conditions", f"updates may not modify a condition of type {condition['type']!r}"
                )
            )
    if causes:
        raise invalid("CertificateSigningRequest", "certificates.k8s.io", name, causes)
    new.setdefault("status", {})["conditions"] = conditions
    new["metadata"]["resourceVersion"] = obj["metadata"].get("resourceVersion")
    return new


def status_update(new: Obj, old: Obj) -> Obj:
    """``/status``: the certificate may be set once; Approved/Denied may not change."""
    old_status = old.get("status") or {}
    new_status = new.setdefault("status", {})
    name = old["metadata"]["name"]
    if old_status.get("certificate") and new_status.get("certificate") != old_status["certificate"]:
        raise invalid(
            "CertificateSigningRequest",
            "certificates.k8s.io",
            name,
            [field_forbidden("status.certificate", "updates may not modify existing certificate content")],
        )
    kept = [c for c in _conditions(old) if c.get("type") in ("Approved", "Denied")]
    others = [c for c in new_status.get("conditions") or [] if c.get("type") not in ("Approved", "Denied")]
    new_status["conditions"] = kept + others
    return new


def signer_authorized(authorizer: Authorizer, identity: Identity, verb: str, signer: str) -> bool:
    """``verb`` on the ``signers`` resource named ``signer``, or its ``<domain>/*`` wildcard."""
    for name in (signer, signer.split("/", 1)[0] + "/*"):
        if authorizer.allowed(identity, Attributes(verb, True, "certificates.k8s.io", "signers", name=name)):
            return True
    return False


def admit(
    authorizer: Authorizer, rt: ResourceType, subresource: str, obj: Obj, old: Obj | None, context: Context
) -> None:
    """kube's CertificateApproval and CertificateSigning admission: an approval or denial needs
    ``approve``, and setting the certificate needs ``sign``, on the (old) request's signer."""
    if rt.kind != "CertificateSigningRequest" or old is None or subresource not in ("approval", "status"):
        return
    if subresource == "status" and (obj.get("status") or {}).get("certificate") == (old.get("status") or {}).get(
        "certificate"
    ):
        return
    verb = "approve" if subresource == "approval" else "sign"
    signer = str((old.get("spec") or {}).get("signerName", ""))
    identity = Identity(context.user, list(context.groups), context.uid, dict(context.extra))
    if not signer_authorized(authorizer, identity, verb, signer):
        name = old["metadata"]["name"]
        raise forbidden(
            f'certificatesigningrequests.certificates.k8s.io "{name}" is forbidden: '
            f'user not permitted to {verb} requests with signerName "{signer}"',
            resource="certificatesigningrequests",
            group="certificates.k8s.io",
            name=name,
        )


def _has(obj: Obj, kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True" for c in _conditions(obj))


def sign_client_csr(obj: Obj, ca: CertificateAuthority) -> Obj | None:
    """The CSR's new status if the built-in client signer acts on it, else None."""
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    if spec.get("signerName") != CLIENT_SIGNER or status.get("certificate"):
        return None
    if not _has(obj, "Approved") or _has(obj, "Denied") or _has(obj, "Failed"):
        return None
    usages = set(spec.get("usages") or [])
    now = now_time()
    problem = None
    if "client auth" not in usages:
        problem = "missing required usage for client certificate: client auth"
    else:
        extra = sorted(usages - CLIENT_USAGES)
        if extra:
            problem = f"invalid usage for client certificate: {extra[0]}"
    new_status = copy.deepcopy(status)
    if problem:
        new_status.setdefault("conditions", []).append(
            {
                "type": "Failed",
                "status": "True",
                "reason": "SignerValidationFailure",
                "message": problem,
                "lastUpdateTime": now,
                "lastTransitionTime": now,
            }
        )
        return new_status
    request = parse_request(spec)
    lifetime = datetime.timedelta(hours=8760)
    expiration = spec.get("expirationSeconds")
    if isinstance(expiration, int):
        lifetime = min(lifetime, datetime.timedelta(seconds=max(expiration, 600)))
    sans: list[x509.GeneralName] = []
    with contextlib.suppress(x509.ExtensionNotFound):
        sans = list(request.extensions.get_extension_for_class(x509.SubjectAlternativeName).value)
    cert = ca.issue(request.public_key(), request.subject, client=True, lifetime=lifetime, extra_sans=sans)
    new_status["certificate"] = base64.b64encode(cert.public_bytes(serialization.Encoding.PEM)).decode()
    return new_status


__all__ = ["CLIENT_SIGNER", "ExtendedKeyUsageOID", "admit", "approval_update", "sign_client_csr", "status_update"]
