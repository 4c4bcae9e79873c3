"""An agent may change on its Cluster only what it reports itself."""

from __future__ import annotations

from typing import Any

import pytest

from karmada.registration.identity import AGENTS_GROUP
from karmada.validation import Request, review
from karmada.validation.agent_cluster import AGENTS_GROUP as RULE_GROUP
from karmada.validation.agent_cluster import agent_cluster_errors

STORED: dict[str, Any] = {
    "metadata": {"name": "member1", "labels": {"team": "a"}, "annotations": {"note": "x"}},
    "spec": {"syncMode": "Pull", "id": "uid-1", "apiEndpoint": "https://127.0.0.1:6443", "region": "eu"},
}
NEW_BORN: dict[str, Any] = {"metadata": {"name": "member1"}, "spec": {"syncMode": "Pull"}}


def _with(base: dict[str, Any], part: str, key: str, value: Any) -> dict[str, Any]:
    changed = {"metadata": dict(base["metadata"]), "spec": dict(base["spec"])}
    if value is None:
        changed[part].pop(key, None)
    else:
        changed[part][key] = value
    return changed


SECRET = {"namespace": "karmada-cluster", "name": "member2"}
CASES = [
    # (what, old, new, denied field paths)
    ("no change", STORED, STORED, []),
    ("syncMode to Push", STORED, _with(STORED, "spec", "syncMode", "Push"), ["spec.syncMode"]),
    ("apiEndpoint moved", STORED, _with(STORED, "spec", "apiEndpoint", "https://127.0.0.9"), ["spec.apiEndpoint"]),
    ("apiEndpoint removed", STORED, _with(STORED, "spec", "apiEndpoint", None), ["spec.apiEndpoint"]),
    ("secretRef set", STORED, _with(STORED, "spec", "secretRef", SECRET), ["spec.secretRef"]),
    ("impersonator", STORED, _with(STORED, "spec", "impersonatorSecretRef", SECRET), ["spec.impersonatorSecretRef"]),
    (
        "skip TLS",
        STORED,
        _with(STORED, "spec", "insecureSkipTLSVerification", True),
        ["spec.insecureSkipTLSVerification"],
    ),
    ("proxyURL added later", STORED, _with(STORED, "spec", "proxyURL", "http://127.0.0.1:1"), ["spec.proxyURL"]),
    ("zones added later", STORED, _with(STORED, "spec", "zones", ["z"]), ["spec.zones"]),
    ("proxyHeader", STORED, _with(STORED, "spec", "proxyHeader", {"a": "b"}), ["spec.proxyHeader"]),
    ("taint added", STORED, _with(STORED, "spec", "taints", [{"key": "k", "effect": "NoSchedule"}]), ["spec.taints"]),
    (
        "untaint",
        _with(STORED, "spec", "taints", [{"key": "k", "effect": "NoSchedule"}]),
        STORED,
        ["spec.taints"],
    ),
    ("region changed", STORED, _with(STORED, "spec", "region", "us"), ["spec.region"]),
    ("id changed", STORED, _with(STORED, "spec", "id", "uid-2"), ["spec.id"]),
    (
        "first report",
        NEW_BORN,
        {
            "metadata": {"name": "member1"},
            "spec": {"syncMode": "Pull", "id": "u", "apiEndpoint": "https://h", "provider": "p", "zones": ["z"]},
        },
        [],
    ),
    ("label added", STORED, _with(STORED, "metadata", "labels", {"team": "a", "gpu": "yes"}), ["metadata.labels[gpu]"]),
    ("label removed", STORED, _with(STORED, "metadata", "labels", None), ["metadata.labels[team]"]),
    ("annotation", STORED, _with(STORED, "metadata", "annotations", {"note": "y"}), ["metadata.annotations[note]"]),
    ("create Pull", None, NEW_BORN, []),
    ("create Push", None, _with(NEW_BORN, "spec", "syncMode", "Push"), ["spec.syncMode"]),
    ("create labelled", None, _with(NEW_BORN, "metadata", "labels", {"a": "b"}), ["metadata.labels[a]"]),
]


@pytest.mark.parametrize(("what", "old", "new", "denied"), CASES, ids=[case[0] for case in CASES])
def test_agent_cluster_errors(what: str, old: Any, new: Any, denied: list[str]) -> None:
    assert [error.field for error in agent_cluster_errors(new, old)] == denied


def test_the_rule_applies_to_the_agents_group_only() -> None:
    assert RULE_GROUP == AGENTS_GROUP
    pushed = _with(STORED, "spec", "syncMode", "Push")
    as_agent = Request("Cluster", "UPDATE", pushed, STORED, groups=("system:authenticated", AGENTS_GROUP))
    message = review(as_agent)
    assert message is not None
    assert message.startswith("spec.syncMode: Forbidden: may not be changed by a cluster agent")
    assert review(Request("Cluster", "UPDATE", pushed, STORED, groups=("system:masters",))) is None
