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
    """Key is the taint key that the toleration applies to. Empty means match all taint keys.
    If the key is empty, operator must be Exists; this combination means to match all values and all keys.
    """
    operator: str | None = None
    """Operator represents a key's relationship to the value.
    Valid operators are Exists, Equal, Lt, and Gt. Defaults to Equal.
    Exists is equivalent to wildcard for value, so that a pod can
    tolerate all taints of a particular category.
    Lt and Gt perform numeric comparisons (requires feature gate TaintTolerationComparisonOperators).
    """
    value: str | None = None
    """Value is the taint value the toleration matches to.
    If the operator is Exists, the value should be empty, otherwise just a regular string.
    """
    effect: str | None = None
    """Effect indicates the taint effect to match. Empty means match all taint effects.
    When specified, allowed values are NoSchedule, PreferNoSchedule and NoExecute.
    """
    toleration_seconds: Int64 | None = None
    """TolerationSeconds represents the period of time the toleration (which must be
    of effect NoExecute, otherwise this field is ignored) tolerates the taint. By default,
    it is not set, which means tolerate the taint forever (do not evict). Zero and
    negative values will be treated as 0 (evict immediately) by the system.
    """


class NodeSelectorRequirement(KubeModel):
    """``key operator values``; also the term type of Karmada's cluster fieldSelector."""

    key: str
    """The label key that the selector applies to."""
    operator: str
    """Represents a key's relationship to a set of values.
    Valid operators are In, NotIn, Exists, DoesNotExist. Gt, and Lt.
    """
    values: Annotated[list[str], ATOMIC_LIST] | None = None
    """An array of string values. If the operator is In or NotIn,
    the values array must be non-empty. If the operator is Exists or DoesNotExist,
    the values array must be empty. If the operator is Gt or Lt, the values
    array must have a single element, which will be interpreted as an integer.
    This array is replaced during a strategic merge patch.
    """


class NodeSelectorTerm(KubeModel):
    """One ORed term of a node selector."""

    crd_extra: ClassVar[dict[str, Any]] = {"x-kubernetes-map-type": "atomic"}

    match_expressions: Annotated[list[NodeSelectorRequirement], ATOMIC_LIST] | None = None
    """A list of node selector requirements by node's labels."""
    match_fields: Annotated[list[NodeSelectorRequirement], ATOMIC_LIST] | None = None
    """A list of node selector requirements by node's fields."""


class NodeSelector(KubeModel):
    """``corev1.NodeSelector``: required node affinity of a workload's pods."""

    crd_extra: ClassVar[dict[str, Any]] = {"x-kubernetes-map-type": "atomic"}

    node_selector_terms: Annotated[list[NodeSelectorTerm], ATOMIC_LIST]
    """Required. A list of node selector terms. The terms are ORed."""
