"""The built-in interpreter: one entry point per Karmada interpreter operation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from karmada.interpreter import dependencies, health, replicas, retain, status

if TYPE_CHECKING:  # the API models load pydantic, which an agent never needs (its memory)
    from karmada.api.binding import AggregatedStatusItem, ReplicaRequirements
    from karmada.api.interpreter import DependentObjectReference


class Operation(StrEnum):
    """Karmada's interpreter operations."""

    INTERPRET_REPLICA = "InterpretReplica"
    INTERPRET_COMPONENT = "InterpretComponent"
    REVISE_REPLICA = "ReviseReplica"
    RETAIN = "Retain"
    AGGREGATE_STATUS = "AggregateStatus"
    INTERPRET_STATUS = "InterpretStatus"
    INTERPRET_HEALTH = "InterpretHealth"
    INTERPRET_DEPENDENCY = "InterpretDependency"


_HOOKS: dict[Operation, set[tuple[str, str]]] = {
    Operation.INTERPRET_REPLICA: replicas.REPLICA_KINDS,
    Operation.REVISE_REPLICA: replicas.REVISE_KINDS,
    Operation.RETAIN: retain.RETAIN_KINDS,
    Operation.AGGREGATE_STATUS: status.AGGREGATE_KINDS,
    Operation.INTERPRET_HEALTH: health.HEALTH_KINDS,
    Operation.INTERPRET_DEPENDENCY: dependencies.DEPENDENCY_KINDS,
}


def _gvk(obj: Mapping[str, Any]) -> tuple[str, str]:
    return str(obj.get("apiVersion", "")), str(obj.get("kind", ""))


class NativeInterpreter:
    """Karmada's native (Go) interpreter rules, as pure functions over JSON objects."""

    def hook_enabled(self, api_version: str, kind: str, operation: Operation) -> bool:
        """Whether this interpreter answers ``operation`` for the kind.

        InterpretStatus answers for every kind (the whole status by default).
        """
        if operation is Operation.INTERPRET_STATUS:
            return True
        return (api_version, kind) in _HOOKS.get(operation, set())

    def get_replicas(self, obj: Mapping[str, Any]) -> tuple[int, ReplicaRequirements | None]:
        """InterpretReplica."""
        return replicas.get_replicas(obj)

    def revise_replica(self, obj: Mapping[str, Any], count: int) -> dict[str, Any]:
        """ReviseReplica."""
        return replicas.revise_replica(obj, count)

    def retain(self, desired: Mapping[str, Any], observed: Mapping[str, Any]) -> dict[str, Any]:
        """Retain (kinds without a hook are written as desired)."""
        if not self.hook_enabled(*_gvk(desired), Operation.RETAIN):
            return dict(desired)
        return retain.retain(desired, observed)

    def get_dependencies(self, obj: Mapping[str, Any]) -> list[DependentObjectReference]:
        """InterpretDependency (sorted)."""
        return dependencies.get_dependencies(obj)

    def interpret_health(self, obj: Mapping[str, Any]) -> bool:
        """InterpretHealth (kinds without a rule are healthy)."""
        return health.interpret_health(obj)

    def reflect_status(self, obj: Mapping[str, Any]) -> dict[str, Any] | None:
        """InterpretStatus."""
        return status.reflect_status(obj)

    def aggregate_status(
        self, template: Mapping[str, Any], items: Sequence[AggregatedStatusItem], now: str
    ) -> dict[str, Any]:
        """AggregateStatus."""
        return status.aggregate_status(template, items, now)
