"""The scheduler's pure core: filters, scores, spread constraints, replica division.

Call :func:`schedule` with a binding's spec and status and the clusters; it
returns the new ``spec.clusters`` with a decision for every cluster, or raises
:class:`ScheduleFailure` carrying Karmada's classification of the error.
"""

from karmada.scheduling.assignment import strategy_of
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
    "GENERAL_ESTIMATOR",
    "ClusterDecision",
    "Estimator",
    "FitError",
    "ScheduleError",
    "ScheduleFailure",
    "ScheduleResult",
    "UnschedulableError",
    "dispense",
    "max_available_replicas",
    "schedule",
    "strategy_of",
    "webster",
]
