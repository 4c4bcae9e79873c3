"""Pure matching rules shared by the engines: label selectors, cluster affinity,
taint tolerations and resource selectors, each with Kubernetes' or Karmada's
exact semantics."""

from karmada.selectors.clusters import cluster_matches, cluster_zones
from karmada.selectors.labels import label_selector_matches, requirement_matches
from karmada.selectors.resources import ImplicitPriority, selector_priority, selectors_priority
from karmada.selectors.tolerations import find_untolerated_taint, tolerates

__all__ = [
    "ImplicitPriority",
    "cluster_matches",
    "cluster_zones",
    "find_untolerated_taint",
    "label_selector_matches",
    "requirement_matches",
    "selector_priority",
    "selectors_priority",
    "tolerates",
]
