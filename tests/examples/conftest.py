"""The examples' sandboxes: one ``kubectl karmada local up`` per test module,
in a home directory of the module's own (so ``~/.karmada-local`` in a README
is the test's sandbox, and a user's real one is never touched)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.examples.sandbox import LocalSandbox, sandbox_at


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSandbox]:
    """The default sandbox of the README: members member1..member3."""
    yield from sandbox_at(tmp_path_factory.mktemp("home"))
