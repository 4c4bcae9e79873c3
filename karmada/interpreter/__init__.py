"""Per-kind knowledge: replicas, revision, retention, dependencies, health, status.

:class:`NativeInterpreter` answers for the kinds Karmada knows natively and
says which operations it has a hook for; user customizations (Lua) will be
layered above it with the same interface.
"""

from karmada.interpreter.native import NativeInterpreter, Operation

__all__ = ["NativeInterpreter", "Operation"]
