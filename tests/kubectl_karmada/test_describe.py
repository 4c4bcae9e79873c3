"""``kubectl karmada describe`` against a sandbox: policy, binding, placement, per-cluster
Works and the events of all three on one page; errors exit 1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.examples.sandbox import LocalSandbox, sandbox_at, wait_until
from tests.kubectl_karmada.inspection_helpers import ok, plugin
from tests.seeds import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSandbox]:
    for running in sandbox_at(tmp_path_factory.mktemp("home")):
        running.karmada("apply", "-f", str(REPO_ROOT / "examples" / "static-weight"))
        yield running


def test_one_page_about_a_template(sandbox: LocalSandbox) -> None:
    def page() -> str:
        return ok(sandbox, "describe", "deploy", "nginx")

    wait_until(lambda: "AggregateStatusSucceed" in page() and "ready 4/4" in page(), "nginx fully propagated", 60, page)
    text = page()
    assert "Name:          nginx\nNamespace:     default\nAPI Version:   apps/v1\nKind:          Deployment\n" in text
    assert "Policy:        PropagationPolicy default/nginx-propagation" in text
    assert "Binding:       ResourceBinding default/nginx-deployment" in text
    assert "  Scheduled:  True" in text and "  FullyApplied:  True" in text
    assert "  Replica Scheduling:  Divided, Weighted (static weights member1=1 member2=2)" in text
    clusters = text.split("Clusters:\n", 1)[1].split("Events:", 1)[0].splitlines()
    assert clusters[0].split() == ["CLUSTER", "REPLICAS", "WORK", "APPLIED", "HEALTH", "STATUS"]
    assert clusters[1].split() == [
        "member1",
        "2",
        "karmada-es-member1/nginx-687f7fb96f",
        "True",
        "Healthy",
        "ready",
        "2/2",
    ]
    assert clusters[2].split() == [
        "member2",
        "4",
        "karmada-es-member2/nginx-687f7fb96f",
        "True",
        "Healthy",
        "ready",
        "4/4",
    ]
    events = text.split("Events:\n", 1)[1]
    for reason, involved in (
        ("ApplyPolicySucceed", "deployment/nginx"),
        ("ScheduleBindingSucceed", "resourcebinding/nginx-deployment"),
        ("SyncSucceed", "work/karmada-es-member1/nginx-687f7fb96f"),
        ("SyncSucceed", "work/karmada-es-member2/nginx-687f7fb96f"),
    ):
        assert any(reason in line and involved in line for line in events.splitlines()), (reason, involved, events)
    # TYPE/NAME spelling is the same page
    assert ok(sandbox, "describe", "deployment/nginx").split("Events:")[0] == text.split("Events:")[0]


def test_a_template_no_policy_claims(sandbox: LocalSandbox) -> None:
    sandbox.karmada("create", "configmap", "lonely", "--from-literal=a=b")
    text = ok(sandbox, "describe", "cm", "lonely")
    assert "Policy:        <none>" in text and "Binding:       <none>" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("describe", "deploy", "missing"), 'error: deployments.apps "missing" not found'),
        (("describe", "nothing", "x"), 'error: the server doesn\'t have a resource type "nothing"'),
        (("describe", "deploy"), "error: you must specify the name of the resource to describe"),
    ],
)
def test_errors_exit_1(sandbox: LocalSandbox, args: tuple[str, ...], message: str) -> None:
    result = plugin(sandbox, *args)
    assert result.returncode == 1 and message in result.stderr, result.stderr
