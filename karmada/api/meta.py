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
    """key is the label key that the selector applies to."""
    operator: str
    """operator represents a key's relationship to a set of values.
    Valid operators are In, NotIn, Exists and DoesNotExist.
    """
    values: Annotated[list[str], ATOMIC_LIST] | None = None
    """values is an array of string values. If the operator is In or NotIn,
    the values array must be non-empty. If the operator is Exists or DoesNotExist,
    the values array must be empty. This array is replaced during a strategic
    merge patch.
    """


class LabelSelector(KubeModel):
    """``metav1.LabelSelector``: matchLabels AND every matchExpressions term."""

    crd_extra: ClassVar[dict[str, Any]] = {"x-kubernetes-map-type": "atomic"}

    match_expressions: Annotated[list[LabelSelectorRequirement], ATOMIC_LIST] | None = None
    """matchExpressions is a list of label selector requirements. The requirements are ANDed."""
    match_labels: dict[str, str] | None = None
    """matchLabels is a map of {key,value} pairs. A single {key,value} in the matchLabels
    map is equivalent to an element of matchExpressions, whose key field is "key", the
    operator is "In", and the values array contains only "value". The requirements are ANDed.
    """


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
    """type of condition in CamelCase or in foo.example.com/CamelCase."""
    status: ConditionStatus
    """status of the condition, one of True, False, Unknown."""
    observed_generation: Annotated[Int64, Field(ge=0)] | None = None
    """observedGeneration represents the .metadata.generation that the condition was set based upon.
    For instance, if .metadata.generation is currently 12, but the .status.conditions[x].observedGeneration is 9, the
    condition is out of date
    with respect to the current state of the instance.
    """
    last_transition_time: Time
    """lastTransitionTime is the last time the condition transitioned from one status to another.
    This should be when the underlying condition changed.  If that is not known, then using the time when the API
    field changed is acceptable.
    """
    reason: Annotated[str, Pattern(CONDITION_REASON_PATTERN, REASON_FORM), Field(min_length=1, max_length=1024)]
    """reason contains a programmatic identifier indicating the reason for the condition's last transition.
    Producers of specific condition types may define expected values and meanings for this field,
    and whether the values are considered a guaranteed API.
    The value should be a CamelCase string.
    This field may not be empty.
    """
    message: Annotated[str, Field(max_length=32768)]
    """message is a human readable message indicating details about the transition.
    This may be an empty string.
    """
