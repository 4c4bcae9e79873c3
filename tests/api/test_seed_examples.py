"""Every YAML example of the seed documents parses into our models, serialises
back unchanged, and survives pruning by our CRDs.

The examples are taken from the seed files themselves (see ``tests/seeds.py``).
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from karmada.api import APIValidationError, kind_info, parse_object
from karmada.api.crdgen import crd_filename
from localkube.pruning import prune
from manifests import crds_dir
from tests.api.seed_examples import EXAMPLES, FlattenedExample
from tests.seeds import flattened_runs, indented_blocks, is_flattened, normalize, seed_files

SEEDS = seed_files()
if not SEEDS and os.environ.get("CI"):
    raise RuntimeError("CI must check the seed examples: ../shared/seeds (or $KARMADA_SEEDS_DIR) is missing")
pytestmark = pytest.mark.skipif(
    not SEEDS, reason="seed documents not found: set KARMADA_SEEDS_DIR or keep ../shared/seeds"
)

# Fragments are embedded into a complete object of the kind they belong to.
_POLICY_BASE: dict[str, Any] = {
    "apiVersion": "policy.karmada.io/v1alpha1",
    "kind": "PropagationPolicy",
    "metadata": {"name": "seed-example", "namespace": "default"},
    "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "seed"}]},
}
_BINDING_BASE: dict[str, Any] = {
    "apiVersion": "work.karmada.io/v1alpha2",
    "kind": "ResourceBinding",
    "metadata": {"name": "seed-example", "namespace": "default"},
}
_SPEC_KEYS = {"placement", "resourceSelectors", "propagateDeps"}
_PLACEMENT_KEYS = {"replicaScheduling", "clusterTolerations", "clusterAffinity", "spreadConstraints"}


def as_object(doc: dict[str, Any]) -> dict[str, Any]:
    """A whole object for a document that may be only a fragment of one."""
    if "apiVersion" in doc and "kind" in doc:
        return doc
    if set(doc) == {"spec"}:
        return {**copy.deepcopy(_BINDING_BASE), "spec": doc["spec"]}
    obj = copy.deepcopy(_POLICY_BASE)
    if set(doc) <= _SPEC_KEYS:
        obj["spec"].update(doc)
    elif set(doc) <= _PLACEMENT_KEYS:
        obj["spec"]["placement"] = doc
    else:
        raise AssertionError(f"no home for a fragment with keys {sorted(doc)}")
    return obj


def _crd_schema(api_version: str, kind: str) -> dict[str, Any]:
    info = kind_info(api_version, kind)
    assert info is not None
    crd = list(yaml.safe_load_all((crds_dir() / crd_filename(info)).read_text()))[-1]
    schema: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


def check_document(doc: dict[str, Any]) -> None:
    """The checks every seed example must pass."""
    obj = as_object(doc)
    if kind_info(obj["apiVersion"], obj["kind"]) is None:
        # A Kubernetes kind (Deployment, Service ...): the API server's business.
        assert obj["metadata"]["name"]
        return
    model = parse_object(obj, strict_fields=True)
    assert model.to_dict() == obj, "serialising back changed the object"
    pruned = copy.deepcopy(obj)
    dropped = prune(pruned, _crd_schema(obj["apiVersion"], obj["kind"]))
    assert dropped == []
    assert pruned == obj


def _documents(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d is not None]


INDENTED = [block for path in SEEDS for block in indented_blocks(path)]


def test_seeds_have_examples() -> None:
    assert len(INDENTED) >= 20
    assert sum(len(flattened_runs(p)) for p in SEEDS if is_flattened(p)) >= 10


@pytest.mark.parametrize("block", INDENTED, ids=[b.id for b in INDENTED])
def test_indented_example(block: Any) -> None:
    for doc in _documents(block.text):
        check_document(doc)


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"{e.seed}:{e.name}" for e in EXAMPLES])
def test_flattened_example(example: FlattenedExample) -> None:
    seed = next(p for p in SEEDS if p.name.startswith(example.seed))
    assert normalize(example.text) in normalize(seed.read_text(encoding="utf-8")), (
        "the reconstruction must flatten to the seed's own text"
    )
    (doc,) = _documents(example.text)
    if example.invalid:
        with pytest.raises(APIValidationError) as caught:
            check_document(doc)
        assert [e.path for e in caught.value.errors] == [example.invalid]
    else:
        check_document(doc)


@pytest.mark.parametrize("path", [p for p in SEEDS if is_flattened(p)], ids=lambda p: Path(p).stem)
def test_every_flattened_example_is_reconstructed(path: Path) -> None:
    ours = [normalize(e.text) for e in EXAMPLES if path.name.startswith(e.seed)]
    for run in flattened_runs(path):
        assert any(run.startswith(text) for text in ours), f"no reconstruction for: {run[:80]}"
