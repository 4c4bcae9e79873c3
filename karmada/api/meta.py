"""Kubernetes ``metav1`` types the Karmada API embeds.

Only the fields Karmada's code reads are typed; every other metadata field is
kept as an unknown field, so nothing written by the API server is lost.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from karmada.api._base import CRDExtra, Int64, KubeModel, Pattern, Time

ATOMIC_LIST = CRDExtra({"x-kubernetes-list-type": "atomic"})


class OwnerReference(KubeModel):
    """A reference from an object to the object that owns it (garbage collection)."""

    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(KubeModel):
    """``metav1.ObjectMeta``; in CRD schemas this is just ``type: object``."""

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: Time | None = None
    deletion_timestamp: Time | None = None
    deletion_grace_period_seconds: int | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[OwnerReference] | None = None
    finalizers: list[str] | None = None
    managed_fields: list[dict[str, Any]] | None = None


class ListMeta(KubeModel):
    """``metav1.ListMeta`` of a list response."""

    resource_version: str | None = None
    continue_: str | None = Field(default=None, alias="continue")
    remaining_item_count: int | None = None


class LabelSelectorRequirement(KubeModel):
    """One ``key operator values`` term of a label selector."""

    key: str
    operator: str
    values: Annotated[list[str], ATOMIC_LIST] | None = None


class LabelSelector(KubeModel):
    """``metav1.LabelSelector``: matchLabels AND every matchExpressions term."""

    crd_extra: ClassVar[dict[str, Any]] = {"x-kubernetes-map-type": "atomic"}

    match_expressions: Annotated[list[LabelSelectorRequirement], ATOMIC_LIST] | None = None
    match_labels: dict[str, str] | None = None


CONDITION_TYPE_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)
CONDITION_REASON_PATTERN = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"
REASON_FORM = "a CamelCase reason"

ConditionStatus = Literal["True", "False", "Unknown"]


class Condition(KubeModel):
    """``metav1.Condition``, as used in every Karmada status."""

    type: Annotated[str, Pattern(CONDITION_TYPE_PATTERN, "a qualified name"), Field(max_length=316)]
    status: ConditionStatus
    observed_generation: Annotated[Int64, Field(ge=0)] | None = None
    last_transition_time: Time
    reason: Annotated[str, Pattern(CONDITION_REASON_PATTERN, REASON_FORM), Field(min_length=1, max_length=1024)]
    message: Annotated[str, Field(max_length=32768)]
