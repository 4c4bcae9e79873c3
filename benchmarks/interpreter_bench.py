"""Cost of one interpreter call per operation: a customization's Lua against the native rules.

Run: ``python -m benchmarks.interpreter_bench``. The same Deployment is
interpreted by the native rules and by a ResourceInterpreterCustomization
whose scripts do the same work (compiled once, as the controllers use them);
a Kruise CloneSet goes through the shipped third-party script. Prints the
median microseconds per call and the Lua/native ratio.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

from karmada.api.binding import AggregatedStatusItem
from karmada.interpreter import NativeInterpreter
from karmada.interpreter.customized import CustomizedInterpreter

ROUNDS = 7
CALLS = 200

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {
        "name": "web",
        "namespace": "shop",
        "generation": 2,
        "annotations": {"resourcetemplate.karmada.io/generation": "2"},
    },
    "spec": {
        "replicas": 6,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "serviceAccountName": "web",
                "volumes": [{"name": "cfg", "configMap": {"name": "web-config"}}],
                "containers": [
                    {
                        "name": "web",
                        "image": "nginx",
                        "envFrom": [{"secretRef": {"name": "web-secret"}}],
                        "resources": {"requests": {"cpu": "250m", "memory": "128Mi"}},
                    }
                ],
            },
        },
    },
    "status": {
        "observedGeneration": 2,
        "replicas": 6,
        "updatedReplicas": 6,
        "readyReplicas": 6,
        "availableReplicas": 6,
    },
}

SCRIPTS = {
    "replicaResource": """local kube = require("kube")
function GetReplicas(obj) return obj.spec.replicas, kube.accuratePodRequirements(obj.spec.template) end""",
    "replicaRevision": "function ReviseReplica(obj, n) obj.spec.replicas = n return obj end",
    "retention": "function Retain(desired, observed) desired.spec.replicas = observed.spec.replicas return desired end",
    "statusReflection": """function ReflectStatus(obj)
  local s = obj.status
  return {observedGeneration = s.observedGeneration, replicas = s.replicas, updatedReplicas = s.updatedReplicas,
    readyReplicas = s.readyReplicas, availableReplicas = s.availableReplicas, generation = obj.metadata.generation}
end""",
    "healthInterpretation": """function InterpretHealth(obj)
  local s = obj.status
  return s.observedGeneration == obj.metadata.generation and s.updatedReplicas >= obj.spec.replicas
    and s.availableReplicas >= s.updatedReplicas
end""",
    "statusAggregation": """function AggregateStatus(obj, items)
  local st = {replicas = 0, updatedReplicas = 0, readyReplicas = 0, availableReplicas = 0}
  for _, item in ipairs(items or {}) do
    for k, v in pairs(st) do st[k] = v + (item.status[k] or 0) end
  end
  st.observedGeneration = obj.metadata.generation
  obj.status = st
  return obj
end""",
    "dependencyInterpretation": """local kube = require("kube")
function GetDependencies(obj) return kube.getPodDependencies(obj.spec.template, obj.metadata.namespace) end""",
}

ITEMS = [
    AggregatedStatusItem.from_dict(
        {
            "clusterName": f"member{i}",
            "applied": True,
            "status": dict.fromkeys(("replicas", "updatedReplicas", "readyReplicas", "availableReplicas"), 3),
        }
    )
    for i in range(2)
]


def median_us(fn: Callable[[], Any]) -> float:
    fn()  # the first call compiles
    runs = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(CALLS):
            fn()
        runs.append((time.perf_counter() - start) / CALLS * 1e6)
    return statistics.median(runs)


def operations(interp: Any, obj: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    return {
        "InterpretReplica": lambda: interp.get_replicas(obj),
        "ReviseReplica": lambda: interp.revise_replica(obj, 3),
        "Retain": lambda: interp.retain(obj, obj),
        "InterpretStatus": lambda: interp.reflect_status(obj),
        "InterpretHealth": lambda: interp.interpret_health(obj),
        "AggregateStatus": lambda: interp.aggregate_status(obj, ITEMS, "2026-01-01T00:00:00Z"),
        "InterpretDependency": lambda: interp.get_dependencies(obj),
    }


def main() -> None:
    native = NativeInterpreter()
    custom = CustomizedInterpreter(thirdparty=False)
    custom.apply(
        {
            "metadata": {"name": "bench"},
            "spec": {
                "target": {"apiVersion": "apps/v1", "kind": "Deployment"},
                "customizations": {f: {"luaScript": s} for f, s in SCRIPTS.items()},
            },
        }
    )
    cloneset = {**DEPLOYMENT, "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet"}
    thirdparty = operations(CustomizedInterpreter(), cloneset)
    print(f"{'operation':<22}{'native us':>11}{'Lua us':>10}{'ratio':>8}{'CloneSet 3rd-party us':>24}")
    natives, luas = operations(native, DEPLOYMENT), operations(custom, DEPLOYMENT)
    for name in natives:
        n, lua_cost = median_us(natives[name]), median_us(luas[name])
        third = f"{median_us(thirdparty[name]):.1f}" if name != "Retain" else "-"
        print(f"{name:<22}{n:>11.1f}{lua_cost:>10.1f}{lua_cost / n:>7.1f}x{third:>24}")


if __name__ == "__main__":
    main()
