"""``kubectl karmada promote``: an object created directly in a member becomes a Karmada
template with a policy to that member (conflict resolution Overwrite), as karmadactl's."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import yaml

from tests.examples.sandbox import LocalSandbox, sandbox_at
from tests.kubectl_karmada.inspection_helpers import members, ok, plugin, table

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSandbox]:
    yield from sandbox_at(
        tmp_path_factory.mktemp("home"), ".karmada-local", "--members", "2", "--nodes-per-member", "1"
    )


def test_promote_adopts_the_member_object(sandbox: LocalSandbox) -> None:
    members(sandbox, "member2", "create", "deployment", "web", "--image=nginx:1.25", "--replicas=2")
    assert table(ok(sandbox, "get", "deploy", "web", "-C", "member2"))[1][-1] == "N"
    dry = list(
        yaml.safe_load_all(ok(sandbox, "promote", "deploy", "web", "-n", "default", "-C", "member2", "--dry-run"))
    )
    template, policy = dry[0]["items"]
    assert template["metadata"]["annotations"]["work.karmada.io/conflict-resolution"] == "overwrite"
    assert "status" not in template and "resourceVersion" not in template["metadata"]
    assert policy["kind"] == "PropagationPolicy" and policy["metadata"]["name"] == "web-6d7f8d5f5b"
    assert policy["spec"] == {
        "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
        "placement": {"clusterAffinity": {"clusterNames": ["member2"]}},
        "conflictResolution": "Overwrite",
        "preserveResourcesOnDeletion": True,
    }
    assert sandbox.get(None, "deployment", "web") is None, "--dry-run changes nothing"
    out = ok(sandbox, "promote", "deploy", "web", "-C", "member2", "--wait", "--timeout", "60s")
    assert out.splitlines() == [
        "ResourceTemplate (default/web) is created successfully",
        "PropagationPolicy (default/web-6d7f8d5f5b) is created successfully",
        'Resource "deployments.apps"(default/web) is promoted successfully',
    ]
    # --wait returned once the Work was applied: the member's object is Karmada's now
    assert table(ok(sandbox, "get", "deploy", "web", "-C", "member2"))[1][-1] == "Y"
    adopted = json.loads(members(sandbox, "member2", "get", "deploy", "web", "-o", "json"))
    assert adopted["metadata"]["labels"]["karmada.io/managed"] == "true"
    assert sandbox.get("member1", "deployment", "web") is None
    again = plugin(sandbox, "promote", "deploy", "web", "-C", "member2")
    assert (
        again.returncode == 1
        and "error: Deployment web in cluster(member2) is already managed by Karmada" in again.stderr
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("promote", "deploy", "ghost", "-C", "member1"),
            "error: deployments.apps default/ghost doesn't exist in cluster(member1)",
        ),
        (("promote", "deploy", "web", "-C", "nope"), "error: clusters don't exist: nope"),
        (("promote", "deploy", "-C", "member1"), "error: you must specify the name of the object to promote"),
    ],
)
def test_errors_exit_1(sandbox: LocalSandbox, args: tuple[str, ...], message: str) -> None:
    result = plugin(sandbox, *args)
    assert result.returncode == 1 and message in result.stderr, result.stderr
