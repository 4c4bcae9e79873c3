"""Request counters served at ``/metrics`` in Prometheus' text format, as
kube-apiserver serves ``apiserver_request_total``: one counter per verb,
group, version, resource, subresource, scope and response code.

Benchmarks read it to count the API writes a workload costs (a watch only
shows writes that changed something; this counts every request answered).
"""

from __future__ import annotations

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


class RequestMetrics:
    """Counts answered resource requests."""

    def __init__(self) -> None:
        self._counts: Counter[LabelSet] = Counter()

    def observe(self, info: RequestInfo, code: int, apply: bool = False) -> None:
        if not info.is_resource or not info.resource:
            return
        verb = "APPLY" if apply else _VERBS.get(info.verb, info.verb.upper())
        if info.name:
            scope = "resource"
        elif info.namespace:
            scope = "namespace"
        else:
            scope = "cluster"
        key = (verb, info.group, info.version, info.resource, info.subresource, scope, str(code))
        self._counts[key] += 1

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
        return "\n".join(lines) + "\n"


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
