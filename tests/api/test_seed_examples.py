"""Every YAML example of the seed documents parses into our models, serialises
back unchanged, and survives pruning by our CRDs.

The examples are the repository's own copies (``tests/api/seed_yaml``, see
``tests/api/seed_examples.py``), so this runs in a plain clone. Where the seed
documents themselves are at hand (``../shared/seeds`` or ``$KARMADA_SEEDS_DIR``),
further tests check the copies still equal them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from karmada.api import APIValidationError
from tests.api.seed_examples import EXAMPLES, FLATTENED, INDENTED, StoredExample, check_document, documents
from tests.seeds import flattened_runs, indented_blocks, is_flattened, normalize, seed_files

SEEDS = seed_files()
needs_seeds = pytest.mark.skipif(
    not SEEDS, reason="seed documents not found (set KARMADA_SEEDS_DIR or keep ../shared/seeds): copies checked alone"
)


def test_copies_are_stored() -> None:
    # the three seed documents hold 23 indented and 10 flattened examples
    assert len(INDENTED) >= 20
    assert len(FLATTENED) >= 10
    assert {e.seed for e in EXAMPLES} == {"000", "003", "004"}


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.id for e in EXAMPLES])
def test_example(example: StoredExample) -> None:
    docs = documents(example.text)
    assert docs, "an empty example"
    if example.invalid:
        (doc,) = docs
        with pytest.raises(APIValidationError) as caught:
            check_document(doc)
        assert [e.path for e in caught.value.errors] == [example.invalid]
        return
    for doc in docs:
        check_document(doc)


def test_invalid_example_is_refused_for_its_field() -> None:
    # the failure path of check_document: a field the schema does not know is an error, not a silent drop
    with pytest.raises(APIValidationError) as caught:
        check_document({"placement": {"clusterAffinity": {"clusterName": ["member1"]}}})
    assert "spec.placement.clusterAffinity.clusterName" in str(caught.value)


@needs_seeds
def test_indented_copies_equal_the_seeds() -> None:
    found = {f"{b.seed}-{b.line}": b.text for path in SEEDS for b in indented_blocks(path)}
    ours = {e.name: e.text for e in INDENTED}
    assert sorted(ours) == sorted(found), "stored copies and seed blocks differ in number or place"
    changed = [name for name, text in found.items() if ours[name] != text]
    assert changed == [], f"stored copies differ from their seed: {changed}"


@needs_seeds
@pytest.mark.parametrize("example", FLATTENED, ids=[e.id for e in FLATTENED])
def test_flattened_copy_is_the_seeds_text(example: StoredExample) -> None:
    seed = next(p for p in SEEDS if p.name.startswith(example.seed))
    assert normalize(example.text) in normalize(seed.read_text(encoding="utf-8")), (
        "the reconstruction must flatten to the seed's own text"
    )


@needs_seeds
@pytest.mark.parametrize("path", [p for p in SEEDS if is_flattened(p)], ids=lambda p: Path(p).stem)
def test_every_flattened_example_is_reconstructed(path: Path) -> None:
    ours = [normalize(e.text) for e in FLATTENED if path.name.startswith(e.seed)]
    for run in flattened_runs(path):
        assert any(run.startswith(text) for text in ours), f"no reconstruction for: {run[:80]}"
