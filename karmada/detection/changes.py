"""Which template updates the detector looks at (Karmada's event filter).

An update that changes only ``status``, ``metadata.managedFields`` or
``metadata.resourceVersion`` is ignored: status writes (ours included) must
not make the detector rewrite bindings. :func:`changed_by_karmada` tells,
for templates claimed by a ``Lazy`` policy, whether an update only touched
what Karmada's own components write (labels and annotations with a
``.karmada.io`` key, and the generation that follows them).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from karmada.api.keys import SKIP_AUTO_PROPAGATION_LABEL

KARMADA_KEY_PART = ".karmada.io"
USER_LABELS_WITH_KARMADA_PREFIX = frozenset({SKIP_AUTO_PROPAGATION_LABEL})


def _without_ignored(obj: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(obj)
    out.pop("status", None)
    metadata = dict(out.get("metadata") or {})
    metadata.pop("managedFields", None)
    metadata.pop("resourceVersion", None)
    out["metadata"] = metadata
    return out


def specification_changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """True unless ``old`` and ``new`` differ only in status, managedFields or resourceVersion."""
    return _without_ignored(old) != _without_ignored(new)


def _without_karmada_fields(obj: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(_without_ignored(obj))
    metadata = out["metadata"]
    metadata.pop("generation", None)
    labels = {
        k: v
        for k, v in (metadata.get("labels") or {}).items()
        if KARMADA_KEY_PART not in k or k in USER_LABELS_WITH_KARMADA_PREFIX
    }
    annotations = {k: v for k, v in (metadata.get("annotations") or {}).items() if KARMADA_KEY_PART not in k}
    for field, values in (("labels", labels), ("annotations", annotations)):
        if values:
            metadata[field] = values
        else:
            metadata.pop(field, None)
    return out


def changed_by_karmada(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """True when the update only changed fields Karmada's components write."""
    return _without_karmada_fields(old) == _without_karmada_fields(new)
