"""Leader election on a ``coordination.k8s.io/v1`` Lease (client-go's algorithm).

A candidate takes the Lease when it is free or its holder has not renewed it
within ``lease_duration``; the leader renews every ``retry_period`` and steps
down when it cannot renew within ``renew_deadline``. Optimistic concurrency
(the Lease's resourceVersion) decides races between candidates.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from karmada.kube.client import KubeClient, KubeError
from karmada.kube.resources import LEASES

log = logging.getLogger("karmada.kube.leaderelection")

Obj = dict[str, Any]


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
    ) -> None:
        self.client = client
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.is_leader = False

    def _now(self) -> datetime.datetime:
        return datetime.datetime.now(datetime.UTC)

    async def try_acquire_or_renew(self) -> bool:
        """One attempt; True when this candidate holds the Lease afterwards."""
        now = self._now()
        lease = await self.client.get_or_none(LEASES, self.name, self.namespace)
        spec_now = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": int(self.lease_duration),
            "renewTime": micro_time(now),
        }
        try:
            if lease is None:
                body = {
                    "apiVersion": "coordination.k8s.io/v1",
                    "kind": "Lease",
                    "metadata": {"name": self.name, "namespace": self.namespace},
                    "spec": {**spec_now, "acquireTime": micro_time(now), "leaseTransitions": 0},
                }
                await self.client.create(LEASES, body, self.namespace)
                return True
            spec = lease.get("spec") or {}
            holder = spec.get("holderIdentity")
            renewed = spec.get("renewTime")
            duration = spec.get("leaseDurationSeconds") or self.lease_duration
            expired = renewed is None or parse_micro_time(renewed) + datetime.timedelta(seconds=duration) < now
            if holder and holder != self.identity and not expired:
                return False
            updated = dict(lease)
            new_spec = {**spec, **spec_now}
            if holder != self.identity:
                new_spec["acquireTime"] = micro_time(now)
                new_spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
            updated["spec"] = new_spec
            await self.client.update(LEASES, updated, self.namespace)
            return True
        except KubeError as exc:
            if exc.conflict or exc.already_exists:
                return False
            raise

    async def run(self, lead: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Campaign until elected, run ``lead`` while leading; return when leadership is lost."""
        while not self.is_leader:
            with contextlib.suppress(KubeError):
                self.is_leader = await self.try_acquire_or_renew()
            if not self.is_leader:
                await asyncio.sleep(self.retry_period)
        log.info("%s became leader of %s/%s", self.identity, self.namespace, self.name)
        work: asyncio.Task[None] = asyncio.get_running_loop().create_task(lead())
        try:
            last_renew = asyncio.get_running_loop().time()
            while not work.done():
                await asyncio.sleep(self.retry_period)
                try:
                    if await self.try_acquire_or_renew():
                        last_renew = asyncio.get_running_loop().time()
                        continue
                except KubeError as exc:
                    log.warning("renewing lease %s/%s failed: %s", self.namespace, self.name, exc)
                if asyncio.get_running_loop().time() - last_renew > self.renew_deadline:
                    log.warning("%s lost leadership of %s/%s", self.identity, self.namespace, self.name)
                    break
        finally:
            self.is_leader = False
            work.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await work
