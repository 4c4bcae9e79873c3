"""The shipped third-party customizations against real example objects.

``thirdparty_testdata/`` holds the example objects of each project's kinds
(Karmada's resource-customization test fixtures: CloneSet, Workflow,
FlinkDeployment, ...) with the answer each operation must give; every case
whose operation this project ships a script for runs here as one table row.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from karmada import quantity
from karmada.api.binding import AggregatedStatusItem
from karmada.interpreter.customized import CustomizedInterpreter
from karmada.interpreter.native import Operation
from karmada.interpreter.thirdparty import load

DATA = Path(__file__).parent / "thirdparty_testdata"
INTERPRETER = CustomizedInterpreter()


def _cases() -> list[Any]:
    cases = []
    for path in sorted(DATA.rglob("*.yaml")):
        for number, case in enumerate(yaml.safe_load_all(path.read_text()), 1):
            if not case or not case.get("output"):
                continue  # a fixture without an expected answer asserts nothing
            obj = case.get("desiredObj") or case.get("observedObj")
            operation = Operation(case["operation"])
            if INTERPRETER.hook(obj["apiVersion"], obj["kind"], operation) is None:
                continue
            ident = f"{obj['kind']}-{path.stem}-{number}"
            cases.append(pytest.param(case, operation, id=ident))
    return cases


def _run(case: dict[str, Any], operation: Operation) -> Any:
    obj: dict[str, Any] = case.get("desiredObj") or case["observedObj"]
    if operation is Operation.INTERPRET_HEALTH:
        return {"healthy": INTERPRETER.interpret_health(obj)}
    if operation is Operation.INTERPRET_STATUS:
        return {"status": INTERPRETER.reflect_status(obj)}
    if operation is Operation.INTERPRET_REPLICA:
        replicas, requires = INTERPRETER.get_replicas(obj)
        out: dict[str, Any] = {"replica": replicas}
        if "requires" in case["output"]:
            out["requires"] = requires.to_dict() if requires is not None else None
        return out
    if operation is Operation.REVISE_REPLICA:
        return {"revised": INTERPRETER.revise_replica(obj, case["inputReplicas"])}
    if operation is Operation.RETAIN:
        return {"retained": INTERPRETER.retain(case["desiredObj"], case["observedObj"])}
    if operation is Operation.INTERPRET_DEPENDENCY:
        return {"dependencies": [r.to_dict() for r in INTERPRETER.get_dependencies(obj)]}
    if operation is Operation.INTERPRET_COMPONENT:
        return {"components": INTERPRETER.get_components(obj)}
    items = [AggregatedStatusItem.from_dict(i) for i in case.get("statusItems") or []]
    return {"aggregatedStatus": INTERPRETER.aggregate_status(obj, items, "2026-01-01T00:00:00Z")}


def _normal(value: Any, key: str = "") -> Any:
    if key == "resourceRequest" and isinstance(value, dict):
        # quantities compare by value: the fixtures write cpu: 1 where the interpreter says "1"
        return {k: quantity.parse(str(v)) for k, v in value.items()}
    if isinstance(value, dict):
        if "lastProbeTime" in value and "type" in value:
            # a condition stamped with the time of aggregation (TFJob's): its times match no fixture
            value = {k: v for k, v in value.items() if k not in ("lastProbeTime", "lastTransitionTime")}
        return {k: _normal(v, k) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        items = [_normal(v) for v in value]
        if key == "conditions":
            # conditions are a map keyed by type (listMapKey); Karmada's own scripts list some in hash order
            items.sort(key=lambda c: (str(c.get("type")), str(c.get("status"))) if isinstance(c, dict) else ("", ""))
        return items
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _sorted_deps(out: dict[str, Any]) -> dict[str, Any]:
    if "dependencies" in out:
        deps = out["dependencies"] or []
        out = {"dependencies": sorted(deps, key=lambda d: (d.get("kind", ""), d.get("name", "")))}
    return out


@pytest.mark.parametrize(("case", "operation"), _cases())
def test_thirdparty_case(case: dict[str, Any], operation: Operation) -> None:
    got = _sorted_deps(_normal(_run(case, operation)))
    want = _sorted_deps(_normal(case["output"]))
    assert got == want, case.get("name")


def test_every_required_kind_ships_a_script() -> None:
    shipped = {target for target, _, _, _ in load()}
    required = {
        ("argoproj.io/v1alpha1", "Workflow"),
        ("argoproj.io/v1alpha1", "Rollout"),
        ("apps.kruise.io/v1alpha1", "CloneSet"),
        ("apps.kruise.io/v1beta1", "StatefulSet"),
        ("apps.kruise.io/v1alpha1", "DaemonSet"),
        ("apps.kruise.io/v1alpha1", "BroadcastJob"),
        ("flink.apache.org/v1beta1", "FlinkDeployment"),
        ("kyverno.io/v1", "ClusterPolicy"),
        ("kyverno.io/v1", "Policy"),
        ("helm.toolkit.fluxcd.io/v2beta1", "HelmRelease"),
        ("kustomize.toolkit.fluxcd.io/v1", "Kustomization"),
        ("kubeflow.org/v1", "PyTorchJob"),
        ("kubeflow.org/v1", "TFJob"),
        ("kubeflow.org/v2beta1", "MPIJob"),
        ("ray.io/v1", "RayCluster"),
        ("ray.io/v1", "RayJob"),
    }
    assert required <= shipped, sorted(required - shipped)
