"""Leader election on a ``coordination.k8s.io/v1`` Lease (client-go's algorithm
and defaults: lease duration 15 s, renew deadline 10 s, retry period 2 s).

:meth:`LeaderElector.run` is one task. While campaigning it tries every
``retry_period`` (with client-go's 1.2 jitter); once elected it runs ``lead()``
as a child task and renews every ``retry_period``. Every request of the
elector is bounded by a deadline at most ``renew_deadline`` away, so a hung
API server cannot keep a renewal waiting.

Why two leaders never overlap: a candidate judges a Lease expired only when
``leaseDurationSeconds`` have passed on its own clock since it *observed* the
record change (as client-go, so clock skew between hosts does not matter),
and the record changed on the server after the leader sent it. The leader
counts its renew deadline from the moment it sent its last successful renewal
and, when that passes without a new one, cancels ``lead()`` and waits for it
to finish: ``lease_duration - renew_deadline`` before anyone can take over.
With a :class:`~karmada.kube.fence.WriteFence`, the writes of ``lead()`` stop at
that renew deadline, and at once when the term ends, even before its tasks have
seen the cancellation.

When leadership ends (cancellation on clean shutdown, lost renewal, or
``lead()`` returning) the Lease is released as client-go's ``ReleaseOnCancel``
writes it (``holderIdentity`` empty, ``leaseDurationSeconds`` 1), so a
standby or a restarted replica takes over at its next try instead of a lease
duration later. The release is only written while the Lease still names this
candidate. Optimistic concurrency (the Lease's resourceVersion) decides races.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import logging
import math
import random
import time
from collections.abc import Callable, Coroutine
from typing import Any

from karmada.kube.client import KubeClient, KubeError
from karmada.kube.fence import WriteFence
from karmada.kube.resources import LEASES

log = logging.getLogger("karmada.kube.leaderelection")

Obj = dict[str, Any]
JITTER_FACTOR = 1.2  # client-go's leaderelection.JitterFactor


def micro_time(when: datetime.datetime) -> str:
    """A Kubernetes MicroTime: six fractional digits and ``Z``."""
    return when.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_micro_time(value: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))


class LeaderElector:
    """Run ``lead`` only while holding the Lease ``namespace/name``."""

    def __init__(
        self,
        client: KubeClient,
        namespace: str,
        name: str,
        identity: str,
        *,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        release_on_cancel: bool = True,
        fence: WriteFence | None = None,
    ) -> None:
        # client-go's validation: the margins the safety argument above needs
        if lease_duration <= renew_deadline:
            raise ValueError("the lease duration must be greater than the renew deadline")
        if renew_deadline <= JITTER_FACTOR * retry_period:
            raise ValueError(f"the renew deadline must be greater than {JITTER_FACTOR} x the retry period")
        if not identity:
            raise ValueError("a leader election identity must not be empty")
        self.client = client
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.release_on_cancel = release_on_cancel
        # the leader's writes (through other clients) stop with its term: see karmada.kube.fence
        self.fence = fence
        self.is_leader = False
        self._lease: Obj | None = None  # the Lease as last read or written
        self._observed_raw = ""
        self._observed_at = 0.0  # loop time when the record last changed
        self._renewed_at = 0.0  # loop time when the last successful write was sent

    @property
    def observed_holder(self) -> str:
        """The holder named by the Lease as this candidate last saw it ("" when free or unseen)."""
        return str(self._spec().get("holderIdentity") or "")

    def _spec(self) -> Obj:
        spec: Obj = ((self._lease or {}).get("spec")) or {}
        return spec

    def _now(self) -> float:
        return asyncio.get_running_loop().time()

    def _observe(self, lease: Obj) -> None:
        raw = json.dumps(lease.get("spec") or {}, sort_keys=True)
        if raw != self._observed_raw:
            self._observed_raw, self._observed_at = raw, self._now()
        self._lease = lease

    def _record(self, *, acquire_time: str, transitions: int) -> Obj:
        return {
            "holderIdentity": self.identity,
            # whole seconds on the wire; rounding up keeps the deadline inside the lease
            "leaseDurationSeconds": max(1, math.ceil(self.lease_duration)),
            "acquireTime": acquire_time,
            "renewTime": micro_time(datetime.datetime.now(datetime.UTC)),
            "leaseTransitions": transitions,
        }

    async def try_acquire_or_renew(self, deadline: float | None = None) -> bool:
        """One attempt, finished by ``deadline`` (loop time; default: a renew deadline from now).

        True when this candidate holds the Lease afterwards; False when another
        holds it, on a lost race, or when the deadline passed. Other API errors raise."""
        if deadline is None:
            deadline = self._now() + self.renew_deadline
        try:
            async with asyncio.timeout_at(deadline):
                return await self._acquire_or_renew()
        except TimeoutError:
            log.warning("lease %s/%s: no answer within the renew deadline", self.namespace, self.name)
            return False

    async def _acquire_or_renew(self) -> bool:
        now = datetime.datetime.now(datetime.UTC)
        # fast path: the leader renews on top of its own last write, one request
        if self._lease is not None and self.observed_holder == self.identity and self.is_leader:
            spec = self._spec()
            renewed = dict(
                self._lease,
                spec=self._record(
                    acquire_time=spec.get("acquireTime") or micro_time(now),
                    transitions=int(spec.get("leaseTransitions") or 0),
                ),
            )
            try:
                await self._write(renewed, create=False)
                return True
            except KubeError as exc:
                log.info(
                    "renewing lease %s/%s on the cached copy failed (%s); reading it",
                    self.namespace,
                    self.name,
                    exc.reason,
                )
        lease = await self.client.get_or_none(LEASES, self.name, self.namespace)
        try:
            if lease is None:
                body: Obj = {
                    "apiVersion": "coordination.k8s.io/v1",
                    "kind": "Lease",
                    "metadata": {"name": self.name, "namespace": self.namespace},
                    "spec": self._record(acquire_time=micro_time(now), transitions=0),
                }
                await self._write(body, create=True)
                return True
            self._observe(lease)
            spec = self._spec()
            holder = self.observed_holder
            duration = float(spec.get("leaseDurationSeconds") or self.lease_duration)
            valid = self._observed_at + duration > self._now()
            if holder and holder != self.identity and valid:
                return False
            if holder == self.identity:
                record = self._record(
                    acquire_time=spec.get("acquireTime") or micro_time(now),
                    transitions=int(spec.get("leaseTransitions") or 0),
                )
            else:
                record = self._record(
                    acquire_time=micro_time(now), transitions=int(spec.get("leaseTransitions") or 0) + 1
                )
            await self._write(dict(lease, spec=record), create=False)
            return True
        except KubeError as exc:
            if exc.conflict or exc.already_exists:
                return False
            raise

    async def _write(self, lease: Obj, *, create: bool) -> None:
        sent, sent_monotonic = self._now(), time.monotonic()
        if create:
            stored = await self.client.create(LEASES, lease, self.namespace)
        else:
            stored = await self.client.update(LEASES, lease, self.namespace)
        took = self._now() - sent
        if took >= self.retry_period:
            # a renewal this slow eats the renew deadline: the API server (or this process) is saturated
            log.warning("writing lease %s/%s took %.1fs", self.namespace, self.name, took)
        self._renewed_at = sent
        self._observe(stored)
        if self.fence is not None:
            self.fence.extend(sent_monotonic + self.renew_deadline)

    async def release(self) -> bool:
        """Give the Lease up if this candidate still holds it; whether it is not held by us afterwards."""
        if self.observed_holder != self.identity:
            return True
        try:
            async with asyncio.timeout(self.renew_deadline):
                while True:
                    lease = await self.client.get_or_none(LEASES, self.name, self.namespace)
                    if lease is None:
                        return True
                    self._observe(lease)
                    if self.observed_holder != self.identity:
                        return True
                    stamp = micro_time(datetime.datetime.now(datetime.UTC))
                    spec = {
                        "holderIdentity": "",
                        "leaseDurationSeconds": 1,
                        "acquireTime": stamp,
                        "renewTime": stamp,
                        "leaseTransitions": int(self._spec().get("leaseTransitions") or 0),
                    }
                    try:
                        self._observe(await self.client.update(LEASES, dict(lease, spec=spec), self.namespace))
                    except KubeError as exc:
                        if exc.conflict:  # a renewal in flight when we were cancelled landed meanwhile
                            continue
                        raise
                    log.info("%s released lease %s/%s", self.identity, self.namespace, self.name)
                    return True
        except (KubeError, TimeoutError) as exc:
            log.warning("releasing lease %s/%s failed: %s", self.namespace, self.name, exc)
            return False

    async def _attempt(self, deadline: float) -> bool:
        try:
            return await self.try_acquire_or_renew(deadline)
        except KubeError as exc:
            log.warning("lease %s/%s: %s", self.namespace, self.name, exc)
            return False

    async def _campaign(self) -> None:
        while not await self._attempt(self._now() + self.renew_deadline):
            await asyncio.sleep(self.retry_period * (1 + random.random() * JITTER_FACTOR))

    async def _keep(self, work: asyncio.Task[None]) -> None:
        """Renew until ``work`` ends or the renew deadline passes without a renewal."""
        while True:
            done, _ = await asyncio.wait({work}, timeout=self.retry_period)
            if done:
                return
            deadline = self._renewed_at + self.renew_deadline
            while not await self._attempt(deadline):
                holder = self.observed_holder
                if holder != self.identity:
                    log.warning("%s lost lease %s/%s to %r", self.identity, self.namespace, self.name, holder)
                    return
                left = deadline - self._now()
                if left <= 0:
                    log.warning(
                        "%s could not renew lease %s/%s within %.1fs; stepping down",
                        self.identity,
                        self.namespace,
                        self.name,
                        self.renew_deadline,
                    )
                    return
                done, _ = await asyncio.wait({work}, timeout=min(self.retry_period, left))
                if done:
                    return

    async def run(self, lead: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Campaign until elected, run ``lead`` while leading; return once leadership is lost
        (``lead`` cancelled and finished, the Lease released). An exception of ``lead`` is
        raised here after stepping down."""
        await self._campaign()
        log.info("%s became leader of %s/%s", self.identity, self.namespace, self.name)
        self.is_leader = True
        work: asyncio.Task[None] = asyncio.get_running_loop().create_task(lead(), name=f"lead-{self.name}")
        try:
            await self._keep(work)
        finally:
            self.is_leader = False
            if self.fence is not None:
                self.fence.revoke()  # before the cancel reaches lead(): its writes stop now
            work.cancel()
            await asyncio.wait({work})
            if self.release_on_cancel:
                await self.release()
        failure = None if work.cancelled() else work.exception()
        if failure is not None:
            raise failure
