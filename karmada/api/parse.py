"""Turn a decoded JSON/YAML document into the right Karmada model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from karmada.api._base import KubeObject
from karmada.api.errors import APIValidationError, FieldError
from karmada.api.kinds import kind_info


def parse_object(data: Any, *, strict_fields: bool = False) -> KubeObject:
    """Validate ``data`` as the Karmada kind its ``apiVersion``/``kind`` name.

    With ``strict_fields`` unknown fields are errors too, as with kubectl's
    default ``--validate=strict``; otherwise they are kept untyped.
    Raises :class:`APIValidationError` naming every bad field.
    """
    if not isinstance(data, dict):
        raise APIValidationError([FieldError("", "an object must be a mapping")])
    api_version, kind = data.get("apiVersion"), data.get("kind")
    info = kind_info(str(api_version), str(kind))
    if info is None:
        raise APIValidationError(
            [FieldError("kind", f"{kind!s} in {api_version!s} is not a Karmada kind this version serves")]
        )
    obj = info.model.from_dict(data)
    if strict_fields:
        unknown = obj.unknown_fields()
        if unknown:
            raise APIValidationError([FieldError(path, "unknown field") for path in unknown])
    return obj


@dataclass(frozen=True)
class DocumentCheck:
    """The verdict on one YAML document: what it is and what is wrong with it."""

    index: int
    api_version: str
    kind: str
    name: str
    karmada_kind: bool
    errors: tuple[str, ...]


def check_documents(text: str) -> list[DocumentCheck]:
    """Validate every Karmada object in a multi-document YAML text.

    Objects of other kinds (Deployments, ConfigMaps ...) are reported with
    ``karmada_kind=False`` and no errors: the API server validates those.
    Unknown fields in Karmada objects are errors, as with kubectl's default
    strict field validation. A YAML syntax error is an error of document 0.
    """
    try:
        documents = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        return [DocumentCheck(0, "", "", "", False, (f"invalid YAML: {exc}",))]
    checks: list[DocumentCheck] = []
    for index, doc in enumerate(documents):
        if not isinstance(doc, dict):
            checks.append(DocumentCheck(index, "", "", "", False, ("a document must be a mapping",)))
            continue
        api_version, kind = str(doc.get("apiVersion", "")), str(doc.get("kind", ""))
        metadata = doc.get("metadata")
        name = str(metadata.get("name", "")) if isinstance(metadata, dict) else ""
        is_karmada = kind_info(api_version, kind) is not None
        errors: tuple[str, ...] = ()
        if is_karmada:
            try:
                parse_object(doc, strict_fields=True)
            except APIValidationError as exc:
                errors = tuple(str(e) for e in exc.errors)
        checks.append(DocumentCheck(index, api_version, kind, name, is_karmada, errors))
    return checks
