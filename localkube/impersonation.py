"""User impersonation (``Impersonate-User``, ``-Group``, ``-Uid``, ``-Extra-<key>``),
as kube-apiserver's impersonation filter does it.

Each thing impersonated is authorized for the requester with the
``impersonate`` verb: ``users``, ``groups`` and ``serviceaccounts`` (for a
``system:serviceaccount:<ns>:<name>`` user, in its namespace) in the core
group, ``uids`` and ``userextras/<key>`` in ``authentication.k8s.io``. The
request then runs as the impersonated user, who is ``system:authenticated``
(or ``system:unauthenticated`` for ``system:anonymous``) unless the groups
asked for say otherwise.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass

from multidict import MultiMapping

from localkube.auth import ANONYMOUS, AUTHENTICATED, UNAUTHENTICATED, Attributes, Identity, forbidden_message
from localkube.errors import bad_request, forbidden
from localkube.meta import name_problem
from localkube.rbac import SERVICE_ACCOUNT_PREFIX, Authorizer

USER_HEADER = "Impersonate-User"
GROUP_HEADER = "Impersonate-Group"
UID_HEADER = "Impersonate-Uid"
EXTRA_PREFIX = "impersonate-extra-"
AUTHENTICATION_GROUP = "authentication.k8s.io"
AUTHENTICATION_VERSION = "authentication.k8s.io/v1"


@dataclass(frozen=True)
class Request:
    """One thing to impersonate (an ObjectReference in kube's filter)."""

    kind: str  # ServiceAccount, User, Group, UserExtra, UID
    name: str
    namespace: str = ""
    api_version: str = ""
    field_path: str = ""  # the extra's key

    def go_string(self) -> str:
        """How Go's ``%v`` prints the ObjectReference (kube quotes it in the 400)."""
        fields = (self.kind, self.namespace, self.name, "", self.api_version, "", self.field_path)
        return "{" + " ".join(fields) + "}"

    def attributes(self) -> Attributes:
        if self.kind == "ServiceAccount":
            return Attributes("impersonate", True, "", "serviceaccounts", namespace=self.namespace, name=self.name)
        if self.kind == "User":
            return Attributes("impersonate", True, "", "users", name=self.name)
        if self.kind == "Group":
            return Attributes("impersonate", True, "", "groups", name=self.name)
        if self.kind == "UserExtra":
            return Attributes("impersonate", True, AUTHENTICATION_GROUP, "userextras", self.field_path, name=self.name)
        return Attributes("impersonate", True, AUTHENTICATION_GROUP, "uids", name=self.name)


def split_service_account(user: str) -> tuple[str, str] | None:
    """``(namespace, name)`` of a valid ``system:serviceaccount:<ns>:<name>`` user name."""
    if not user.startswith(SERVICE_ACCOUNT_PREFIX):
        return None
    parts = user[len(SERVICE_ACCOUNT_PREFIX) :].split(":")
    if len(parts) != 2:
        return None
    namespace, name = parts
    if name_problem("Namespace", namespace) or name_problem("ServiceAccount", name):
        return None
    return namespace, name


def _extra_key(header: str) -> str:
    key = header[len(EXTRA_PREFIX) :].lower()
    try:
        return urllib.parse.unquote(key, errors="strict")
    except UnicodeDecodeError:
        return key


def requests_from(headers: MultiMapping[str]) -> list[Request]:
    """What the headers ask to impersonate; 400 when they name no user but other things."""
    found: list[Request] = []
    user = headers.get(USER_HEADER, "")
    if user:
        account = split_service_account(user)
        if account is not None:
            found.append(Request("ServiceAccount", account[1], account[0]))
        else:
            found.append(Request("User", user))
    groups = headers.getall(GROUP_HEADER, [])
    found.extend(Request("Group", group) for group in groups)
    # header names are case-insensitive: one key per name, in a stable order
    extras = sorted({name.lower() for name in headers if name.lower().startswith(EXTRA_PREFIX)})
    for header in extras:
        key = _extra_key(header)
        found.extend(
            Request("UserExtra", value, api_version=AUTHENTICATION_VERSION, field_path=key)
            for value in headers.getall(header)
        )
    uid = headers.get(UID_HEADER, "")
    if uid:
        found.append(Request("UID", uid, api_version=AUTHENTICATION_VERSION))
    if found and not user:
        listed = " ".join(r.go_string() for r in found)
        raise bad_request(f"requested [{listed}] without impersonating a user")
    return found


def impersonate(headers: MultiMapping[str], requester: Identity, authorizer: Authorizer) -> Identity:
    """The identity a request runs as: ``requester``, or whom it may and asks to impersonate."""
    requests = requests_from(headers)
    if not requests:
        return requester
    groups_given = bool(headers.getall(GROUP_HEADER, []))
    user, uid = "", ""
    groups: list[str] = []
    extra: dict[str, list[str]] = {}
    for request in requests:
        attrs = request.attributes()
        allowed, reason = authorizer.decide(requester, attrs)
        if not allowed:
            raise forbidden(
                forbidden_message(requester, attrs, reason), resource=attrs.resource, group=attrs.group, name=attrs.name
            )
        if request.kind == "ServiceAccount":
            user = f"{SERVICE_ACCOUNT_PREFIX}{request.namespace}:{request.name}"
            if not groups_given:
                groups = ["system:serviceaccounts", f"system:serviceaccounts:{request.namespace}"]
        elif request.kind == "User":
            user = request.name
        elif request.kind == "Group":
            groups.append(request.name)
        elif request.kind == "UserExtra":
            extra.setdefault(request.field_path, []).append(request.name)
        else:
            uid = request.name
    if user != ANONYMOUS:
        if AUTHENTICATED not in groups and UNAUTHENTICATED not in groups:
            groups.append(AUTHENTICATED)
    elif UNAUTHENTICATED not in groups:
        groups.append(UNAUTHENTICATED)
    return Identity(user, groups, uid, extra)
