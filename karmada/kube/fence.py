"""A write fence: the writes of a client stop when its process's Lease is no longer held.

A leader that loses its Lease (another holder, or no successful renewal within the
renew deadline) must not write once a new leader may: client-go's elector ends the
term and controller-runtime ends the process. Cancelling the term's tasks is not
enough here: a write may wait in a 429 retry, for a pooled connection, or behind a
loop that a long controller step holds. So the elector (on a thread of its own)
extends the fence to ``renewal sent + renew deadline`` after each successful
renewal and revokes it when the term ends; the client checks it before sending each
mutating request and bounds the request by the fence's deadline. A new candidate
can take over only a lease duration after it observed the last renewal, later than
the renew deadline, so no write of the old term reaches the server after the new
term starts.

Plain attributes set on one thread and read on another (each store is atomic);
times are ``time.monotonic()``, the clock of every asyncio loop here.
"""

from __future__ import annotations

import math
import time

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
FENCED = "LeaseNotHeld"
"""The reason of a :class:`~karmada.kube.client.KubeError` (status 0) for a write the fence kept back."""


class WriteFence:
    """Writes are allowed until a deadline the holder of Lease ``lease`` keeps extending."""

    def __init__(self, lease: str) -> None:
        self.lease = lease
        self._until = -math.inf
        self._revoked = False

    def extend(self, until: float) -> None:
        """A renewal sent succeeded: writes may go on until ``until`` (monotonic seconds)."""
        if not self._revoked:
            self._until = max(self._until, until)

    def revoke(self) -> None:
        """The term ended: no write from now on, whatever the deadline."""
        self._revoked = True
        self._until = -math.inf

    def remaining(self) -> float:
        """Seconds writes may still be sent (0 or less: none)."""
        return -math.inf if self._revoked else self._until - time.monotonic()

    def refusal(self, method: str, path: str) -> str | None:
        """Why a request must not be sent now, or None when it may be."""
        if method not in WRITE_METHODS or self.remaining() > 0:
            return None
        return (
            f"{method} {path}: not sent, this process no longer holds Lease {self.lease} (lost or not renewed in time)"
        )
