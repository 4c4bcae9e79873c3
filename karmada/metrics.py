"""Prometheus metrics of a program, served on ``/metrics`` at the address of
Karmada's ``--metrics-bind-address`` flag (``:8080``; ``0`` disables).

The names, labels and buckets are the ones Karmada, controller-runtime and
client-go export, so the same dashboards and alerts work:

- work queues: ``workqueue_depth``, ``workqueue_adds_total``,
  ``workqueue_queue_duration_seconds``, ``workqueue_work_duration_seconds``,
  ``workqueue_retries_total`` (label ``name``: the controller's name; the
  process's sum when several queues share it, as a fleet's agents do);
- reconciles: ``controller_runtime_reconcile_total{controller,result}``,
  ``controller_runtime_reconcile_errors_total{controller}``,
  ``controller_runtime_reconcile_time_seconds{controller}``;
- API requests: ``rest_client_requests_total{code,method,host}``,
  ``rest_client_request_duration_seconds{verb,host}``;
- the scheduler: ``karmada_scheduler_e2e_scheduling_duration_seconds`` and
  ``karmada_scheduler_schedule_attempts_total`` (``result``: scheduled/error,
  ``schedule_type``: ReconcileSchedule/ScaleSchedule);
- the agent's Work execution: ``work_sync_workload_duration_seconds{result}``.

Every metric lives in :data:`REGISTRY`, this process's own registry rather
than prometheus_client's default one (which also holds the process and GC
collectors of whatever imported it first); each program is one process, so one
registry per process is one registry per program.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import logging
from collections.abc import AsyncIterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from karmada.health_server import parse_bind_address

log = logging.getLogger("metrics")

__all__ = ["REGISTRY", "metrics_address", "render", "serve"]

REGISTRY = CollectorRegistry(auto_describe=True)
# the classic text format, which every Prometheus scrapes (what generate_latest writes)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _exponential(start: float, factor: float, count: int) -> list[float]:
    """Prometheus' ExponentialBuckets."""
    return [start * factor**i for i in range(count)]


# controller-runtime's work-queue buckets: 10 ns to 1,000 s
_QUEUE_BUCKETS = _exponential(10e-9, 10, 12)
# client-go's request-latency buckets
_REQUEST_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0]

WORKQUEUE_DEPTH = Gauge("workqueue_depth", "Current depth of workqueue", ["name"], registry=REGISTRY)
WORKQUEUE_ADDS = Counter("workqueue_adds", "Total number of adds handled by workqueue", ["name"], registry=REGISTRY)
WORKQUEUE_QUEUE_DURATION = Histogram(
    "workqueue_queue_duration_seconds",
    "How long in seconds an item stays in workqueue before being requested",
    ["name"],
    buckets=_QUEUE_BUCKETS,
    registry=REGISTRY,
)
WORKQUEUE_WORK_DURATION = Histogram(
    "workqueue_work_duration_seconds",
    "How long in seconds processing an item from workqueue takes.",
    ["name"],
    buckets=_QUEUE_BUCKETS,
    registry=REGISTRY,
)
WORKQUEUE_RETRIES = Counter(
    "workqueue_retries", "Total number of retries handled by workqueue", ["name"], registry=REGISTRY
)

RECONCILE_TOTAL = Counter(
    "controller_runtime_reconcile",
    "Total number of reconciliations per controller",
    ["controller", "result"],
    registry=REGISTRY,
)
RECONCILE_ERRORS = Counter(
    "controller_runtime_reconcile_errors",
    "Total number of reconciliation errors per controller",
    ["controller"],
    registry=REGISTRY,
)
RECONCILE_TIME = Histogram(
    "controller_runtime_reconcile_time_seconds",
    "Length of time per reconciliation per controller",
    ["controller"],
    buckets=[
        *(0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9),
        *(1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60),
    ],
    registry=REGISTRY,
)

REST_REQUESTS = Counter(
    "rest_client_requests",
    "Number of HTTP requests, partitioned by status code, method, and host.",
    ["code", "method", "host"],
    registry=REGISTRY,
)
REST_DURATION = Histogram(
    "rest_client_request_duration_seconds",
    "Request latency in seconds. Broken down by verb, and host.",
    ["verb", "host"],
    buckets=_REQUEST_BUCKETS,
    registry=REGISTRY,
)

SCHEDULE_ATTEMPTS = Counter(
    "karmada_scheduler_schedule_attempts",
    "Number of attempts to schedule a ResourceBinding or ClusterResourceBinding",
    ["result", "schedule_type"],
    registry=REGISTRY,
)
E2E_SCHEDULING_DURATION = Histogram(
    "karmada_scheduler_e2e_scheduling_duration_seconds",
    "E2e scheduling latency in seconds",
    ["result", "schedule_type"],
    buckets=_exponential(0.001, 2, 15),
    registry=REGISTRY,
)

SYNC_WORKLOAD_DURATION = Histogram(
    "work_sync_workload_duration_seconds",
    "Duration in seconds to sync the workload to a target cluster. By the result, 'error' means a work "
    "failed to sync workloads. Otherwise 'success'.",
    ["result"],
    buckets=_exponential(0.001, 2, 12),
    registry=REGISTRY,
)

# Karmada's schedule types: a change of replicas alone is a ScaleSchedule, anything else a ReconcileSchedule
RECONCILE_SCHEDULE = "ReconcileSchedule"
SCALE_SCHEDULE = "ScaleSchedule"


def observe_schedule(schedule_type: str, seconds: float, failed: bool) -> None:
    """One scheduling attempt (Karmada's ``BindingSchedule``)."""
    result = "error" if failed else "scheduled"
    E2E_SCHEDULING_DURATION.labels(result, schedule_type).observe(seconds)
    SCHEDULE_ATTEMPTS.labels(result, schedule_type).inc()


def render() -> bytes:
    """The text exposition of every metric of this process."""
    return generate_latest(REGISTRY)


def metrics_address(text: str) -> str:
    """argparse type of ``--metrics-bind-address``: checked, kept as written."""
    try:
        parse_bind_address(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"invalid --metrics-bind-address {text!r}: want host:port, :port or 0"
        ) from None
    return text


@contextlib.asynccontextmanager
async def serve(bind_address: str, program: str) -> AsyncIterator[int | None]:
    """Serve ``/metrics`` while the block runs; yields the bound port (None when disabled).

    An address in use is logged and the program runs on without metrics: several
    programs share one host in the sandbox, and a missing scrape target is visible
    to whoever scrapes it, whereas a program that refuses to start serves nothing."""
    address = parse_bind_address(bind_address)
    if address is None:
        yield None
        return
    from aiohttp import web

    async def metrics(_: web.Request) -> web.Response:
        response = web.Response(body=render())
        response.headers["Content-Type"] = CONTENT_TYPE
        return response

    app = web.Application()
    app.router.add_get("/metrics", metrics)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, address[0], address[1])
        try:
            await site.start()
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise
            log.error("%s: metrics not served: %s is in use", program, bind_address)
            yield None
            return
        server = site._server  # the listening sockets; port 0 needs the real one
        sockets = getattr(server, "sockets", None) or []
        port = sockets[0].getsockname()[1] if sockets else address[1]
        log.info("%s: metrics on %s (port %d)", program, bind_address, port)
        yield port
    finally:
        await runner.cleanup()


def add_serving_flags(parser: argparse.ArgumentParser, probe_default: str = ":10357") -> None:
    """Karmada's ``--health-probe-bind-address`` and ``--metrics-bind-address`` (``:8080``),
    the same on every program; only the probe port's default differs (the webhook's is ``:8000``)."""
    from karmada.health_server import probe_address

    parser.add_argument(
        "--health-probe-bind-address",
        type=probe_address,
        default=probe_default,
        metavar="ADDRESS",
        help=f"where /healthz and /readyz are served over HTTP (host:port, :port; 0 disables) ({probe_default})",
    )
    parser.add_argument(
        "--metrics-bind-address",
        type=metrics_address,
        default=":8080",
        metavar="ADDRESS",
        help="where Prometheus metrics are served on /metrics (host:port, :port; 0 disables) (:8080)",
    )
