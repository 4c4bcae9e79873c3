"""The examples' sandboxes: one ``kubectl karmada local up`` per test module,
in a home directory of the module's own (so ``~/.karmada-local`` in a README
is the test's sandbox, and a user's real one is never touched). The module's
``MODE`` says how its members join: all in pull mode (an agent each), all in
push mode (``--push-members 3``: the control plane works them, no agent), or
mixed (member1 joined in push mode beside two pull members). The same
scenarios run in each mode (``scenarios.py``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.examples.sandbox import DEFAULT_DIR, LocalSandbox, sandbox_at

MODES = {"pull": (), "push": ("--push-members", "3"), "mixed": ("--push-members", "1")}


@pytest.fixture(scope="module")
def sandbox(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSandbox]:
    """The default sandbox of the README: members member1..member3, in the mode of the module's ``MODE``."""
    yield from sandbox_at(tmp_path_factory.mktemp("home"), DEFAULT_DIR, *MODES[request.module.MODE])
