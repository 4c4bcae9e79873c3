"""A sandboxed Lua 5.1 for ResourceInterpreterCustomization scripts.

Karmada runs customization scripts in gopher-lua (Lua 5.1); :class:`LuaScript`
runs them in the Lua 5.1 that ``lupa`` embeds, with the same environment: the
base, table, string, math and (time-only) os libraries, ``require("kube")``
and nothing else; ``dofile``, ``loadstring``, ``setmetatable`` and the other
escape hatches raise Karmada's message. Each script is compiled once (one Lua
state per script version); each call runs the compiled chunk in a fresh
global table, so calls cannot leak state into each other, under a wall-clock
limit and the state's memory limit.

Values cross as JSON does in Karmada: objects become tables, arrays 1-based
tables, integral numbers come back as ints. An empty Lua table is ambiguous
(``{}`` or ``[]``); as in Karmada, the kind of an empty field is taken from
the reference objects (the inputs) and an empty field they do not have is
dropped.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

import lupa.lua51 as lupa  # type: ignore[import-untyped,unused-ignore]

from karmada import quantity
from karmada.interpreter.dependencies import pod_dependencies, sort_key
from karmada.interpreter.replicas import replica_requirements

CALL_TIMEOUT = 1.0  # seconds per call, Karmada's
MEMORY_LIMIT = 64 * 1024 * 1024  # bytes per script state
_HOOK_EVERY = 1000  # instructions between two clock checks

DISABLED = (
    "collectgarbage",
    "dofile",
    "getfenv",
    "getmetatable",
    "load",
    "loadfile",
    "loadstring",
    "rawequal",
    "rawget",
    "rawset",
    "setfenv",
    "setmetatable",
    "module",
    "newproxy",
)


class LuaError(ValueError):
    """A script failed to compile or run, ran out of time or memory, or returned the wrong type."""


# The trusted half of the sandbox: it keeps the real functions as upvalues and
# hands scripts only the safe ones.
_BOOTSTRAP = r"""
local kube, clock, timeout, every, disabled = ...
local setfenv, setmetatable, pcall, error, type, rawget = setfenv, setmetatable, pcall, error, type, rawget
local sethook, select, unpack, tostring = debug.sethook, select, unpack, tostring
local create, resume = coroutine.create, coroutine.resume
local function copy(t, names)
  local out = {}
  for _, n in ipairs(names) do out[n] = t[n] end
  return out
end
local base = copy(_G, {"assert", "error", "ipairs", "next", "pairs", "print", "select",
  "tonumber", "tostring", "type", "unpack", "_VERSION"})
base.string = copy(string, {"byte", "char", "find", "format", "gmatch", "gsub", "len", "lower",
  "match", "rep", "reverse", "sub", "upper"})
base.table = copy(table, {"concat", "insert", "maxn", "remove", "sort", "getn"})
base.math = copy(math, {"abs", "acos", "asin", "atan", "atan2", "ceil", "cos", "cosh", "deg", "exp",
  "floor", "fmod", "frexp", "huge", "ldexp", "log", "log10", "max", "min", "modf", "pi", "pow",
  "rad", "random", "randomseed", "sin", "sinh", "sqrt", "tan", "tanh"})
base.os = copy(os, {"clock", "date", "difftime", "time"})
for _, n in ipairs(disabled) do
  base[n] = function()
    error("call function " .. n .. " is not supported in karmada customized resourceinterpreter.", 2)
  end
end
base.require = function(name)
  if name == "kube" then return kube end
  error("module '" .. tostring(name) .. "' not found", 2)
end
local meta = {__index = base}
local expired, deadline = false, 0
local function hook()
  if expired or clock() > deadline then
    expired = true
    sethook(hook, "", 1)  -- from now on every instruction fails, inside a pcall or not
    error("script timed out after " .. timeout .. "s", 0)
  end
end
-- a script's pcall cannot swallow the timeout
local function checked(ok, ...)
  if expired then error("script timed out after " .. timeout .. "s", 0) end
  return ok, ...
end
base.pcall = function(...) return checked(pcall(...)) end
-- each call runs in its own coroutine: hooks are per coroutine, so the runner itself is never hooked
return function(chunk, fname, nrets, ...)
  local env = setmetatable({}, meta)
  env._G = env
  setfenv(chunk, env)
  local args = {n = select("#", ...), ...}
  local co = create(function()
    chunk()
    local f = rawget(env, fname)
    if f == nil then error("not found function " .. fname, 0) end
    if type(f) ~= "function" then error(fname .. " is not a function: " .. type(f), 0) end
    return f(unpack(args, 1, args.n))
  end)
  expired, deadline = false, clock() + timeout
  sethook(co, hook, "", every)
  local packed = {resume(co)}
  if expired then return false, "script timed out after " .. timeout .. "s" end
  return unpack(packed, 1, nrets + 1)
end
"""


def _number(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def to_python(value: Any) -> Any:
    """A Lua value as JSON-shaped Python; empty tables become :data:`EMPTY`."""
    if lupa.lua_type(value) == "table":
        items = list(value.items())
        if not items:
            return EMPTY
        keys = [k for k, _ in items]
        if all(isinstance(k, (int, float)) and not isinstance(k, bool) for k in keys):
            count = len(keys)
            if sorted(int(k) for k in keys) == list(range(1, count + 1)):
                ordered = sorted(items, key=lambda kv: kv[0])
                return [to_python(v) for _, v in ordered]
        return {str(_number(k)): to_python(v) for k, v in items}
    if lupa.lua_type(value) is not None:
        raise LuaError(f"cannot convert a Lua {lupa.lua_type(value)} to JSON")
    return _number(value)


class _Empty:
    """An empty Lua table, before the references say whether it was ``{}`` or ``[]``."""

    def __repr__(self) -> str:
        return "EMPTY"


EMPTY = _Empty()


def _empty_paths(obj: Any, path: tuple[str, ...], lists: set[tuple[str, ...]], dicts: set[tuple[str, ...]]) -> None:
    # paths skip list indices, as Karmada's do: any element's empty field counts for all
    if isinstance(obj, Mapping):
        for key, value in obj.items():
            sub = (*path, str(key))
            if isinstance(value, Mapping) and not value:
                dicts.add(sub)
            elif isinstance(value, list) and not value:
                lists.add(sub)
            else:
                _empty_paths(value, sub, lists, dicts)
    elif isinstance(obj, list):
        for item in obj:
            _empty_paths(item, path, lists, dicts)


def _resolve(value: Any, path: tuple[str, ...], lists: set[tuple[str, ...]], dicts: set[tuple[str, ...]]) -> Any:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            sub = (*path, key)
            if item is EMPTY:
                if sub in dicts:
                    out[key] = {}
                elif sub in lists:
                    out[key] = []
                continue  # an empty field the inputs did not have: dropped
            out[key] = _resolve(item, sub, lists, dicts)
        return out
    if isinstance(value, list):
        return [
            {} if item is EMPTY and path in dicts else [] if item is EMPTY else _resolve(item, path, lists, dicts)
            for item in value
        ]
    return value


def resolve_empty(value: Any, references: Iterable[Any] = (), *, top: str = "object") -> Any:
    """Replace the :data:`EMPTY` markers of a converted result using the reference objects."""
    if value is EMPTY:
        return {} if top == "object" else []
    lists: set[tuple[str, ...]] = set()
    dicts: set[tuple[str, ...]] = set()
    for reference in references:
        _empty_paths(reference, (), lists, dicts)
    return _resolve(value, (), lists, dicts)


# ---- the kube library (Karmada's luavm kube.go, on this project's rules) ----


def _quantity_arg(value: Any) -> quantity.Fraction:
    if value is None:
        return quantity.Fraction(0)
    if not isinstance(value, str):
        raise LuaError(f"bad argument (string expected, got {lupa.lua_type(value) or type(value).__name__})")
    return quantity.parse(value)


class _Kube:
    """``require("kube")``: resourceAdd, accuratePodRequirements, getPodDependencies, getResourceQuantity."""

    def __init__(self, runtime: Any) -> None:
        self.runtime = runtime

    def table(self, value: Any) -> Any:
        if isinstance(value, (dict, list)):
            return self.runtime.table_from(value, recursive=True)
        return value

    def resource_add(self, *values: Any) -> str:
        # as Go's Quantity.Add: a sum still at zero takes the format of what is added to it
        total, binary = quantity.Fraction(0), False
        for value in values:
            amount = _quantity_arg(value)
            if total == 0 and value is not None:
                binary = quantity.is_binary(value)
            total += amount
        return quantity.format_quantity(total, binary=binary)

    def accurate_pod_requirements(self, *args: Any) -> Any:
        if len(args) != 1:
            raise LuaError("getPodRequirements only accepts one argument")
        template = resolve_empty(to_python(args[0]))
        if not isinstance(template, dict):
            raise LuaError("fail to convert lua value to PodTemplateSpec")
        needs = replica_requirements(template.get("spec") or {})
        return self.table(needs.to_dict()) if needs is not None else None

    def get_pod_dependencies(self, *args: Any) -> Any:
        if len(args) != 2:
            raise LuaError("getPodDependencies only accepts two argument")
        template = resolve_empty(to_python(args[0]))
        if not isinstance(template, dict):
            raise LuaError("fail to convert lua value to corev1.PodTemplateSpec")
        namespace = "default" if args[1] is None else str(_number(args[1]))
        refs = sorted(pod_dependencies(template.get("spec") or {}, namespace), key=sort_key)
        unique = {(r.kind, r.name): r for r in refs if r.name}
        return self.table([r.to_dict() for r in unique.values()])

    def get_resource_quantity(self, *args: Any) -> float:
        if len(args) != 1:
            raise LuaError("getResourceQuantity only accepts one argument")
        return float(_quantity_arg(args[0]))


class LuaScript:
    """One compiled script in its own Lua state; :meth:`call` runs one of its functions."""

    def __init__(self, source: str, name: str = "script") -> None:
        self.source = source
        self.name = name
        self._lock = threading.Lock()  # a Lua state runs one call at a time
        self.runtime = lupa.LuaRuntime(
            register_eval=False, register_builtins=False, unpack_returned_tuples=True, max_memory=MEMORY_LIMIT
        )
        kube = _Kube(self.runtime)
        library = self.runtime.table_from(
            {
                "resourceAdd": kube.resource_add,
                "accuratePodRequirements": kube.accurate_pod_requirements,
                "getPodDependencies": kube.get_pod_dependencies,
                "getResourceQuantity": kube.get_resource_quantity,
            }
        )
        self._run = self.runtime.execute(
            _BOOTSTRAP, library, time.monotonic, CALL_TIMEOUT, _HOOK_EVERY, self.runtime.table_from(list(DISABLED))
        )
        loader = self.runtime.eval("loadstring")
        loaded = loader(source, f"={name}")
        chunk, error = loaded if isinstance(loaded, tuple) else (loaded, None)
        if chunk is None:
            raise LuaError(str(error))
        self._chunk = chunk
        # the bootstrap's globals are no longer needed by anyone but the runner
        self.runtime.execute(
            "for _, n in ipairs({'os', 'io', 'debug', 'package', 'require', 'dofile', "
            "'loadfile', 'loadstring', 'load', 'coroutine'}) do _G[n] = nil end"
        )

    def call(self, function: str, nrets: int, *args: Any) -> tuple[Any, ...]:
        """``function(*args)``'s first ``nrets`` results, converted to Python (empty tables as EMPTY)."""
        with self._lock:
            lua_args = [self.runtime.table_from(a, recursive=True) if isinstance(a, (dict, list)) else a for a in args]
            try:
                result = self._run(self._chunk, function, nrets, *lua_args)
            except lupa.LuaMemoryError as exc:
                raise LuaError(f"script exceeded its memory limit ({MEMORY_LIMIT} bytes)") from exc
            except lupa.LuaError as exc:
                raise LuaError(str(exc)) from exc
            values = result if isinstance(result, tuple) else (result,)
            values = values + (None,) * (nrets + 1 - len(values))
            if not values[0]:
                raise LuaError(str(values[1]))
            return tuple(to_python(v) for v in values[1 : nrets + 1])


def compile_check(source: str) -> str | None:
    """The compile error of a script, or None when it compiles."""
    try:
        LuaScript(source, "check")
    except LuaError as exc:
        return str(exc)
    return None
