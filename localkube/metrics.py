"""Request metrics served at ``/metrics`` in Prometheus' text format, as
kube-apiserver serves them: ``apiserver_request_total`` (one counter per verb,
group, version, resource, subresource, scope and response code) and
``apiserver_request_duration_seconds`` (a histogram per verb, group, version,
resource, subresource and scope, kube-apiserver's buckets; a watch is
observed when it ends, as there).

Benchmarks read them to count the API writes a workload costs (a watch only
shows writes that changed something; this counts every request answered) and
how long the answers took while the server was busy.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter

from localkube.requestinfo import RequestInfo

# kube-apiserver's verb labels (client verbs upper-cased; list and watch told apart)
_VERBS = {
    "get": "GET",
    "list": "LIST",
    "watch": "WATCH",
    "create": "POST",
    "update": "PUT",
    "patch": "PATCH",
    "delete": "DELETE",
    "deletecollection": "DELETECOLLECTION",
}
LabelSet = tuple[str, str, str, str, str, str, str]
DurationLabels = tuple[str, str, str, str, str, str]  # verb, group, version, resource, subresource, scope
# kube-apiserver's buckets for apiserver_request_duration_seconds
DURATION_BUCKETS = (
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 15.0, 20.0,
    30.0, 45.0, 60.0,
)  # fmt: skip


class Histogram:
    """Counts per bucket (not cumulative; summed when rendered), sum and count of one series."""

    __slots__ = ("bounds", "buckets", "count", "sum")

    def __init__(self, bounds: tuple[float, ...] = DURATION_BUCKETS) -> None:
        self.bounds = bounds
        self.buckets = [0] * (len(bounds) + 1)  # the last one is +Inf
        self.sum = 0.0
        self.count = 0

    def observe(self, seconds: float) -> None:
        self.buckets[bisect.bisect_left(self.bounds, seconds)] += 1
        self.sum += seconds
        self.count += 1

    def lines(self, name: str, labels: str) -> list[str]:
        """The series' ``_bucket`` (cumulative), ``_sum`` and ``_count`` samples."""
        found = []
        cumulative = 0
        for bound, count in zip((*map(_bound, self.bounds), "+Inf"), self.buckets, strict=True):
            cumulative += count
            found.append(f'{name}_bucket{{{labels},le="{bound}"}} {cumulative}')
        found.append(f"{name}_sum{{{labels}}} {self.sum:.6f}")
        found.append(f"{name}_count{{{labels}}} {self.count}")
        return found


_WRITES = frozenset({"create", "update", "patch", "delete", "deletecollection"})


class RequestMetrics:
    """Counts answered resource requests."""

    def __init__(self) -> None:
        self._counts: Counter[LabelSet] = Counter()
        self._durations: dict[DurationLabels, Histogram] = {}
        self._user_writes: Counter[str] = Counter()

    def observe_user(self, user: str, info: RequestInfo, code: int) -> None:
        """A write ``user`` made (answered below 400): who changed the store, as kube-apiserver's
        audit log tells (leader-election tests count a stepped-down leader's writes by it)."""
        if info.is_resource and info.verb in _WRITES and code < 400:
            self._user_writes[user] += 1

    def observe(self, info: RequestInfo, code: int, apply: bool = False, seconds: float | None = None) -> None:
        if not info.is_resource or not info.resource:
            return
        verb = "APPLY" if apply else _VERBS.get(info.verb, info.verb.upper())
        if info.name:
            scope = "resource"
        elif info.namespace:
            scope = "namespace"
        else:
            scope = "cluster"
        labels = (verb, info.group, info.version, info.resource, info.subresource, scope)
        self._counts[(*labels, str(code))] += 1
        if seconds is not None:
            histogram = self._durations.get(labels)
            if histogram is None:
                histogram = self._durations[labels] = Histogram()
            histogram.observe(seconds)

    def render(self) -> str:
        lines = [
            "# HELP apiserver_request_total Counter of apiserver requests broken out for each verb, group,"
            " version, resource, scope, subresource and HTTP response code.",
            "# TYPE apiserver_request_total counter",
        ]
        for (verb, group, version, resource, subresource, scope, code), count in sorted(self._counts.items()):
            labels = (
                f'code="{code}",component="apiserver",group="{group}",resource="{resource}",scope="{scope}",'
                f'subresource="{subresource}",verb="{verb}",version="{version}"'
            )
            lines.append(f"apiserver_request_total{{{labels}}} {count}")
        lines += [
            "# HELP apiserver_request_duration_seconds Response latency distribution in seconds for each verb,"
            " dry run value, group, version, resource, subresource, scope and component.",
            "# TYPE apiserver_request_duration_seconds histogram",
        ]
        for (verb, group, version, resource, subresource, scope), histogram in sorted(self._durations.items()):
            labels = (
                f'component="apiserver",dry_run="",group="{group}",resource="{resource}",scope="{scope}",'
                f'subresource="{subresource}",verb="{verb}",version="{version}"'
            )
            lines += histogram.lines("apiserver_request_duration_seconds", labels)
        lines += [
            "# HELP localkube_user_writes_total Counter of the resource writes (create, update, patch, delete)"
            " each user made that the server accepted.",
            "# TYPE localkube_user_writes_total counter",
        ]
        for user, count in sorted(self._user_writes.items()):
            lines.append(f'localkube_user_writes_total{{user="{_escape(user)}"}} {count}')
        return "\n".join(lines) + "\n"


# kube-apiserver's buckets for apiserver_admission_webhook_admission_duration_seconds
WEBHOOK_BUCKETS = (0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10.0, 25.0)
WebhookLabels = tuple[str, str, str, str]  # name, operation, rejected, type


class WebhookMetrics:
    """kube-apiserver's ``apiserver_admission_webhook_admission_duration_seconds``: each call of
    an admission webhook, from the review sent to its answer read, by webhook, operation, whether
    it rejected (or failed) the request and step (``admit`` mutating, ``validate`` validating)."""

    def __init__(self) -> None:
        self._durations: dict[WebhookLabels, Histogram] = {}

    def observe(self, name: str, operation: str, rejected: bool, mutating: bool, seconds: float) -> None:
        labels = (name, operation, "true" if rejected else "false", "admit" if mutating else "validate")
        histogram = self._durations.get(labels)
        if histogram is None:
            histogram = self._durations[labels] = Histogram(WEBHOOK_BUCKETS)
        histogram.observe(seconds)

    def render(self) -> str:
        lines = [
            "# HELP apiserver_admission_webhook_admission_duration_seconds Admission webhook latency histogram"
            " in seconds, identified by name and broken out for each operation and API resource and type"
            " (validate or admit).",
            "# TYPE apiserver_admission_webhook_admission_duration_seconds histogram",
        ]
        for (name, operation, rejected, step), histogram in sorted(self._durations.items()):
            labels = f'name="{_escape(name)}",operation="{operation}",rejected="{rejected}",type="{step}"'
            lines += histogram.lines("apiserver_admission_webhook_admission_duration_seconds", labels)
        return "\n".join(lines) + "\n"


def _escape(value: str) -> str:
    """A Prometheus label value (backslash, quote and newline escaped)."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def parse_user_writes(text: str) -> dict[str, int]:
    """The ``localkube_user_writes_total`` samples of a ``/metrics`` text, by user."""
    found: dict[str, int] = {}
    for line in text.splitlines():
        if line.startswith('localkube_user_writes_total{user="'):
            labels, _, value = line.rpartition(" ")
            user = labels.removeprefix('localkube_user_writes_total{user="').removesuffix('"}')
            found[user.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")] = int(float(value))
    return found


def _bound(value: float) -> str:
    """A bucket bound as Prometheus' Go client writes it (``1``, ``0.005``, ``1.25``)."""
    return f"{value:g}"


def parse_request_totals(text: str) -> dict[tuple[str, ...], int]:
    """``apiserver_request_total`` samples of a ``/metrics`` page: labels (verb, group, resource,
    subresource, code) -> count. For clients (benchmarks, tests) of any API server."""
    found: dict[tuple[str, ...], int] = {}
    for line in text.splitlines():
        if not line.startswith("apiserver_request_total{"):
            continue
        body, _, value = line.rpartition("} ")
        labels = dict(part.split("=", 1) for part in body[len("apiserver_request_total{") :].split(",") if "=" in part)
        key = tuple(labels.get(k, "").strip('"') for k in ("verb", "group", "resource", "subresource", "code"))
        found[key] = found.get(key, 0) + int(float(value))
    return found


DurationKey = tuple[str, str, str, str]  # verb, group, resource, subresource


def parse_request_durations(text: str) -> dict[DurationKey, list[tuple[float, int]]]:
    """``apiserver_request_duration_seconds`` buckets of a ``/metrics`` page: (verb, group,
    resource, subresource) -> [(upper bound, cumulative count)], summed over scopes and versions."""
    found: dict[DurationKey, dict[float, int]] = {}
    prefix = "apiserver_request_duration_seconds_bucket{"
    for line in text.splitlines():
        if not line.startswith(prefix):
            continue
        body, _, value = line.rpartition("} ")
        labels = dict(part.split("=", 1) for part in body[len(prefix) :].split(",") if "=" in part)
        key = (
            labels.get("verb", "").strip('"'),
            labels.get("group", "").strip('"'),
            labels.get("resource", "").strip('"'),
            labels.get("subresource", "").strip('"'),
        )
        bound = float(labels.get("le", '"+Inf"').strip('"'))
        buckets = found.setdefault(key, {})
        buckets[bound] = buckets.get(bound, 0) + int(float(value))
    return {key: sorted(buckets.items()) for key, buckets in found.items()}


def parse_webhook_durations(text: str) -> dict[str, tuple[float, int]]:
    """``apiserver_admission_webhook_admission_duration_seconds`` of a ``/metrics`` page: webhook
    name -> (seconds, calls), summed over operations, outcomes and steps."""
    name = "apiserver_admission_webhook_admission_duration_seconds"
    found: dict[str, list[float]] = {}
    for line in text.splitlines():
        for field, index in (("_sum{", 0), ("_count{", 1)):
            if line.startswith(name + field):
                body, _, value = line.rpartition("} ")
                labels = dict(part.split("=", 1) for part in body[len(name + field) :].split(",") if "=" in part)
                totals = found.setdefault(labels.get("name", "").strip('"'), [0.0, 0.0])
                totals[index] += float(value)
    return {hook: (seconds, int(calls)) for hook, (seconds, calls) in found.items()}


def quantile(q: float, buckets: list[tuple[float, int]]) -> float:
    """The ``q`` quantile of cumulative ``buckets`` as Prometheus' ``histogram_quantile`` estimates
    it (linear within a bucket; the highest finite bound when it falls in +Inf); NaN when empty."""
    if not buckets or buckets[-1][1] == 0:
        return math.nan
    rank = q * buckets[-1][1]
    lower_bound, lower_count = 0.0, 0
    for bound, count in buckets:
        if count >= rank:
            if math.isinf(bound):
                return lower_bound
            if count == lower_count:
                return bound
            return lower_bound + (bound - lower_bound) * (rank - lower_count) / (count - lower_count)
        lower_bound, lower_count = bound, count
    return lower_bound


def minus(after: list[tuple[float, int]], before: list[tuple[float, int]]) -> list[tuple[float, int]]:
    """The buckets of the requests answered between two scrapes."""
    earlier = dict(before)
    return [(bound, count - earlier.get(bound, 0)) for bound, count in after]
