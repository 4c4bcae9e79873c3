"""What a controller's ``setup`` gets from the manager (see :mod:`controlplane.controllers`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from controlplane.options import Options
from karmada.kube import EventRecorder, KubeClient, ResourceMapper
from karmada.kube.informer_factory import InformerFactory


@dataclass
class Context:
    """What a controller's setup may use."""

    client: KubeClient
    informers: InformerFactory
    recorder: EventRecorder
    options: Options
    # one discovery cache (apiVersion + kind -> resource) for every controller
    mapper: ResourceMapper = field(default=None)  # type: ignore[assignment]
    # (name, loop) pairs the manager runs under its supervisor once the caches are synced
    background: list[tuple[str, Callable[[], Awaitable[None]]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.mapper is None:
            self.mapper = ResourceMapper(self.client)
