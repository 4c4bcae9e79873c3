"""``/metrics``: kube-apiserver's ``apiserver_request_total``, counted per verb, resource and code."""

from __future__ import annotations

from localkube.metrics import parse_request_totals
from tests.conftest import UserFactory
from tests.servers import Kubectl


def _totals(admin: Kubectl) -> dict[tuple[str, ...], int]:
    return parse_request_totals(admin("get", "--raw", "/metrics").stdout)


def test_every_answered_request_is_counted_with_its_code(admin: Kubectl) -> None:
    before = _totals(admin)
    admin("create", "configmap", "metrics-probe", "--from-literal=a=1")
    admin("create", "configmap", "metrics-probe", "--from-literal=a=1", check=False)  # 409
    admin("patch", "configmap", "metrics-probe", "--type=merge", "-p", '{"data":{"a":"2"}}')
    manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: metrics-probe\n"
    admin("apply", "--server-side", "-f", "-", stdin=manifest)
    after = _totals(admin)

    def grew(verb: str, code: str) -> int:
        key = (verb, "", "configmaps", "", code)
        return after.get(key, 0) - before.get(key, 0)

    assert grew("POST", "201") == 1
    assert grew("POST", "409") == 1
    assert grew("PATCH", "200") == 1
    assert grew("APPLY", "200") == 1


def test_metrics_need_the_non_resource_permission(as_user: UserFactory) -> None:
    result = as_user("nobody")("get", "--raw", "/metrics", check=False)
    assert result.returncode != 0 and "forbidden" in result.stderr.lower()
