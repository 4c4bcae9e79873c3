"""The example YAML is the seeds' YAML: every document of every file in
``examples/`` validates with our models, and equals the stored seed example
its first-line comment names (``# seed 003-339``; ``# seed 003-376, placement
from seed 003-581`` for a seed fragment put into the seed's minimal policy;
``# ours: ...`` for YAML no seed has). No server needed."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest

from tests.api.seed_examples import by_name, check_document, documents
from tests.examples.sandbox import EXAMPLES_DIR

FILES = sorted(EXAMPLES_DIR.glob("*/*.yaml"))
_SOURCE = re.compile(r"^# seed (?P<base>\d{3}-[\w-]+)(, placement from seed (?P<placement>\d{3}-[\w-]+))?$")


def expected_documents(header: str) -> list[dict[str, Any]] | None:
    """What a file with this first line must hold; None for our own YAML."""
    if header.startswith("# ours:"):
        return None
    match = _SOURCE.match(header)
    assert match, f"first line must name the file's source (# seed NNN-..., or # ours: why): {header!r}"
    docs = documents(by_name(match["base"]).text)
    if match["placement"]:
        (policy,) = copy.deepcopy(docs)
        (fragment,) = documents(by_name(match["placement"]).text)
        policy["spec"]["placement"] = fragment["placement"]
        return [policy]
    return docs


def test_there_are_examples() -> None:
    assert len(FILES) >= 20


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{Path(p).parent.name}/{Path(p).name}")
def test_example_file(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    docs = documents(text)
    for doc in docs:
        check_document(doc)
    expected = expected_documents(text.splitlines()[0])
    if expected is not None:
        assert docs == expected, f"{path} is not its seed's YAML"
    match = _SOURCE.match(text.splitlines()[0])
    if match and not match["placement"]:
        # a whole seed example: byte for byte, not only the same objects
        assert text.split("\n", 1)[1] == by_name(match["base"]).text


def test_a_changed_example_is_caught() -> None:
    expected = expected_documents("# seed 003-376, placement from seed 003-581")
    assert expected is not None
    assert expected[0]["spec"]["placement"]["replicaScheduling"] == {"replicaSchedulingType": "Duplicated"}
    assert expected != expected_documents("# seed 003-376")
    with pytest.raises(AssertionError, match="must name the file's source"):
        expected_documents("# from somewhere")
