"""``kubectl karmada completion bash|zsh``: scripts the shells accept, naming the plugin's commands."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.servers import Plugin


def test_bash_script_parses_and_completes_commands() -> None:
    script = Plugin(None)("completion", "bash").stdout
    assert "complete" in script and "kubectl-karmada" in script
    for command in ("get", "describe", "promote", "top", "register", "local"):
        assert command in script
    checked = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr
    # the function bash calls for kubectl-karmada offers the subcommands after the program name
    probe = (
        script
        + '\nCOMP_WORDS=(kubectl-karmada ge); COMP_CWORD=1; COMP_LINE="kubectl-karmada ge"; COMP_POINT=${#COMP_LINE}\n'
    )
    probe += "_shtab_kubectl_karmada kubectl-karmada ge kubectl-karmada; printf '%s\\n' \"${COMPREPLY[@]}\"\n"
    offered = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, check=False)
    assert "get" in offered.stdout.split(), offered.stdout + offered.stderr


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_script_parses() -> None:
    script = Plugin(None)("completion", "zsh").stdout
    checked = subprocess.run(["zsh", "-n"], input=script, capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr


def test_zsh_script_names_the_program() -> None:
    assert Plugin(None)("completion", "zsh").stdout.startswith("#compdef kubectl-karmada")


def test_unknown_shell_is_refused() -> None:
    result = Plugin(None)("completion", "fish", check=False)
    assert result.returncode != 0 and "invalid choice: 'fish'" in result.stderr
