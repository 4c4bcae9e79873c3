"""The scheduler's pure core: filters, scores, spread constraints, replica division.

Call :func:`schedule` with a binding's spec and status and the clusters; it
returns the new ``spec.clusters`` with a decision for every cluster, or raises
:class:`ScheduleFailure` carrying Karmada's classification of the error.
:mod:`~karmada.scheduling.triggers` says when the scheduler controller runs it,
:mod:`~karmada.scheduling.decisions` how its per-cluster decisions are kept on
the binding (:data:`DECISIONS_ANNOTATION`).
"""

from karmada.scheduling.assignment import strategy_of
from karmada.scheduling.decisions import DECISIONS_ANNOTATION, decode_decisions, encode_decisions
from karmada.scheduling.dispense import dispense, webster
from karmada.scheduling.errors import FitError, ScheduleError, UnschedulableError
from karmada.scheduling.estimator import max_available_replicas
from karmada.scheduling.scheduler import (
    GENERAL_ESTIMATOR,
    ClusterDecision,
    Estimator,
    ScheduleFailure,
    ScheduleResult,
    schedule,
)

__all__ = [
    "DECISIONS_ANNOTATION",
    "GENERAL_ESTIMATOR",
    "ClusterDecision",
    "Estimator",
    "FitError",
    "ScheduleError",
    "ScheduleFailure",
    "ScheduleResult",
    "UnschedulableError",
    "decode_decisions",
    "dispense",
    "encode_decisions",
    "max_available_replicas",
    "schedule",
    "strategy_of",
    "webster",
]
