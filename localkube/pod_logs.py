"""``pods/log``: what simulated containers write, served with kube's PodLogOptions.

A simulated container's log is a pure function of its ``startedAt`` and the
clock, so it needs no writer task and nothing to clean up when the Pod goes:
at ``startedAt`` it writes :data:`START_LINES` lines (naming the container and
its image), then one ``tick`` line every ``interval`` seconds
(``SimulationConfig.log_interval``, 5 s by default) until it stops (a
terminated container's log ends at ``finishedAt``). Only the last
:data:`MAX_LINES` lines are kept, as a kubelet's log rotation keeps a bounded
file.

The query is kube's PodLogOptions: ``container``, ``follow`` (a chunked
``text/plain`` stream of new lines until the Pod is deleted or the client
goes), ``tailLines``, ``sinceSeconds``, ``sinceTime``, ``timestamps`` (the
kubelet's fixed nine-digit RFC 3339 prefix), ``limitBytes``, ``previous``;
validation errors are kube-apiserver's (422 on PodLogOptions), the container
errors its pod REST's, the "waiting to start" and "previous terminated
container" errors the kubelet's (400). A Pod not bound to a node has an empty
log, as kube-apiserver answers it without asking any kubelet.

Where localkube differs: containers never restart, so ``previous`` always
answers that there is no previous container; ``stream`` (split stdout and
stderr, an alpha feature in kube 1.32) is ignored; ``insecureSkipTLSVerifyBackend``
has nothing to skip.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web

from localkube.errors import bad_request, field_forbidden, field_invalid, invalid
from localkube.pod_connect import Target, parse_bool, parse_int, same_pod, target

Obj = dict[str, Any]

MAX_LINES = 1000  # lines a container's log keeps (the oldest go first)
START_LINES = 2  # lines written at startedAt
POLL_SECONDS = 0.5  # how often a follow looks whether its Pod or client is gone


@dataclass(frozen=True)
class LogLine:
    at: datetime
    text: str


@dataclass(frozen=True)
class LogOptions:
    """kube's PodLogOptions, as the query gives them."""

    container: str = ""
    follow: bool = False
    previous: bool = False
    timestamps: bool = False
    tail_lines: int | None = None
    since_seconds: int | None = None
    since_time: datetime | None = None
    limit_bytes: int | None = None


def parse_time(value: str) -> datetime:
    """An RFC 3339 time (``2024-05-01T10:00:00Z``, fractions and offsets allowed)."""
    return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(UTC)


def parse_options(query: Any, name: str) -> LogOptions:
    """The options of a log request, validated as kube's ValidatePodLogOptions does."""
    since_time = None
    raw_time = query.get("sinceTime")
    if raw_time:
        try:
            since_time = parse_time(raw_time)
        except ValueError:
            raise bad_request(f'parsing time "{raw_time}" as "2006-01-02T15:04:05Z07:00": cannot parse') from None
    options = LogOptions(
        container=query.get("container", ""),
        follow=parse_bool(query, "follow"),
        previous=parse_bool(query, "previous"),
        timestamps=parse_bool(query, "timestamps"),
        tail_lines=parse_int(query, "tailLines"),
        since_seconds=parse_int(query, "sinceSeconds"),
        since_time=since_time,
        limit_bytes=parse_int(query, "limitBytes"),
    )
    causes = []
    if options.tail_lines is not None and options.tail_lines < 0:
        causes.append(field_invalid("tailLines", options.tail_lines, "must be greater than or equal to 0"))
    if options.limit_bytes is not None and options.limit_bytes < 1:
        causes.append(field_invalid("limitBytes", options.limit_bytes, "must be greater than 0"))
    if options.since_seconds is not None and options.since_time is not None:
        causes.append(field_forbidden("", "at most one of `sinceTime` or `sinceSeconds` may be specified"))
    elif options.since_seconds is not None and options.since_seconds < 1:
        causes.append(field_invalid("sinceSeconds", options.since_seconds, "must be greater than 0"))
    if causes:
        raise invalid("PodLogOptions", "", name, causes)
    return options


# -- the simulated log ----------------------------------------------------------------
def started_at(status: Obj) -> tuple[datetime, datetime | None] | None:
    """When the container started and, if it has stopped, when it finished."""
    state = status.get("state") or {}
    running = state.get("running")
    if running and running.get("startedAt"):
        return parse_time(running["startedAt"]), None
    terminated = state.get("terminated")
    if terminated and terminated.get("startedAt"):
        finished = terminated.get("finishedAt") or terminated["startedAt"]
        return parse_time(terminated["startedAt"]), parse_time(finished)
    return None


def start_lines(container: Obj) -> list[str]:
    name = container.get("name", "")
    ports = [str(p.get("containerPort")) for p in container.get("ports") or [] if p.get("containerPort")]
    listening = f"listening on port {', '.join(ports)}" if ports else "running"
    return [f"starting container {name} (image {container.get('image', '')})", f"{name}: {listening}"]


def tick_line(container: Obj, index: int) -> str:
    return f"{container.get('name', '')}: tick {index}"


def lines_until(container: Obj, started: datetime, interval: float, now: datetime, first: int = 0) -> list[LogLine]:
    """The container's log lines written at or before ``now``, from line number ``first``
    (0 and 1 are the start lines, 2 on one tick each), the last :data:`MAX_LINES` only."""
    elapsed = (now - started).total_seconds()
    if elapsed < 0:
        return []
    ticks = math.floor(elapsed / interval + 1e-9)
    total = START_LINES + ticks
    first = max(first, total - MAX_LINES)
    out = []
    starts = start_lines(container)
    for number in range(first, total):
        if number < START_LINES:
            out.append(LogLine(started, starts[number]))
        else:
            tick = number - START_LINES + 1
            out.append(LogLine(started + timedelta(seconds=tick * interval), tick_line(container, tick)))
    return out


def line_count(started: datetime, interval: float, now: datetime) -> int:
    """How many lines were written by ``now`` (the number of the next one)."""
    elapsed = (now - started).total_seconds()
    if elapsed < 0:
        return 0
    return START_LINES + math.floor(elapsed / interval + 1e-9)


def next_line_at(started: datetime, interval: float, number: int) -> datetime:
    """When line ``number`` (one after the start lines) is written."""
    return started + timedelta(seconds=(number - START_LINES + 1) * interval)


def select(lines: list[LogLine], options: LogOptions, now: datetime) -> list[LogLine]:
    """``tailLines`` first, then ``sinceSeconds``/``sinceTime``, as the kubelet reads a log."""
    if options.tail_lines is not None:
        lines = lines[len(lines) - options.tail_lines :] if options.tail_lines else []
    since = since_of(options, now)
    if since is not None:
        lines = [line for line in lines if line.at >= since]
    return lines


def since_of(options: LogOptions, now: datetime) -> datetime | None:
    if options.since_time is not None:
        return options.since_time
    if options.since_seconds is not None:
        return now - timedelta(seconds=options.since_seconds)
    return None


def format_timestamp(at: datetime) -> str:
    """The kubelet's timestamp prefix: RFC 3339 with nine fractional digits, UTC."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond * 1000:09d}Z"


def render(lines: list[LogLine], timestamps: bool) -> bytes:
    if timestamps:
        return b"".join(f"{format_timestamp(line.at)} {line.text}\n".encode() for line in lines)
    return b"".join(f"{line.text}\n".encode() for line in lines)


# -- the request -----------------------------------------------------------------------
def check_status(found: Target, options: LogOptions) -> tuple[datetime, datetime | None]:
    """The kubelet's answer for a container that has no log to give (400), or when it started."""
    name, container = found.name, found.container_name
    if options.previous:
        raise bad_request(f'previous terminated container "{container}" in pod "{name}" not found')
    status = found.status()
    started = started_at(status) if status else None
    if started is None:
        waiting = ((status or {}).get("state") or {}).get("waiting") or {}
        reason = waiting.get("reason") or "ContainerCreating"
        if reason in ("ErrImagePull", "ImagePullBackOff"):
            reason = "image can't be pulled"
        raise bad_request(f'container "{container}" in pod "{name}" is waiting to start: {reason}')
    return started


class _Budget:
    """``limitBytes``: what may still be written."""

    def __init__(self, limit: int | None) -> None:
        self.left = limit

    def take(self, data: bytes) -> bytes:
        if self.left is None:
            return data
        data = data[: self.left]
        self.left -= len(data)
        return data

    @property
    def spent(self) -> bool:
        return self.left is not None and self.left <= 0


async def serve(
    store: Any,
    request: web.Request,
    namespace: str,
    name: str,
    interval: float,
    clock: Callable[[], datetime] | None = None,
) -> web.StreamResponse:
    """Answer ``GET .../pods/NAME/log``."""
    now_of = clock or (lambda: datetime.now(UTC))
    options = parse_options(request.query, name)
    found = target(store, namespace, name, options.container)
    if not (found.pod.get("spec") or {}).get("nodeName"):
        return web.Response(body=b"", content_type="text/plain")
    started, finished = check_status(found, options)
    now = now_of()
    end = min(now, finished) if finished else now
    lines = select(lines_until(found.container, started, interval, end), options, now)
    budget = _Budget(options.limit_bytes)
    body = budget.take(render(lines, options.timestamps))
    if not options.follow or finished is not None:
        return web.Response(body=body, content_type="text/plain")
    response = web.StreamResponse(headers={"Content-Type": "text/plain", "Cache-Control": "no-cache"})
    response.enable_chunked_encoding()
    await response.prepare(request)
    if body:
        await response.write(body)
    number = line_count(started, interval, end)
    since = since_of(options, now)
    while not budget.spent:
        due = next_line_at(started, interval, number)
        while (wait := (due - now_of()).total_seconds()) > 0:
            await asyncio.sleep(min(wait, POLL_SECONDS))
            if request.transport is None or request.transport.is_closing() or not _still_running(store, found):
                return response
        if not _still_running(store, found):
            break
        fresh = lines_until(found.container, started, interval, now_of(), number)
        number += len(fresh)
        fresh = [line for line in fresh if since is None or line.at >= since]
        data = budget.take(render(fresh, options.timestamps))
        if data:
            try:
                await response.write(data)
            except ConnectionResetError:
                return response
    await response.write_eof()
    return response


def _still_running(store: Any, found: Target) -> bool:
    if not same_pod(store, found.pod):
        return False
    meta = found.pod["metadata"]
    current = store.get("/pods", meta.get("namespace", ""), meta["name"])
    return Target(current, found.container).running()
