"""The agent's control-plane credentials: a kubeconfig (file, or the
``karmada-kubeconfig`` Secret that register wrote in the member), its client
certificate, and rotation: a new certificate is written back to the Secret
(and to the file, when there is one) and the live client switches to it.
Key material is never logged."""

from __future__ import annotations

import base64
import copy
import logging
import os
from pathlib import Path
from typing import Any

import yaml

from karmada.kube import ClusterConfig, KubeClient, from_kubeconfig_bytes
from karmada.kube.resources import SECRETS
from karmada.registration.member import KUBECONFIG_SECRET

log = logging.getLogger("agent.credentials")
Obj = dict[str, Any]


class CredentialsError(Exception):
    """The agent cannot find or use its control-plane credentials."""


def _kubeconfig(data: Any, where: str) -> Obj:
    if not isinstance(data, dict):
        raise CredentialsError(f"{where} is not a kubeconfig")
    return data


class ControlPlaneCredentials:
    """The kubeconfig the agent reaches the control plane with."""

    def __init__(self, kubeconfig: Obj, *, path: Path | None, context: str | None, secret_namespace: str) -> None:
        self.kubeconfig = kubeconfig
        self.path = path
        self.context = context
        self.secret_namespace = secret_namespace

    @classmethod
    async def load(
        cls, member: KubeClient, path: str, context: str | None, secret_namespace: str
    ) -> ControlPlaneCredentials:
        """From ``path`` when given, else from the register Secret in the member."""
        if path:
            try:
                data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
            except OSError as exc:
                raise CredentialsError(f"cannot read {path}: {exc.strerror}") from None
            except yaml.YAMLError:
                raise CredentialsError(f"{path} is not a kubeconfig (not YAML)") from None
            return cls(_kubeconfig(data, path), path=Path(path), context=context, secret_namespace=secret_namespace)
        secret = await member.get_or_none(SECRETS, KUBECONFIG_SECRET, secret_namespace)
        encoded = ((secret or {}).get("data") or {}).get(KUBECONFIG_SECRET)
        if not encoded:
            raise CredentialsError(
                f"no --karmada-kubeconfig and no Secret {secret_namespace}/{KUBECONFIG_SECRET} in the member cluster"
            )
        where = f"Secret {secret_namespace}/{KUBECONFIG_SECRET}"
        try:
            data = yaml.safe_load(base64.b64decode(encoded))
        except (ValueError, yaml.YAMLError):
            raise CredentialsError(f"the {where} holds no kubeconfig") from None
        return cls(_kubeconfig(data, where), path=None, context=context, secret_namespace=secret_namespace)

    def config(self) -> ClusterConfig:
        return from_kubeconfig_bytes(yaml.safe_dump(self.kubeconfig), self.context)

    def _user(self, kubeconfig: Obj | None = None) -> Obj:
        kubeconfig = self.kubeconfig if kubeconfig is None else kubeconfig
        name = self.context or kubeconfig.get("current-context")
        context = next(c for c in kubeconfig.get("contexts") or [] if c.get("name") == name)
        user_name = context["context"]["user"]
        entry = next(u for u in kubeconfig.get("users") or [] if u.get("name") == user_name)
        user: Obj = entry.setdefault("user", {})
        return user

    @property
    def user_name(self) -> str:
        name = self.context or self.kubeconfig.get("current-context")
        context = next(c for c in self.kubeconfig.get("contexts") or [] if c.get("name") == name)
        return str(context["context"]["user"])

    def certificate_pem(self) -> bytes | None:
        data = self._user().get("client-certificate-data")
        return base64.b64decode(data) if data else None

    async def store(self, member: KubeClient, cert_pem: bytes, key_pem: bytes) -> None:
        """Record a renewed certificate: in the Secret, in the file, then in memory.

        Memory changes only once both writes succeeded, so after a failure
        :meth:`config` still gives the running certificate and a retry writes
        the same renewed one again (both writes are idempotent)."""
        renewed = copy.deepcopy(self.kubeconfig)
        user = self._user(renewed)
        user["client-certificate-data"] = base64.b64encode(cert_pem).decode()
        user["client-key-data"] = base64.b64encode(key_pem).decode()
        text = yaml.safe_dump(renewed, sort_keys=False)
        patch = {"data": {KUBECONFIG_SECRET: base64.b64encode(text.encode()).decode()}}
        secret = await member.get_or_none(SECRETS, KUBECONFIG_SECRET, self.secret_namespace)
        if secret is not None:
            await member.patch(SECRETS, KUBECONFIG_SECRET, patch, self.secret_namespace)
        if self.path is not None:
            temporary = self.path.with_suffix(".new")
            # created private: the file holds the key
            temporary.unlink(missing_ok=True)
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as out:
                out.write(text)
            temporary.replace(self.path)
        self.kubeconfig = renewed
        log.info("stored the renewed client certificate")
