"""Graceful deletion of Pods, as kube-apiserver decides it (apiserver's
``rest.BeforeDelete`` with the Pod strategy's ``CheckGracefulDelete``).

A DELETE of a Pod that is bound to a node and not yet finished does not
remove it: it sets ``metadata.deletionTimestamp`` (now plus the grace period)
and ``deletionGracePeriodSeconds`` and keeps the object, so the node's kubelet
can stop its containers; the kubelet then deletes it with a grace period of 0.
The grace period is the request's ``gracePeriodSeconds``, else the Pod's
``spec.terminationGracePeriodSeconds`` (defaulted to 30), else 0; an unbound
Pod or one in a terminal phase goes at once; a negative value means 1. A
second DELETE may only shorten the period (the timestamp moves by the
difference); a longer or equal one changes nothing.

In localkube the simulation is the kubelet of every node when it runs; without
it nothing stops a bound Pod's containers, so, as in a cluster whose kubelet is
gone, the Pod stays terminating until it is deleted with ``gracePeriodSeconds=0``
(``kubectl delete --force --grace-period=0``).
"""

from __future__ import annotations

import datetime
from enum import Enum
from typing import Any

from localkube.errors import bad_request
from localkube.meta import parse_time

Obj = dict[str, Any]
TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


class Plan(Enum):
    """What a DELETE does to a Pod."""

    # not graceful (already terminating with no grace left): delete as any other object
    NOW = "now"
    # deletionTimestamp and grace period set (or shortened); delete once the grace is 0
    GRACEFUL = "graceful"
    # already terminating with a grace period no longer than the request's: nothing changes
    PENDING = "pending"


def requested_grace(options: Obj) -> int | None:
    """``gracePeriodSeconds`` of DeleteOptions (negative means 1, as kube-apiserver reads it)."""
    value = options.get("gracePeriodSeconds")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise bad_request(
            "json: cannot unmarshal value into Go struct field DeleteOptions.gracePeriodSeconds of type int64"
        )
    return 1 if value < 0 else value


def _time(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.UTC).strftime(TIME_FORMAT)


def plan_pod_deletion(pod: Obj, options: Obj, now: datetime.datetime | None = None) -> Plan:
    """Decide a DELETE of ``pod`` and set its deletion fields in place (``pod`` is the copy to store)."""
    meta = pod["metadata"]
    asked = requested_grace(options)
    current = meta.get("deletionGracePeriodSeconds")
    if isinstance(current, int) and current < 0:
        current = meta["deletionGracePeriodSeconds"] = 1
    if meta.get("deletionTimestamp"):
        if not current:
            return Plan.NOW  # gracefully deleted before without a grace period left: finish it
        if asked is None or asked >= current:
            return Plan.PENDING
        started = parse_time(str(meta["deletionTimestamp"])) - datetime.timedelta(seconds=current)
        meta["deletionTimestamp"] = _time(started + datetime.timedelta(seconds=asked))
        meta["deletionGracePeriodSeconds"] = asked
        return Plan.GRACEFUL
    spec = pod.get("spec") or {}
    if asked is not None:
        period = asked
    else:
        default = spec.get("terminationGracePeriodSeconds")
        period = default if isinstance(default, int) and not isinstance(default, bool) else 0
    if not spec.get("nodeName"):
        period = 0  # never scheduled: no kubelet has anything to stop
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        period = 0  # its containers have already ended
    period = max(period, 1) if period < 0 else period
    moment = now or datetime.datetime.now(datetime.UTC)
    meta["deletionTimestamp"] = _time(moment + datetime.timedelta(seconds=period))
    meta["deletionGracePeriodSeconds"] = period
    if int(meta.get("generation") or 0) > 0:
        meta["generation"] = int(meta["generation"]) + 1
    return Plan.GRACEFUL


def grace_left(pod: Obj) -> bool:
    """True while a terminating Pod still waits for its kubelet (an update must not remove it)."""
    meta = pod.get("metadata") or {}
    return bool(meta.get("deletionTimestamp")) and bool(meta.get("deletionGracePeriodSeconds"))
