"""PropagateDeps as pure functions over JSON objects (reference section 10).

The dependencies distributor (``controlplane.dependencies_distributor``)
reads caches and writes what these functions compute: the
``resourcebinding.karmada.io/dependencies`` annotation of an independent
binding, whether a template is one of its dependencies, and the attached
binding of each dependency (``depended-by`` labels, owner reference to the
dependency, ``requiredBy`` snapshots, and the conflict resolution and
preserve setting that the referrers agree on). No I/O here.
"""

from karmada.dependencies.attached import (
    DEPENDENCY_POLICY_CONFLICT,
    AttachedUpdate,
    OwnerConflict,
    PolicyResolution,
    attach,
    depended_by_labels,
    detach,
    resolve_policies,
    snapshot_of,
)
from karmada.dependencies.references import (
    annotation_value,
    describe_dependencies,
    parse_annotation,
    reference_matches,
    references_template,
)

__all__ = [
    "DEPENDENCY_POLICY_CONFLICT",
    "AttachedUpdate",
    "OwnerConflict",
    "PolicyResolution",
    "annotation_value",
    "attach",
    "depended_by_labels",
    "describe_dependencies",
    "detach",
    "parse_annotation",
    "reference_matches",
    "references_template",
    "resolve_policies",
    "snapshot_of",
]
