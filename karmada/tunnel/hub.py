"""The control plane's end of the tunnels: one live link per cluster.

An agent's WebSocket arrives already authenticated (the TLS layer checked its
client certificate); :meth:`Hub.serve` runs the link until it ends. A new
tunnel of a cluster replaces the old one (an agent restarted, or its standby
took over): requests go to the newest, streams open on the old one finish
there.
"""

from __future__ import annotations

import logging
from typing import Any

from karmada.tunnel.link import Link

log = logging.getLogger("karmada.tunnel")


class Hub:
    def __init__(self) -> None:
        self._links: dict[str, Link] = {}

    def link(self, cluster: str) -> Link | None:
        link = self._links.get(cluster)
        return None if link is None or link.closed.is_set() else link

    async def serve(self, cluster: str, carrier: Any) -> None:
        """Run one agent's tunnel until it closes."""
        link = Link(carrier, client=True, name=cluster)
        previous = self._links.get(cluster)
        self._links[cluster] = link
        if previous is not None:
            log.info("cluster proxy: a new tunnel of %s replaces the old one", cluster)
        log.info("cluster proxy: tunnel of %s open", cluster)
        try:
            await link.run()
        finally:
            if self._links.get(cluster) is link:
                del self._links[cluster]
            log.info("cluster proxy: tunnel of %s closed", cluster)

    async def close(self) -> None:
        for link in list(self._links.values()):
            await link.aclose()
        self._links.clear()
