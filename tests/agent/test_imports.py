"""What the agent imports: none of the libraries only the control plane and the plugin need.

pydantic (the API models) and cryptography (keys, CSRs) cost an agent about 20 MiB for its
whole life; it needs cryptography only when its certificate is due for rotation. A check of
modules, not of memory: benchmarks/README.md has the measurements.
"""

from __future__ import annotations

import sys

import pytest

from tests.programs import run

NOT_IN_THE_AGENT = ("pydantic", "cryptography", "karmada.api.binding", "karmada.api.interpreter", "kubernetes_asyncio")


@pytest.mark.parametrize("module", ["agent.runner", "agent.cli", "agent.fleet"])
def test_the_agent_loads_no_api_models_and_no_cryptography(module: str) -> None:
    probe = f"import sys, {module}\nprint(sorted(m for m in {NOT_IN_THE_AGENT!r} if m in sys.modules))\n"
    result = run([sys.executable, "-c", probe])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_the_interpreter_loads_the_models_only_for_what_returns_them() -> None:
    probe = (
        "import sys\n"
        "from karmada.interpreter.customized import CustomizedInterpreter\n"
        "i = CustomizedInterpreter()\n"
        "deploy = {'apiVersion': 'apps/v1', 'kind': 'Deployment', 'metadata': {'name': 'd', 'namespace': 'n'},\n"
        "          'spec': {'replicas': 2, 'template': {'spec': {'containers': [{'name': 'c', 'image': 'i',\n"
        "              'resources': {'requests': {'cpu': '1'}}}]}}}, 'status': {}}\n"
        "i.interpret_health(deploy); i.reflect_status(deploy); i.retain(deploy, deploy)\n"
        "before = 'pydantic' in sys.modules\n"
        "count, requirements = i.get_replicas(deploy)\n"
        "print(before, count, requirements.resource_request['cpu'], 'pydantic' in sys.modules)\n"
    )
    result = run([sys.executable, "-c", probe])
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "2", "1", "True"]
