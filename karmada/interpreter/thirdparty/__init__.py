"""Karmada's default customizations for well-known third-party kinds, as this project's Lua.

One ``.lua`` file per kind; its first line names the target
(``-- target: apps.kruise.io/v1alpha1 CloneSet``) and it defines the contract
functions it answers (``GetReplicas``, ``InterpretHealth``, ...). ``_lib.lua``
holds helpers shared by every file and is compiled into each script.
"""

from __future__ import annotations

import functools
import re
from importlib import resources

from karmada.interpreter.native import Operation

_TARGET = re.compile(r"^-- target: (\S+) (\S+)\s*$", re.MULTILINE)
_FUNCTION = re.compile(r"^function (\w+)\(", re.MULTILINE)
FUNCTIONS = {
    "GetReplicas": Operation.INTERPRET_REPLICA,
    "GetComponents": Operation.INTERPRET_COMPONENT,
    "ReviseReplica": Operation.REVISE_REPLICA,
    "Retain": Operation.RETAIN,
    "AggregateStatus": Operation.AGGREGATE_STATUS,
    "ReflectStatus": Operation.INTERPRET_STATUS,
    "InterpretHealth": Operation.INTERPRET_HEALTH,
    "GetDependencies": Operation.INTERPRET_DEPENDENCY,
}


@functools.cache
def load() -> tuple[tuple[tuple[str, str], Operation, str, str], ...]:
    """``((apiVersion, kind), operation, script, origin)`` for every shipped hook."""
    folder = resources.files(__package__)
    library = (folder / "_lib.lua").read_text()
    hooks = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".lua") or entry.name.startswith("_"):
            continue
        text = entry.read_text()
        target = _TARGET.search(text)
        if target is None:
            raise ValueError(f"thirdparty/{entry.name}: no '-- target: <apiVersion> <kind>' line")
        source = library + "\n" + text
        origin = f"thirdparty/{entry.name}"
        for name in _FUNCTION.findall(text):
            if name in FUNCTIONS:
                hooks.append(((target.group(1), target.group(2)), FUNCTIONS[name], source, origin))
    return tuple(hooks)
