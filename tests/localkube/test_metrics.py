"""``/metrics``: kube-apiserver's ``apiserver_request_total``, counted per verb, resource and code, and
``apiserver_request_duration_seconds``."""

from __future__ import annotations

import math

import pytest
from multidict import MultiDict

from localkube.metrics import (
    DURATION_BUCKETS,
    RequestMetrics,
    WebhookMetrics,
    minus,
    parse_request_durations,
    parse_request_totals,
    parse_user_writes,
    parse_webhook_durations,
    quantile,
)
from localkube.requestinfo import parse_request
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


def test_accepted_writes_are_counted_per_user(admin: Kubectl, as_user: UserFactory) -> None:
    writer = as_user("metrics-writer", ["system:masters"])
    before = parse_user_writes(admin("get", "--raw", "/metrics").stdout)
    writer("create", "configmap", "per-user-probe", "--from-literal=a=1")
    writer("create", "configmap", "per-user-probe", "--from-literal=a=1", check=False)  # 409: nothing written
    writer("get", "configmap", "per-user-probe")  # a read
    writer("delete", "configmap", "per-user-probe")
    after = parse_user_writes(admin("get", "--raw", "/metrics").stdout)
    assert after["metrics-writer"] - before.get("metrics-writer", 0) == 2


def test_metrics_need_the_non_resource_permission(as_user: UserFactory) -> None:
    result = as_user("nobody")("get", "--raw", "/metrics", check=False)
    assert result.returncode != 0 and "forbidden" in result.stderr.lower()


def test_answered_requests_are_timed_in_kube_apiserver_buckets(admin: Kubectl) -> None:
    admin("create", "configmap", "metrics-timed", "--from-literal=a=1")
    admin("get", "configmap", "metrics-timed")
    text = admin("get", "--raw", "/metrics").stdout
    durations = parse_request_durations(text)
    created = durations[("POST", "", "configmaps", "")]
    assert [bound for bound, _ in created] == [*DURATION_BUCKETS, math.inf]
    counts = [count for _, count in created]
    assert counts == sorted(counts) and counts[-1] >= 1  # cumulative, every answer in +Inf
    assert created[-2][1] == counts[-1]  # a local create takes less than a minute
    assert "# TYPE apiserver_request_duration_seconds histogram" in text
    assert (
        'apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="",resource="configmaps"'
        in text
    )


@pytest.mark.parametrize(
    ("q", "buckets", "expected"),
    [
        (0.5, [(0.1, 0), (0.2, 10), (math.inf, 10)], 0.15),  # halfway into the bucket holding the rank
        (0.99, [(0.1, 50), (1.0, 100), (math.inf, 100)], 0.982),
        (0.99, [(1.0, 0), (10.0, 0), (math.inf, 5)], 10.0),  # in +Inf: the highest finite bound
        (0.5, [(0.005, 4), (math.inf, 4)], 0.0025),  # the first bucket starts at 0
        (0.5, [(0.1, 0), (math.inf, 0)], math.nan),  # nothing observed
    ],
)
def test_quantile_estimates_as_prometheus_does(q: float, buckets: list[tuple[float, int]], expected: float) -> None:
    found = quantile(q, buckets)
    if math.isnan(expected):
        assert math.isnan(found)
    else:
        assert found == pytest.approx(expected)


def test_the_buckets_between_two_scrapes_are_their_difference() -> None:
    assert minus([(0.1, 5), (math.inf, 9)], [(0.1, 2), (math.inf, 3)]) == [(0.1, 3), (math.inf, 6)]
    assert minus([(0.1, 5), (math.inf, 9)], []) == [(0.1, 5), (math.inf, 9)]  # a series new since


def test_a_histogram_series_counts_each_observation_once_in_its_bucket() -> None:
    metrics = RequestMetrics()
    info = parse_request("/api/v1/namespaces/default/configmaps/a", "GET", MultiDict())
    for seconds in (0.001, 0.3, 0.3, 75.0):
        metrics.observe(info, 200, seconds=seconds)
    series = parse_request_durations(metrics.render())[("GET", "", "configmaps", "")]
    cumulative = dict(series)
    assert cumulative[0.005] == 1 and cumulative[0.2] == 1 and cumulative[0.4] == 3
    assert cumulative[60.0] == 3 and cumulative[math.inf] == 4


def test_webhook_calls_render_and_parse_back() -> None:
    metrics = WebhookMetrics()
    metrics.observe("a.example.com", "CREATE", False, True, 0.004)
    metrics.observe("a.example.com", "UPDATE", True, True, 0.2)
    metrics.observe('b"quoted', "CREATE", False, False, 30.0)
    text = metrics.render()
    name = "apiserver_admission_webhook_admission_duration_seconds"
    labels = 'name="a.example.com",operation="CREATE",rejected="false",type="admit"'
    assert f'{name}_bucket{{{labels},le="0.005"}} 1' in text
    assert f'{name}_bucket{{{labels},le="+Inf"}} 1' in text
    labels = 'name="a.example.com",operation="UPDATE",rejected="true",type="admit"'
    assert f'{name}_bucket{{{labels},le="0.1"}} 0' in text and f'{name}_bucket{{{labels},le="0.5"}} 1' in text
    parsed = parse_webhook_durations(text)
    assert parsed["a.example.com"][1] == 2 and math.isclose(parsed["a.example.com"][0], 0.204)
    assert parsed['b\\"quoted'][1] == 1  # the escaped label value, as it is written
