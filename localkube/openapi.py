"""The OpenAPI v3 documents kubectl 1.32 needs: per group-version, each kind's
PATCH operation advertising ``fieldValidation`` (so ``kubectl apply`` validates
on the server) and component schemas for ``kubectl explain`` (a CRD's schema
for custom resources; Kubernetes' own definitions for built-in kinds)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from localkube import builtin_schemas
from localkube.resources import Registry, ResourceType

Obj = dict[str, Any]

# The server accepts strategic merge patches for built-in kinds, but the documents
# do not advertise them: without full built-in schemas here, kubectl must compute
# its apply patches from its compiled-in types (which know every merge key).
_PATCH_TYPES = ["application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"]


def _gv_path(group: str, version: str) -> str:
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def _schema_name(rt: ResourceType) -> str:
    if not rt.custom:
        known = builtin_schemas.definition_name(rt.group, rt.version, rt.kind)
        if known is not None:
            return known
    group = ".".join(reversed(rt.group.split("."))) if rt.group else "core"
    return (
        f"io.k8s.api.{group}.{rt.version}.{rt.kind}"
        if not rt.custom
        else f"{'.'.join(reversed(rt.group.split('.')))}.{rt.version}.{rt.kind}"
    )


def _object_schema(rt: ResourceType) -> Obj:
    gvk = [{"group": rt.group, "version": rt.version, "kind": rt.kind}]
    if rt.custom and rt.schema is not None:
        schema: Obj = json.loads(json.dumps(rt.schema))
        props = schema.setdefault("properties", {})
        props.setdefault(
            "apiVersion",
            {
                "type": "string",
                "description": "APIVersion defines the versioned schema of this representation of an object.",
            },
        )
        props.setdefault(
            "kind",
            {
                "type": "string",
                "description": "Kind is a string value representing the REST resource this object represents.",
            },
        )
        props["metadata"] = {"type": "object", "description": "Standard object's metadata."}
        schema["x-kubernetes-group-version-kind"] = gvk
        return schema
    return {
        "type": "object",
        "description": f"{rt.kind} ({rt.api_version})",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
        },
        "x-kubernetes-preserve-unknown-fields": True,
        "x-kubernetes-group-version-kind": gvk,
    }


FIELD_VALIDATION_TEXT = (
    "fieldValidation instructs the server on how to handle objects in the request"
    " containing unknown or duplicate fields."
)
_FIELD_VALIDATION = {
    "name": "fieldValidation",
    "in": "query",
    "description": FIELD_VALIDATION_TEXT,
    "schema": {"type": "string", "uniqueItems": True},
}


def group_version_document(registry: Registry, group: str, version: str) -> Obj:
    """The OpenAPI 3 document of one group/version."""
    paths: Obj = {}
    schemas: Obj = {}
    builtin: list[str] = []
    for rt in registry.resources(group, version):
        if rt.verbs == ("create",):
            continue
        base = "/" + _gv_path(group, version)
        scope = (
            f"{base}/namespaces/{{namespace}}/{rt.plural}/{{name}}" if rt.namespaced else f"{base}/{rt.plural}/{{name}}"
        )
        gvk = {"group": rt.group, "version": rt.version, "kind": rt.kind}
        name = _schema_name(rt)
        ref = {"$ref": f"#/components/schemas/{name}"}
        types = _PATCH_TYPES
        paths[scope] = {
            "get": {
                "x-kubernetes-group-version-kind": gvk,
                "x-kubernetes-action": "get",
                "responses": {"200": {"content": {"application/json": {"schema": ref}}}},
            },
            "put": {
                "x-kubernetes-group-version-kind": gvk,
                "x-kubernetes-action": "put",
                "parameters": [_FIELD_VALIDATION],
                "requestBody": {"content": {"*/*": {"schema": ref}}},
            },
            "patch": {
                "x-kubernetes-group-version-kind": gvk,
                "x-kubernetes-action": "patch",
                "parameters": [_FIELD_VALIDATION],
                "requestBody": {"content": {t: {"schema": {"type": "object"}} for t in types}},
                "responses": {"200": {"content": {"application/json": {"schema": ref}}}},
            },
        }
        collection = scope.rsplit("/", 1)[0]
        paths[collection] = {
            "post": {
                "x-kubernetes-group-version-kind": gvk,
                "x-kubernetes-action": "post",
                "parameters": [_FIELD_VALIDATION],
                "requestBody": {"content": {"*/*": {"schema": ref}}},
            },
        }
        if rt.custom or builtin_schemas.definition_name(rt.group, rt.version, rt.kind) is None:
            schemas[name] = _object_schema(rt)
        else:
            builtin.append(name)
    schemas.update(builtin_schemas.component_schemas(builtin))
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.0"},
        "paths": paths,
        "components": {
            "schemas": schemas,
            "parameters": {
                "fieldValidation": {
                    "name": "fieldValidation",
                    "in": "query",
                    "description": FIELD_VALIDATION_TEXT,
                    "schema": {"type": "string", "uniqueItems": True},
                }
            },
        },
    }


def document_hash(document: Obj) -> str:
    return hashlib.sha512(json.dumps(document, sort_keys=True).encode()).hexdigest()[:32].upper()


class OpenAPIDocuments:
    """The served documents, built once per registry generation: built-in
    schemas make them large, and kubectl fetches them on every apply."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._generation = -1
        self._documents: dict[tuple[str, str], tuple[str, str]] = {}

    def document(self, group: str, version: str) -> tuple[str, str]:
        """``(JSON text, hash)`` of one group/version's document."""
        if self._generation != self.registry.generation:
            self._documents.clear()
            self._generation = self.registry.generation
        cached = self._documents.get((group, version))
        if cached is None:
            document = group_version_document(self.registry, group, version)
            cached = (json.dumps(document, separators=(",", ":")), document_hash(document))
            self._documents[(group, version)] = cached
        return cached

    def root(self) -> Obj:
        """``/openapi/v3``: every served group/version with a content-hashed URL."""
        paths: Obj = {}
        for group, versions in self.registry.groups():
            for version in versions:
                path = _gv_path(group, version)
                digest = self.document(group, version)[1]
                paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
        return {"paths": paths}
