"""The README's two opening commands stay true, and CI runs the second one."""

from __future__ import annotations

import re

from tests.seeds import REPO_ROOT


def _commands() -> list[str]:
    text = (REPO_ROOT / "README.md").read_text()
    return re.findall(r"```sh\n(.+?)\n```", text)


def test_readme_opens_with_install_and_test_commands() -> None:
    install, tests = _commands()[:2]
    assert "pip install ." in install and "kubectl karmada" in install
    assert "pip install '.[test]'" in tests and "pytest" in tests


def test_ci_runs_the_readme_test_command() -> None:
    lines = (REPO_ROOT / ".ci" / "run").read_text().splitlines()
    marker = next(i for i, line in enumerate(lines) if "README-TEST-COMMAND" in line)
    assert lines[marker + 1] == _commands()[1]
