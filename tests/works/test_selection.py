"""Which templates an override policy change re-renders."""

from __future__ import annotations

from typing import Any

import pytest

from karmada.works import policy_selectors, policy_selects

Obj = dict[str, Any]

NGINX: Obj = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "nginx", "namespace": "default", "labels": {"app": "web"}},
}


def policy(*selectors: Obj) -> Obj:
    return {"kind": "OverridePolicy", "spec": {"resourceSelectors": list(selectors)} if selectors else {}}


DEPLOYMENTS = {"apiVersion": "apps/v1", "kind": "Deployment"}


@pytest.mark.parametrize(
    ("selectors", "template", "expected"),
    [
        ((), NGINX, True),  # selector-less: everything in scope
        (({**DEPLOYMENTS, "name": "nginx"},), NGINX, True),
        (({**DEPLOYMENTS, "name": "other"},), NGINX, False),
        (({**DEPLOYMENTS},), NGINX, True),
        (({**DEPLOYMENTS, "namespace": "prod"},), NGINX, False),
        (({**DEPLOYMENTS, "labelSelector": {"matchLabels": {"app": "web"}}},), NGINX, True),
        (({**DEPLOYMENTS, "labelSelector": {"matchLabels": {"app": "db"}}},), NGINX, False),
        (({"apiVersion": "v1", "kind": "ConfigMap"},), NGINX, False),
        (({"apiVersion": "v1", "kind": "ConfigMap"}, {**DEPLOYMENTS, "name": "nginx"}), NGINX, True),
        (({**DEPLOYMENTS, "name": "other"},), None, True),  # not cached yet: render it anyway
        (({"kind": "Deployment"},), NGINX, False),  # invalid selector (no apiVersion) picks nothing
    ],
)
def test_policy_selects(selectors: tuple[Obj, ...], template: Obj | None, expected: bool) -> None:
    assert policy_selects(policy_selectors(policy(*selectors)), template) is expected
