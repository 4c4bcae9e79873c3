"""Kubernetes ``corev1`` types the Karmada API embeds (taints, tolerations, node selectors)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from karmada.api._base import Int64, KubeModel, Time
from karmada.api.meta import ATOMIC_LIST

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


class Taint(KubeModel):
    """``corev1.Taint`` on a Cluster; ``effect`` is NoSchedule, PreferNoSchedule or NoExecute."""

    key: str
    value: str | None = None
    effect: str
    time_added: Time | None = None


class Toleration(KubeModel):
    """``corev1.Toleration`` (operator Exists or Equal; empty key + Exists tolerates all)."""

    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None
    toleration_seconds: Int64 | None = None


class NodeSelectorRequirement(KubeModel):
    """``key operator values``; also the term type of Karmada's cluster fieldSelector."""

    key: str
    operator: str
    values: Annotated[list[str], ATOMIC_LIST] | None = None


class NodeSelectorTerm(KubeModel):
    """One ORed term of a node selector."""

    crd_extra: ClassVar[dict[str, Any]] = {"x-kubernetes-map-type": "atomic"}

    match_expressions: Annotated[list[NodeSelectorRequirement], ATOMIC_LIST] | None = None
    match_fields: Annotated[list[NodeSelectorRequirement], ATOMIC_LIST] | None = None


class NodeSelector(KubeModel):
    """``corev1.NodeSelector``: required node affinity of a workload's pods."""

    crd_extra: ClassVar[dict[str, Any]] = {"x-kubernetes-map-type": "atomic"}

    node_selector_terms: Annotated[list[NodeSelectorTerm], ATOMIC_LIST]
