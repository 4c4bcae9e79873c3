"""Per-kind knowledge: replicas, revision, retention, dependencies, health, status.

:class:`NativeInterpreter` answers for the kinds Karmada knows natively and
says which operations it has a hook for; user customizations (Lua) will be
layered above it with the same interface. The pure rule modules (``health``,
``retain``, ``status``) can be imported alone, without the pydantic models
(the agent does so).
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from karmada.interpreter.native import NativeInterpreter, Operation

__all__ = ["NativeInterpreter", "Operation"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from karmada.interpreter import native

        value = getattr(native, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'karmada.interpreter' has no attribute {name!r}")
