"""Whether a Work being deleted may delete the member object of one of its manifests.

Karmada's rule (ObjectWatcher.Delete): only an object labelled ``karmada.io/managed=true``.
Stricter here: when the manifest carries ``work.karmada.io/permanent-id`` (every Work the
binding controller renders does), the member object must carry the same one, so an object
of the same name another Work wrote, or someone made with Karmada's label copied, survives.
A manifest without the id (a Work written by hand) falls back to Karmada's rule.
"""

from __future__ import annotations

from typing import Any

from karmada.api.keys import MANAGED_LABEL, WORK_PERMANENT_ID_LABEL

Obj = dict[str, Any]


def _labels(obj: Obj) -> dict[str, str]:
    return (obj.get("metadata") or {}).get("labels") or {}


def deletion_refusal(manifest: Obj, observed: Obj, cluster: str) -> str | None:
    """Why the member object ``observed`` must not be deleted for ``manifest`` (a sentence for
    the Work's event, in the words of Karmada's log line), or None when it is the Work's own."""
    meta = observed.get("metadata") or {}
    ref = f"{meta['namespace']}/{meta.get('name')}" if meta.get("namespace") else str(meta.get("name"))
    what = (
        f"Abort deleting the resource(kind={manifest.get('kind')}, {ref}) which exists in the member cluster {cluster}"
    )
    if _labels(observed).get(MANAGED_LABEL) != "true":
        return f"{what} but is not managed by Karmada."
    wanted = _labels(manifest).get(WORK_PERMANENT_ID_LABEL)
    if not wanted:
        return None
    found = _labels(observed).get(WORK_PERMANENT_ID_LABEL)
    if found == wanted:
        return None
    has = f"{WORK_PERMANENT_ID_LABEL} {found}" if found else f"no {WORK_PERMANENT_ID_LABEL}"
    return f"{what} but is not this Work's: it has {has}, this Work's is {wanted}."


__all__ = ["deletion_refusal"]
