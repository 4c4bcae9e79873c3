"""The examples' scenarios, shared by the three test modules that run them
(``test_examples.py`` pull, ``test_examples_push.py``, ``test_examples_mixed.py``;
one file per member mode so that the modes' sandboxes run on separate workers):
every example of ``examples/`` run as its README says, against one sandbox
(``kubectl karmada local up``, members member1..member3), with the outcome
checked in the members through the real kubectl.

Each test runs the README's Setup and Run blocks, waits for the state the
README promises (replicas per member, images, args; ``None`` = the object is
absent from that member), runs Scale where there is one, and always its Clean
up block, then waits until the example's objects are gone everywhere, so the
next example starts from an empty sandbox.

The expected numbers follow the seeds and Karmada's rules (reference sections
5.5, 5.6): static weights divide by Webster's method (6 over 1:2 -> 2/4, 3 ->
1/2); no ``replicaScheduling`` means Duplicated; spread constraints are not
consulted for static weights.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.examples.sandbox import LocalSandbox, readme_blocks, wait_for_state, wait_until

MEMBERS = ("member1", "member2", "member3")
PROPAGATION_TIMEOUT = 45
# what any example may leave in a member: checked gone before the next one starts
LEFTOVERS = (("deployment", "nginx"), ("deployment", "myapp"), ("service", "nginx"), ("configmap", "my-config"))


def _replicas(sandbox: LocalSandbox, name: str = "nginx", members: tuple[str, ...] = MEMBERS) -> dict[str, Any]:
    def one(cluster: str) -> int | None:
        found = sandbox.get(cluster, "deployment", name)
        return None if found is None else int(found["spec"].get("replicas", 1))

    return {cluster: one(cluster) for cluster in members}


def _container(sandbox: LocalSandbox, cluster: str, field: str, name: str = "nginx") -> Any:
    found = sandbox.get(cluster, "deployment", name)
    return None if found is None else found["spec"]["template"]["spec"]["containers"][0].get(field)


def _await_replicas(sandbox: LocalSandbox, expected: dict[str, int | None], name: str = "nginx") -> None:
    wait_for_state(
        lambda: _replicas(sandbox, name, tuple(expected)),
        expected,
        f"Deployment {name}'s replicas per member (None = absent)",
        PROPAGATION_TIMEOUT,
    )


def _clean(sandbox: LocalSandbox, folder: str, members: tuple[str, ...] = MEMBERS) -> None:
    # every line, even after one fails (a taint a failed Setup never set), so the next example starts clean
    failed: list[str] = []
    for line in readme_blocks(folder)["Clean up"]:
        try:
            sandbox.sh(line)
        except AssertionError as exc:
            failed.append(str(exc))

    def leftovers() -> list[str]:
        refs = [f"{kind}/{name}" for kind, name in LEFTOVERS]
        found = [f"{ref} in {c}" for c in members for ref in sandbox.present(c, refs)]
        bindings = sandbox.karmada("get", "resourcebindings", "-n", "default", "-o", "name").split()
        return found + [f"{b} on the control plane" for b in bindings]

    wait_until(
        lambda: not leftovers(),
        f"examples/{folder}'s objects to be deleted from the members",
        PROPAGATION_TIMEOUT,
        leftovers,
    )
    assert not failed, f"examples/{folder}'s Clean up: " + "\n".join(failed)


@pytest.fixture
def example(sandbox: LocalSandbox) -> Iterator[Callable[[str], LocalSandbox]]:
    """Set up and run an example (``example("static-weight")``); clean it up after the test, pass or fail."""
    started: list[str] = []

    def start(folder: str) -> LocalSandbox:
        started.append(folder)
        sandbox.run_block(folder, "Setup")
        sandbox.run_block(folder, "Run")
        return sandbox

    yield start
    for folder in started:
        _clean(sandbox, folder)


def test_static_weight(example: Callable[[str], LocalSandbox]) -> None:
    sandbox = example("static-weight")
    # seed 003: 6 replicas, weights 1:2 -> "member1 about 2, member2 about 4"
    _await_replicas(sandbox, {"member1": 2, "member2": 4, "member3": None})
    wait_until(
        lambda: all(
            (sandbox.get(c, "deployment", "nginx") or {}).get("status", {}).get("readyReplicas") == n
            for c, n in (("member1", 2), ("member2", 4))
        ),
        "the members' nginx Deployments to be ready (2/2 and 4/4)",
        PROPAGATION_TIMEOUT,
    )
    assert sandbox.get("member1", "service", "nginx") is None, "the policy's Service selector matches nothing"
    sandbox.run_block("static-weight", "Scale")
    _await_replicas(sandbox, {"member1": 1, "member2": 2, "member3": None})


def test_duplicated(example: Callable[[str], LocalSandbox]) -> None:
    _await_replicas(example("duplicated"), {"member1": 6, "member2": 6, "member3": None})


def test_aggregated(example: Callable[[str], LocalSandbox]) -> None:
    sandbox = example("aggregated")

    def placed() -> Any:
        seen = _replicas(sandbox)
        return seen if sorted(seen.values(), key=str) == [6, None, None] and seen["member3"] is None else None

    wait_until(placed, "all 6 replicas on one of member1/member2", PROPAGATION_TIMEOUT, lambda: _replicas(sandbox))


def test_cluster_affinity_labels(example: Callable[[str], LocalSandbox]) -> None:
    _await_replicas(example("cluster-affinity-labels"), {"member1": 6, "member2": 6, "member3": None})


def test_cluster_affinity_fields(example: Callable[[str], LocalSandbox]) -> None:
    _await_replicas(example("cluster-affinity-fields"), {"member1": 6, "member2": None, "member3": None})


def test_spread_constraints(example: Callable[[str], LocalSandbox]) -> None:
    sandbox = example("spread-constraints")

    def placed() -> Any:
        seen = _replicas(sandbox)
        # member1 is alone in cn-east-1; exactly one of the two cn-north-1 clusters is chosen
        return (
            seen if seen["member1"] == 6 and sorted([seen["member2"], seen["member3"]], key=str) == [6, None] else None
        )

    wait_until(
        placed,
        "nginx: 6 in member1 and 6 in exactly one of member2/member3",
        PROPAGATION_TIMEOUT,
        lambda: _replicas(sandbox),
    )


def test_cluster_tolerations(example: Callable[[str], LocalSandbox]) -> None:
    _await_replicas(example("cluster-tolerations"), {"member1": 6, "member2": None, "member3": 6})


def test_complete_example(example: Callable[[str], LocalSandbox]) -> None:
    sandbox = example("complete-example")

    def placed() -> Any:
        seen = _replicas(sandbox)
        # dynamic weights over two clusters of equal room; minGroups 2: both get some
        two = seen["member1"] and seen["member2"] and seen["member1"] + seen["member2"] == 6
        return seen if two and seen["member3"] is None else None

    wait_until(
        placed, "nginx's 6 replicas divided over member1 and member2", PROPAGATION_TIMEOUT, lambda: _replicas(sandbox)
    )
    wait_for_state(
        lambda: {c: sandbox.get(c, "service", "nginx") is not None for c in MEMBERS},
        {"member1": True, "member2": True, "member3": False},
        "Service nginx in member1 and member2 only",
        PROPAGATION_TIMEOUT,
    )


def test_override_per_region(example: Callable[[str], LocalSandbox]) -> None:
    sandbox = example("override-per-region")
    _await_replicas(sandbox, {"member1": 6, "member2": 6, "member3": None})
    wait_for_state(
        lambda: {c: _container(sandbox, c, "image") for c in ("member1", "member2")},
        {"member1": "registry.cn-east-1.example.com/nginx:1.25", "member2": "nginx:1.25"},
        "nginx's image overridden in region cn-east-1 only",
        PROPAGATION_TIMEOUT,
    )
    # the edge-member1 rule matches no cluster of the sandbox: the template's limit stays
    assert _container(sandbox, "member1", "resources")["limits"]["cpu"] == "500m"
    assert sandbox.get("member1", "service", "nginx") is None, "the policy selects the Deployment only"
    template = sandbox.get(None, "deployment", "nginx")
    assert template is not None and template["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.25"


def test_override_policy(example: Callable[[str], LocalSandbox]) -> None:
    sandbox = example("override-policy")
    _await_replicas(sandbox, {"member1": 6, "member2": 6, "member3": None})
    wait_for_state(
        lambda: {c: {f: _container(sandbox, c, f) for f in ("image", "args", "env")} for c in ("member1", "member2")},
        {
            "member1": {"image": "registry.cn.example.com/nginx:1.26", "args": None, "env": None},
            "member2": {
                "image": "nginx:1.25",
                "args": ["-g", "daemon off;"],
                "env": [{"name": "LOCATION", "value": "sg"}],
            },
        },
        "nginx overridden per cluster label: image in location=cn, args and env in location=sg",
        PROPAGATION_TIMEOUT,
    )


def test_propagate_deps_deployment(example: Callable[[str], LocalSandbox]) -> None:
    _await_replicas(example("propagate-deps"), {"member1": 1, "member2": 1, "member3": None}, name="myapp")


def _configmaps(sandbox: LocalSandbox) -> dict[str, bool]:
    return {c: sandbox.get(c, "configmap", "my-config") is not None for c in MEMBERS}


def test_propagate_deps_configmap_follows(example: Callable[[str], LocalSandbox]) -> None:
    sandbox = example("propagate-deps")
    _await_replicas(sandbox, {"member1": 1, "member2": 1, "member3": None}, name="myapp")
    wait_for_state(
        lambda: _configmaps(sandbox),
        {"member1": True, "member2": True, "member3": False},
        "ConfigMap my-config to follow myapp to member1 and member2",
        PROPAGATION_TIMEOUT,
    )
    binding = sandbox.get(None, "resourcebinding", "my-config-configmap")
    assert binding is not None, "the attached binding of my-config"
    (required,) = binding["spec"]["requiredBy"]
    assert (required["namespace"], required["name"]) == ("default", "myapp-deployment")
    # in the referrer's order, which follows the order the clusters joined in (not meaningful)
    clusters = sorted(required["clusters"], key=lambda c: str(c["name"]))
    assert clusters == [{"name": "member1", "replicas": 1}, {"name": "member2", "replicas": 1}]
    assert binding["metadata"]["ownerReferences"][0]["kind"] == "ConfigMap"
    assert "placement" not in binding["spec"] and "clusters" not in binding["spec"]

    sandbox.run_block("propagate-deps", "Move")
    _await_replicas(sandbox, {"member1": None, "member2": None, "member3": 1}, name="myapp")
    wait_for_state(
        lambda: _configmaps(sandbox),
        {"member1": False, "member2": False, "member3": True},
        "ConfigMap my-config to move with myapp to member3",
        PROPAGATION_TIMEOUT,
    )

    sandbox.run_block("propagate-deps", "Delete the workload")
    wait_for_state(
        lambda: _configmaps(sandbox),
        {"member1": False, "member2": False, "member3": False},
        "ConfigMap my-config to leave the members with its Deployment",
        PROPAGATION_TIMEOUT,
    )
    released = sandbox.get(None, "resourcebinding", "my-config-configmap")
    assert released is None or not released["spec"].get("requiredBy"), released
