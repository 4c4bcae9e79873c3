"""JSON patch ``replace`` as kube-apiserver applies it.

k8s.io/apiserver pkg/endpoints/handlers/patch.go ``applyJSPatch`` decodes the patch with
gopkg.in/evanphx/json-patch.v4 (v4.13.0 in go.mod) and calls ``Patch.Apply`` with the package
defaults (negative indices on). In v4's patch.go, ``Patch.replace`` fails when ``findObject``
finds no parent ("doc is missing path") or when ``container.get`` fails ("doc is missing key");
``partialDoc.get`` never fails, so a missing object key is set as ``add`` would set it, while
``partialArray.get`` fails for an index that is out of range or not a number.
"""

from __future__ import annotations

from typing import Any

import pytest

from localkube.patch import PatchFailed, json_patch

DOC: dict[str, Any] = {"spec": {"replicas": 1, "ports": [80, 443], "gone": None}, "name": "x"}


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        # a missing object key acts as add (partialDoc.get returns nil, nil)
        ("/spec/propagateDeps", True, {**DOC, "spec": {**DOC["spec"], "propagateDeps": True}}),
        ("/status", {"a": 1}, {**DOC, "status": {"a": 1}}),
        # an existing key is replaced
        ("/spec/replicas", 3, {**DOC, "spec": {**DOC["spec"], "replicas": 3}}),
        # array indices, negative ones from the end (SupportNegativeIndices defaults to true)
        ("/spec/ports/1", 8443, {**DOC, "spec": {**DOC["spec"], "ports": [80, 8443]}}),
        ("/spec/ports/-2", 8080, {**DOC, "spec": {**DOC["spec"], "ports": [8080, 443]}}),
        ("/spec/ports/+0", 8080, {**DOC, "spec": {**DOC["spec"], "ports": [8080, 443]}}),
    ],
)
def test_replace_applies(path: str, value: Any, expected: Any) -> None:
    assert json_patch(DOC, [{"op": "replace", "path": path, "value": value}]) == expected


@pytest.mark.parametrize(
    ("path", "message"),
    [
        # findObject finds no parent: a missing, null or scalar step on the way
        ("/spec/missing/field", "doc is missing path: /spec/missing/field: missing value"),
        ("/spec/gone/field", "doc is missing path: /spec/gone/field: missing value"),
        ("/name/field", "doc is missing path: /name/field: missing value"),
        ("/spec/ports/5/field", "doc is missing path: /spec/ports/5/field: missing value"),
        # partialArray.get fails: out of range, the end marker, or not a number (strconv.Atoi)
        ("/spec/ports/2", "doc is missing key: /spec/ports/2: missing value"),
        ("/spec/ports/-3", "doc is missing key: /spec/ports/-3: missing value"),
        ("/spec/ports/-", "doc is missing key: /spec/ports/-: missing value"),
        ("/spec/ports/ 1", "doc is missing key: /spec/ports/ 1: missing value"),
        ("/spec/ports/1_0", "doc is missing key: /spec/ports/1_0: missing value"),
    ],
)
def test_replace_fails(path: str, message: str) -> None:
    with pytest.raises(PatchFailed) as failed:
        json_patch(DOC, [{"op": "replace", "path": path, "value": 1}])
    assert str(failed.value) == f"replace operation does not apply: {message}"
