"""``kubectl karmada interpret``: one interpreter operation run offline on objects from files,
with the results karmadactl's ``interpret`` prints (names such as ``replica``, ``retained``).

:func:`run_operation` takes any interpreter with :class:`~karmada.interpreter.NativeInterpreter`'s
methods (:class:`Interpreter`), so a customization-aware interpreter that also loads
ResourceInterpreterCustomizations plugs in unchanged. As in karmadactl, an operation the
interpreter has no rule for that kind is an error ("rule is not enabled").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from karmada.api.binding import AggregatedStatusItem, ReplicaRequirements
from karmada.api.errors import APIValidationError
from karmada.api.interpreter import DependentObjectReference
from karmada.interpreter.native import Operation

Obj = dict[str, Any]


class Interpreter(Protocol):
    """What the command needs of an interpreter (the native one, or one with customizations)."""

    def hook_enabled(self, api_version: str, kind: str, operation: Operation) -> bool: ...
    def get_replicas(self, obj: Mapping[str, Any]) -> tuple[int, ReplicaRequirements | None]: ...
    def revise_replica(self, obj: Mapping[str, Any], count: int) -> Obj: ...
    def retain(self, desired: Mapping[str, Any], observed: Mapping[str, Any]) -> Obj: ...
    def get_dependencies(self, obj: Mapping[str, Any]) -> list[DependentObjectReference]: ...
    def interpret_health(self, obj: Mapping[str, Any]) -> bool: ...
    def reflect_status(self, obj: Mapping[str, Any]) -> Obj | None: ...
    def aggregate_status(self, template: Mapping[str, Any], items: Sequence[AggregatedStatusItem], now: str) -> Obj: ...


class InterpretError(ValueError):
    """The operation cannot run on these inputs; the message says which flag or object."""


def parse_operation(name: str) -> Operation:
    """``InterpretReplica`` or karmadactl's ``interpretReplica`` (any case)."""
    for operation in Operation:
        if operation.value.lower() == name.lower():
            return operation
    names = ", ".join(o.value for o in Operation)
    raise InterpretError(f"operation {name} is not supported. Use one of: {names}")


def status_items(documents: Sequence[Any]) -> list[AggregatedStatusItem]:
    """``--status``: AggregatedStatusItems, as documents or lists of them."""
    items: list[AggregatedStatusItem] = []
    for document in documents:
        for index, raw in enumerate(document if isinstance(document, list) else [document]):
            try:
                items.append(AggregatedStatusItem.from_dict(raw, path=f"status[{index}]"))
            except APIValidationError as exc:
                raise InterpretError(f"--status: {exc}") from None
    return items


def run_operation(
    interpreter: Interpreter,
    operation: Operation,
    obj: Mapping[str, Any],
    *,
    observed: Mapping[str, Any] | None = None,
    status: Sequence[AggregatedStatusItem] | None = None,
    replica: int | None = None,
    now: str = "",
) -> list[tuple[str, Any]]:
    """The named results of ``operation`` on ``obj`` (the template or desired object)."""
    api_version, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
    if not api_version or not kind:
        raise InterpretError("the object must have apiVersion and kind")
    if not interpreter.hook_enabled(api_version, kind, operation):
        raise InterpretError(f"{operation.value} rule is not enabled for {api_version}/{kind}")
    if operation is Operation.INTERPRET_REPLICA:
        count, requires = interpreter.get_replicas(obj)
        return [("replica", count), ("requires", requires.to_dict() if requires is not None else None)]
    if operation is Operation.REVISE_REPLICA:
        if replica is None:
            raise InterpretError("--desired-replica is required for ReviseReplica")
        if replica < 0:
            raise InterpretError("--desired-replica must not be negative")
        return [("revised", interpreter.revise_replica(obj, replica))]
    if operation is Operation.RETAIN:
        if observed is None:
            raise InterpretError("--observed is required for Retain (the object as it is in the member cluster)")
        return [("retained", interpreter.retain(obj, observed))]
    if operation is Operation.AGGREGATE_STATUS:
        if status is None:
            raise InterpretError("--status is required for AggregateStatus (the AggregatedStatusItems of the members)")
        return [("aggregatedStatus", interpreter.aggregate_status(obj, status, now))]
    if operation is Operation.INTERPRET_STATUS:
        return [("status", interpreter.reflect_status(obj))]
    if operation is Operation.INTERPRET_HEALTH:
        return [("healthy", interpreter.interpret_health(obj))]
    return [("dependencies", [d.to_dict() for d in interpreter.get_dependencies(obj)])]
