"""The Lua sandbox and the customization layer: contracts, limits, precedence, errors."""

from __future__ import annotations

from typing import Any

import pytest

from karmada.interpreter import lua
from karmada.interpreter.customized import CustomizedInterpreter
from karmada.interpreter.lua import LuaError, LuaScript
from karmada.interpreter.native import Operation

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "shop"},
    "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("return os.execute", None),
        ("return io", None),
        ('return require("os")', "module 'os' not found"),
        ('return dofile("/etc/passwd")', "call function dofile is not supported"),
        ('return loadstring("return 1")', "call function loadstring is not supported"),
        ("return setmetatable({}, {})", "call function setmetatable is not supported"),
        ("return rawget({}, 1)", "call function rawget is not supported"),
        ("while true do end", "timed out"),
        ("while true do pcall(function() while true do end end) end", "timed out"),
        ('local s = string.rep("x", 1e8) return #s', "memory"),
    ],
)
def test_the_sandbox_refuses(body: str, message: str | None) -> None:
    script = LuaScript(f"function F() {body} end")
    if message is None:
        assert script.call("F", 1) == (None,)
        return
    with pytest.raises(LuaError, match=message):
        script.call("F", 1)


def test_each_call_starts_from_the_scripts_top_level() -> None:
    script = LuaScript("n = 0 function F() n = n + 1 return n end")
    assert [script.call("F", 1), script.call("F", 1)] == [(1,), (1,)]


def test_compile_errors_and_missing_functions_are_lua_errors() -> None:
    with pytest.raises(LuaError, match="expected"):
        LuaScript("function F(")
    with pytest.raises(LuaError, match="not found function G"):
        LuaScript("function F() end").call("G", 1)


@pytest.mark.parametrize(
    ("call", "want"),
    [
        ('kube.resourceAdd("1Gi", "512Mi", nil)', "1536Mi"),
        ('kube.resourceAdd("100m", "1")', "1100m"),
        ('kube.getResourceQuantity("250m")', 0.25),
        ('kube.getPodDependencies({spec = {serviceAccountName = "sa"}}, nil)[1].namespace', "default"),
        (
            "kube.accuratePodRequirements({spec = {nodeSelector = {zone = 'a'},"
            " containers = {{resources = {limits = {cpu = '2'}}}}}})",
            {"nodeClaim": {"nodeSelector": {"zone": "a"}}, "resourceRequest": {"cpu": "2"}},
        ),
    ],
)
def test_the_kube_library(call: str, want: Any) -> None:
    script = LuaScript(f'local kube = require("kube") function F() return {call} end')
    assert script.call("F", 1) == (want,)


def test_empty_tables_take_their_kind_from_the_inputs() -> None:
    desired = {"spec": {"a": {}, "b": [], "c": {"d": [{"e": {}}]}}}
    script = LuaScript("function F(o) o.spec.new = {} return o end")
    (raw,) = script.call("F", 1, desired)
    assert lua.resolve_empty(raw, [desired]) == desired


def ric(name: str, **scripts: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {
            "target": {"apiVersion": "apps/v1", "kind": "Deployment"},
            "customizations": {field: {"luaScript": source} for field, source in scripts.items()},
        },
    }


def test_a_customization_overrides_native_and_goes_with_its_deletion() -> None:
    interpreter = CustomizedInterpreter()
    assert interpreter.get_replicas(DEPLOYMENT)[0] == 3
    interpreter.on_event("ADDED", ric("b", replicaResource="function GetReplicas(o) return 7, nil end"))
    interpreter.on_event("ADDED", ric("a", replicaResource="function GetReplicas(o) return 5, nil end"))
    assert interpreter.get_replicas(DEPLOYMENT) == (5, None)  # first by name
    interpreter.on_event("DELETED", ric("a"))
    assert interpreter.get_replicas(DEPLOYMENT) == (7, None)
    interpreter.on_event("DELETED", ric("b"))
    assert interpreter.get_replicas(DEPLOYMENT)[0] == 3


def test_customization_over_thirdparty() -> None:
    interpreter = CustomizedInterpreter()
    cloneset = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "spec": {"replicas": 2, "template": {}}}
    assert interpreter.get_replicas(cloneset) == (2, None)
    custom = ric("mine", replicaResource="function GetReplicas(o) return 9, nil end")
    custom["spec"]["target"] = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet"}
    interpreter.apply(custom)
    assert interpreter.get_replicas(cloneset) == (9, None)
    assert interpreter.hook_enabled("apps.kruise.io/v1alpha1", "CloneSet", Operation.INTERPRET_HEALTH)


@pytest.mark.parametrize(
    ("field", "source", "call", "message"),
    [
        ("replicaResource", 'function GetReplicas(o) return "x" end', "get_replicas", "is not number"),
        ("healthInterpretation", "function InterpretHealth(o) return 1 end", "interpret_health", "is not bool"),
        ("replicaRevision", "function ReviseReplica(o, n) return 3 end", "revise", "type is table"),
        ("replicaResource", 'function GetReplicas(o) error("boom") end', "get_replicas", "boom"),
    ],
)
def test_wrong_answers_name_the_customization(field: str, source: str, call: str, message: str) -> None:
    interpreter = CustomizedInterpreter()
    interpreter.apply(ric("bad", **{field: source}))
    with pytest.raises(ValueError, match=message) as caught:
        if call == "get_replicas":
            interpreter.get_replicas(DEPLOYMENT)
        elif call == "interpret_health":
            interpreter.interpret_health(DEPLOYMENT)
        else:
            interpreter.revise_replica(DEPLOYMENT, 2)
    assert "ResourceInterpreterCustomization(bad)" in str(caught.value)


def test_fractional_lua_numbers_are_quantities() -> None:
    interpreter = CustomizedInterpreter()
    interpreter.apply(
        ric("half", replicaResource="function GetReplicas(o) return 2, {resourceRequest = {cpu = 0.5}} end")
    )
    replicas, needs = interpreter.get_replicas(DEPLOYMENT)
    assert replicas == 2 and needs is not None and needs.to_dict() == {"resourceRequest": {"cpu": "500m"}}


@pytest.mark.parametrize(
    ("args", "want"),
    [('"0", "3072Mi", "10752Mi"', "13824Mi"), ('"1000m", "2000m"', "3"), ('"1Gi", "1"', "1073741825"), ("nil", "0")],
)
def test_resource_add_formats_as_go(args: str, want: str) -> None:
    script = LuaScript(f'local kube = require("kube") function F() return kube.resourceAdd({args}) end')
    assert script.call("F", 1) == (want,)


def test_the_agent_retains_through_a_customization() -> None:
    from karmada.members.execution import merge_for_update

    interpreter = CustomizedInterpreter()
    interpreter.apply(
        ric(
            "keep-paused",
            retention="function Retain(d, o) d.spec.paused = o.spec.paused return d end",
        )
    )
    desired = {**DEPLOYMENT, "spec": {**DEPLOYMENT["spec"], "paused": False}}
    observed = {**DEPLOYMENT, "metadata": {**DEPLOYMENT["metadata"], "resourceVersion": "7"}}
    observed["spec"] = {**DEPLOYMENT["spec"], "paused": True}
    assert merge_for_update(desired, observed, interpreter)["spec"]["paused"] is True
    assert merge_for_update(desired, observed)["spec"]["paused"] is False  # native Deployment retention
