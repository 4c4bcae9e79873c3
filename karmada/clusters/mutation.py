"""What Karmada's aggregated API server does to every Cluster it stores (our
Cluster is a CRD, so the control plane's cluster controller applies these):
``spec.zone`` moves into ``spec.zones``, NoExecute taints get ``timeAdded``,
and a new Cluster without resource models gets Karmada's nine default grades."""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
MAX_INT64 = str(2**63 - 1)
_GIB = 2**30


def mutate(spec: Obj, now: str) -> bool:
    """Canonicalize a Cluster spec in place (every write); whether it changed."""
    changed = False
    if spec.get("zone") and not spec.get("zones"):
        spec["zones"] = [spec.pop("zone")]
        changed = True
    for taint in spec.get("taints") or []:
        if taint.get("effect") == "NoExecute" and not taint.get("timeAdded"):
            taint["timeAdded"] = now
            changed = True
    return changed


def _memory(gib: int) -> str:
    return f"{gib}Gi" if gib else "0"


def default_resource_models() -> list[Obj]:
    """Karmada's default grades: CPU [2^(g-1), 2^g) cores and memory [2^(g+2), 2^(g+3)) GiB,
    with grade 0 from zero and grade 8 without an upper bound."""
    bounds = [(0, 1, 0, 4), (1, 2, 4, 16)] + [(2 ** (g - 1), 2**g, 2 ** (g + 2), 2 ** (g + 3)) for g in range(2, 8)]
    models = [
        {
            "grade": grade,
            "ranges": [
                {"name": "cpu", "min": str(cpu_min), "max": str(cpu_max)},
                {"name": "memory", "min": _memory(mem_min), "max": _memory(mem_max)},
            ],
        }
        for grade, (cpu_min, cpu_max, mem_min, mem_max) in enumerate(bounds)
    ]
    models.append(
        {
            "grade": 8,
            "ranges": [
                {"name": "cpu", "min": "128", "max": MAX_INT64},
                {"name": "memory", "min": _memory(1024), "max": MAX_INT64},
            ],
        }
    )
    return models


def standardize_resource_models(models: list[Obj]) -> bool:
    """Sort by grade, first grade's minimums 0, last grade's maximums MaxInt64; whether it changed."""
    if not models:
        return False
    before = repr(models)
    models.sort(key=lambda m: int(m.get("grade", 0)))
    for item in models[0].get("ranges") or []:
        item["min"] = "0"
    for item in models[-1].get("ranges") or []:
        item["max"] = MAX_INT64
    return repr(models) != before


def prepare_new_cluster(spec: Obj) -> bool:
    """On first sight of a Cluster: default or standardize its resource models."""
    models = spec.get("resourceModels")
    if not models:
        spec["resourceModels"] = default_resource_models()
        return True
    return standardize_resource_models(models)
