"""The registry of the control plane's controllers, by Karmada's names.

Each controller module has a ``setup(context)`` that asks the shared
:class:`~karmada.kube.informer_factory.InformerFactory` for the caches it reads,
declares how their events map to the keys it reconciles
(:meth:`~karmada.kube.controller.Controller.watches`), and returns its
reconcile loops; long-running loops that are not keyed (a health monitor) go to
``context.background``. The manager builds every enabled controller, starts
the caches, waits for them to sync, then starts the loops, all while leading.
Adding a controller is one module and one line below. A setup registered
under several names runs once when any of them is enabled, and reads which
from ``context.options.controllers`` (Push clusters' ``clusterStatus``,
``execution`` and ``workStatus`` share one set of member caches).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from controlplane import (
    agent_approver,
    application_failover,
    binding_controller,
    binding_status,
    cluster_controller,
    cluster_taint_policy,
    dependencies_distributor,
    detector,
    graceful_eviction,
    namespace_sync,
    push_members,
    scheduler_controller,
    taint_manager,
)
from controlplane.context import Context
from controlplane.options import Options
from karmada.kube.controller import Controller

Setup = Callable[[Context], list[Controller[Any]]]


def _cluster(context: Context) -> list[Controller[Any]]:
    """Karmada's cluster controller starts the taint manager beside it."""
    return [*cluster_controller.setup(context), *taint_manager.setup(context)]


REGISTRY: dict[str, Setup] = {
    "cluster": _cluster,
    "agentcsrapproving": agent_approver.setup,
    "detector": detector.setup,
    "scheduler": scheduler_controller.setup,
    "binding": binding_controller.setup,
    "bindingStatus": binding_status.setup,
    "namespace": namespace_sync.setup,
    "clustertaintpolicy": cluster_taint_policy.setup,
    "gracefulEviction": graceful_eviction.setup,
    "applicationFailover": application_failover.setup,
    "clusterStatus": push_members.setup,
    "execution": push_members.setup,
    "workStatus": push_members.setup,
}

# Controllers Karmada starts by feature gate, not by --controllers: name -> (gate, setup)
GATED: dict[str, tuple[str, Setup]] = {
    "dependencies-distributor": ("PropagateDeps", dependencies_distributor.setup),
}


def enabled(options: Options) -> list[str]:
    """The controllers to run: those ``--controllers`` names, then the gated ones whose gate is on."""
    return [*options.controllers, *(name for name, (gate, _) in GATED.items() if options.feature_enabled(gate))]


def setup_of(name: str) -> Setup:
    return REGISTRY[name] if name in REGISTRY else GATED[name][1]
