"""The interpreter the controllers use: customizations, then third-party, then native.

:class:`CustomizedInterpreter` has :class:`NativeInterpreter`'s methods. For
each call the first layer with a hook for the kind answers, as in Karmada:
a ResourceInterpreterCustomization's Lua script, then this project's shipped
third-party scripts (``thirdparty/``), then the native rules. Customizations
arrive through :meth:`CustomizedInterpreter.on_event` (an informer handler),
so a new or changed customization applies to the next call, without a
restart. Scripts are compiled once per script text; a script that fails
raises :class:`~karmada.interpreter.lua.LuaError` (a ``ValueError``) naming
the customization, so only the objects it interprets fail.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from karmada import quantity
from karmada.interpreter.lua import EMPTY, LuaError, LuaScript, resolve_empty
from karmada.interpreter.native import NativeInterpreter, Operation

if TYPE_CHECKING:  # the API models load pydantic, which an agent never needs (its memory)
    from karmada.api.binding import AggregatedStatusItem, ReplicaRequirements
    from karmada.api.interpreter import DependentObjectReference

Obj = dict[str, Any]


@dataclass(frozen=True)
class Rule:
    """Where an operation's script lives in a customization, and the function it defines."""

    field: str
    function: str
    results: int


RULES: dict[Operation, Rule] = {
    Operation.INTERPRET_REPLICA: Rule("replicaResource", "GetReplicas", 2),
    Operation.INTERPRET_COMPONENT: Rule("componentResource", "GetComponents", 1),
    Operation.REVISE_REPLICA: Rule("replicaRevision", "ReviseReplica", 1),
    Operation.RETAIN: Rule("retention", "Retain", 1),
    Operation.AGGREGATE_STATUS: Rule("statusAggregation", "AggregateStatus", 1),
    Operation.INTERPRET_STATUS: Rule("statusReflection", "ReflectStatus", 1),
    Operation.INTERPRET_HEALTH: Rule("healthInterpretation", "InterpretHealth", 1),
    Operation.INTERPRET_DEPENDENCY: Rule("dependencyInterpretation", "GetDependencies", 1),
}

COMPILED_SCRIPTS = 512  # script versions kept compiled; older ones are compiled again if asked for
_compiled: OrderedDict[str, LuaScript] = OrderedDict()
_compile_lock = threading.Lock()


def compiled(source: str, name: str) -> LuaScript:
    """The compiled script for this text (compiled on first use, then shared)."""
    with _compile_lock:
        script = _compiled.get(source)
        if script is None:
            script = _compiled[source] = LuaScript(source, name)
            while len(_compiled) > COMPILED_SCRIPTS:
                _compiled.popitem(last=False)
        else:
            _compiled.move_to_end(source)
        return script


@dataclass(frozen=True)
class Hook:
    """One script answering one operation for one kind."""

    source: str
    origin: str  # e.g. ResourceInterpreterCustomization(my-rules), for error messages

    def call(self, operation: Operation, *args: Any) -> tuple[Any, ...]:
        rule = RULES[operation]
        try:
            return compiled(self.source, self.origin).call(rule.function, rule.results, *args)
        except LuaError as exc:
            raise LuaError(f"{self.origin} {operation.value}: {exc}") from exc


Target = tuple[str, str]  # (apiVersion, kind)


def hooks_of(customization: Mapping[str, Any]) -> tuple[Target, dict[Operation, str]]:
    """The target and per-operation script text of a ResourceInterpreterCustomization object."""
    spec = customization.get("spec") or {}
    target = spec.get("target") or {}
    rules = spec.get("customizations") or {}
    scripts: dict[Operation, str] = {}
    for operation, rule in RULES.items():
        source = (rules.get(rule.field) or {}).get("luaScript")
        if source:
            scripts[operation] = str(source)
    return (str(target.get("apiVersion", "")), str(target.get("kind", ""))), scripts


def _quantities(requirement: Any) -> Any:
    # Lua has only numbers: 0.5 cpu reads as a quantity, as Go's Quantity reads a JSON number
    if isinstance(requirement, dict) and isinstance(requirement.get("resourceRequest"), dict):
        request = requirement["resourceRequest"]
        for name, value in request.items():
            if isinstance(value, float):
                request[name] = quantity.format_quantity(quantity.Fraction(str(value)))
    return requirement


def _gvk(obj: Mapping[str, Any]) -> Target:
    return str(obj.get("apiVersion", "")), str(obj.get("kind", ""))


def _object(value: Any, what: str, hook: Hook, operation: Operation, *references: Any) -> Obj:
    if not isinstance(value, (dict, type(EMPTY))):
        raise LuaError(
            f"{hook.origin} {operation.value}: expect the returned {what} type is table but got {type(value).__name__}"
        )
    result = resolve_empty(value, references)
    assert isinstance(result, dict)
    return result


class CustomizedInterpreter:
    """NativeInterpreter's interface over customizations, third-party scripts and native rules."""

    def __init__(self, native: NativeInterpreter | None = None, *, thirdparty: bool = True) -> None:
        self.native = native or NativeInterpreter()
        self.watched: Any = None  # the informer feeding on_event, when one does (its owner's to wait for)
        self._customizations: dict[str, tuple[Target, dict[Operation, str]]] = {}
        self._index: dict[tuple[Target, Operation], Hook] = {}
        self._thirdparty: dict[tuple[Target, Operation], Hook] = {}
        if thirdparty:
            from karmada.interpreter.thirdparty import load

            for target, operation, source, origin in load():
                self._thirdparty[(target, operation)] = Hook(source, origin)

    # -- customizations --------------------------------------------------
    def on_event(self, event: str, obj: Obj, old: Obj | None = None) -> None:
        """Informer handler for ResourceInterpreterCustomizations."""
        name = str((obj.get("metadata") or {}).get("name", ""))
        if event == "DELETED":
            self.remove(name)
        else:
            self.apply(obj)

    def apply(self, customization: Mapping[str, Any]) -> None:
        """Add or replace a customization (by name)."""
        name = str((customization.get("metadata") or {}).get("name", ""))
        self._customizations[name] = hooks_of(customization)
        self._reindex()

    def remove(self, name: str) -> None:
        """Forget a customization."""
        if self._customizations.pop(name, None) is not None:
            self._reindex()

    def _reindex(self) -> None:
        # several customizations of one kind: the first by name with a script for the operation wins
        index: dict[tuple[Target, Operation], Hook] = {}
        for name in sorted(self._customizations):
            target, scripts = self._customizations[name]
            for operation, source in scripts.items():
                index.setdefault((target, operation), Hook(source, f"ResourceInterpreterCustomization({name})"))
        self._index = index

    def customization(self, api_version: str, kind: str, operation: Operation) -> Hook | None:
        """The ResourceInterpreterCustomization's hook alone (it answers before any interpreter webhook)."""
        return self._index.get(((api_version, kind), operation))

    def hook(self, api_version: str, kind: str, operation: Operation) -> Hook | None:
        """The Lua hook answering ``operation`` for the kind (customization, then third-party)."""
        key = ((api_version, kind), operation)
        return self._index.get(key) or self._thirdparty.get(key)

    # -- NativeInterpreter's interface -----------------------------------
    def hook_enabled(self, api_version: str, kind: str, operation: Operation) -> bool:
        """Whether some layer answers ``operation`` for the kind."""
        if self.hook(api_version, kind, operation) is not None:
            return True
        return self.native.hook_enabled(api_version, kind, operation)

    def get_replicas(self, obj: Mapping[str, Any]) -> tuple[int, ReplicaRequirements | None]:
        """InterpretReplica: ``GetReplicas(obj)`` returns ``replica, requirement``."""
        hook = self.hook(*_gvk(obj), Operation.INTERPRET_REPLICA)
        if hook is None:
            return self.native.get_replicas(obj)
        replicas, requirement = hook.call(Operation.INTERPRET_REPLICA, obj)
        if isinstance(replicas, bool) or not isinstance(replicas, (int, float)):
            raise LuaError(f"{hook.origin} InterpretReplica: result type {type(replicas).__name__} is not number")
        if requirement is None:
            return int(replicas), None
        if not isinstance(requirement, (dict, type(EMPTY))):
            raise LuaError(
                f"{hook.origin} InterpretReplica: expect the returned requires type is table "
                f"but got {type(requirement).__name__}"
            )
        from karmada.api.binding import ReplicaRequirements

        return int(replicas), ReplicaRequirements.from_dict(_quantities(resolve_empty(requirement)))

    def get_components(self, obj: Mapping[str, Any]) -> list[Obj]:
        """InterpretComponent: ``GetComponents(obj)`` returns ``{name, replicas, replicaRequirements}`` entries."""
        hook = self.hook(*_gvk(obj), Operation.INTERPRET_COMPONENT)
        if hook is None:
            return []
        (components,) = hook.call(Operation.INTERPRET_COMPONENT, obj)
        if components is None or components is EMPTY:
            return []
        if isinstance(components, dict):
            components = list(components.values())
        if not isinstance(components, list):
            raise LuaError(
                f"{hook.origin} InterpretComponent: expected result type 'table' or 'nil' "
                f"from GetComponents, but got '{type(components).__name__}'"
            )
        result = resolve_empty(components, top="list")
        assert isinstance(result, list)
        for component in result:
            if isinstance(component, dict):
                _quantities(component.get("replicaRequirements"))
        return result

    def revise_replica(self, obj: Mapping[str, Any], count: int) -> Obj:
        """ReviseReplica: ``ReviseReplica(obj, desiredReplica)`` returns the revised object."""
        hook = self.hook(*_gvk(obj), Operation.REVISE_REPLICA)
        if hook is None:
            return self.native.revise_replica(obj, count)
        (revised,) = hook.call(Operation.REVISE_REPLICA, obj, count)
        return _object(revised, "revised object", hook, Operation.REVISE_REPLICA, obj)

    def retain(self, desired: Mapping[str, Any], observed: Mapping[str, Any]) -> Obj:
        """Retain: ``Retain(desiredObj, observedObj)`` returns the object to apply."""
        hook = self.hook(*_gvk(desired), Operation.RETAIN)
        if hook is None:
            return self.native.retain(desired, observed)
        (retained,) = hook.call(Operation.RETAIN, desired, observed)
        return _object(retained, "retained object", hook, Operation.RETAIN, desired, observed)

    def get_dependencies(self, obj: Mapping[str, Any]) -> list[DependentObjectReference]:
        """InterpretDependency: ``GetDependencies(obj)`` returns DependentObjectReference tables (sorted here)."""
        hook = self.hook(*_gvk(obj), Operation.INTERPRET_DEPENDENCY)
        if hook is None:
            return self.native.get_dependencies(obj)
        (refs,) = hook.call(Operation.INTERPRET_DEPENDENCY, obj)
        if refs is EMPTY:
            return []
        if not isinstance(refs, list):
            raise LuaError(
                f"{hook.origin} InterpretDependency: expect the returned requires type is table "
                f"but got {type(refs).__name__}"
            )
        from karmada.api.interpreter import DependentObjectReference

        try:
            parsed = [DependentObjectReference.from_dict(resolve_empty(r)) for r in refs]
        except ValueError as exc:
            raise LuaError(f"{hook.origin} InterpretDependency: {exc}") from exc
        from karmada.interpreter.dependencies import sort_key

        return sorted(parsed, key=sort_key)

    def interpret_health(self, obj: Mapping[str, Any]) -> bool:
        """InterpretHealth: ``InterpretHealth(observedObj)`` returns a boolean."""
        hook = self.hook(*_gvk(obj), Operation.INTERPRET_HEALTH)
        if hook is None:
            return self.native.interpret_health(obj)
        (healthy,) = hook.call(Operation.INTERPRET_HEALTH, obj)
        if not isinstance(healthy, bool):
            raise LuaError(f"{hook.origin} InterpretHealth: result type {type(healthy).__name__} is not bool")
        return healthy

    def reflect_status(self, obj: Mapping[str, Any]) -> Obj | None:
        """InterpretStatus: ``ReflectStatus(observedObj)`` returns the status table."""
        hook = self.hook(*_gvk(obj), Operation.INTERPRET_STATUS)
        if hook is None:
            return self.native.reflect_status(obj)
        (reflected,) = hook.call(Operation.INTERPRET_STATUS, obj)
        return _object(reflected, "status", hook, Operation.INTERPRET_STATUS)

    def aggregate_status(self, template: Mapping[str, Any], items: Sequence[AggregatedStatusItem], now: str) -> Obj:
        """AggregateStatus: ``AggregateStatus(desiredObj, statusItems)`` returns the object with its status."""
        hook = self.hook(*_gvk(template), Operation.AGGREGATE_STATUS)
        if hook is None:
            return self.native.aggregate_status(template, items, now)
        entries = [item.to_dict() for item in items]
        # Karmada passes nil when nothing is aggregated yet
        (aggregated,) = hook.call(Operation.AGGREGATE_STATUS, template, entries or None)
        return _object(aggregated, "aggregated object", hook, Operation.AGGREGATE_STATUS)
