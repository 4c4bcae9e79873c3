"""The YAML examples of the seed documents, as the repository's own copies.

``tests/api/seed_yaml/`` holds every YAML example of the seed documents (the
Chinese articles on Karmada the project started from), one file each:

- ``indented/<seed>-<line>.yaml``: a block that kept its line structure in the
  seed, byte for byte as :func:`tests.seeds.indented_blocks` finds it (named by
  the seed's number and the block's first line);
- ``flattened/<seed>-<name>.yaml``: an example the seed published flattened to
  one line, re-indented (only newlines and indentation restored).

The copies make the seed checks run in a plain clone. When the seed documents
are present too, ``tests/api/test_seed_examples.py`` checks the copies still
equal them (every indented block stored unchanged, every flattened example
covered by a reconstruction that flattens back to the seed's own text).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from karmada.api import kind_info, parse_object
from karmada.api.crdgen import crd_filename
from localkube.pruning import prune
from manifests import crds_dir

SEED_YAML = Path(__file__).resolve().parent / "seed_yaml"

# The seed writes a label selector where a list of cluster names belongs:
# Karmada's schema rejects it, and so do we, naming the field.
INVALID = {"004-cluster-affinities-label-typo": "spec.placement.clusterAffinities[0].clusterNames[0]"}


@dataclass(frozen=True)
class StoredExample:
    """One stored seed example; ``invalid`` names the field Karmada would reject."""

    path: Path
    flattened: bool

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def seed(self) -> str:
        return self.name.split("-", 1)[0]

    @property
    def text(self) -> str:
        return self.path.read_text(encoding="utf-8")

    @property
    def invalid(self) -> str:
        return INVALID.get(self.name, "")

    @property
    def id(self) -> str:
        return f"{'flattened' if self.flattened else 'indented'}/{self.name}"


def stored(kind: str) -> list[StoredExample]:
    """The stored examples of one kind (``indented`` or ``flattened``), sorted by name."""
    return [StoredExample(p, kind == "flattened") for p in sorted((SEED_YAML / kind).glob("*.yaml"))]


INDENTED = stored("indented")
FLATTENED = stored("flattened")
EXAMPLES = INDENTED + FLATTENED


def by_name(name: str) -> StoredExample:
    """The stored example called ``name`` (e.g. ``003-396``)."""
    for example in EXAMPLES:
        if example.name == name:
            return example
    raise KeyError(f"no stored seed example {name!r} in {SEED_YAML}")


def documents(text: str) -> list[dict[str, Any]]:
    """The YAML documents of a text, empty ones left out."""
    return [d for d in yaml.safe_load_all(text) if d is not None]


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
    """The checks every example must pass: our model reads it strictly (an
    unknown field is an error), serialises it back unchanged, and our CRD's
    schema prunes nothing from it."""
    obj = as_object(doc)
    if kind_info(obj["apiVersion"], obj["kind"]) is None:
        # A Kubernetes kind (Deployment, Service ...): the API server's business.
        assert obj["metadata"]["name"]
        return
    model = parse_object(obj, strict_fields=True)
    assert model.to_dict() == obj, "serialising back changed the object"
    pruned = copy.deepcopy(obj)
    dropped = prune(pruned, _crd_schema(obj["apiVersion"], obj["kind"]))
    assert dropped == [], f"the CRD schema would drop {dropped}"
    assert pruned == obj
