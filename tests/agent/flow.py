"""Helpers for the agent's propagation-flow tests: Works as the binding controller
writes them, and reading their status back through kubectl."""

from __future__ import annotations

import json
from typing import Any

from tests.pullmode import PullMode, wait_for
from tests.servers import Kubectl, ServerThread

NS = "karmada-es-member1"
TEMPLATE_UID = "00000000-0000-4000-8000-000000000001"


def work(name: str, manifest: dict[str, Any], **spec: Any) -> dict[str, Any]:
    """A Work holding ``manifest`` decorated as the binding controller decorates it
    (reference 6.3: managed label, Work and template annotations, the managed-* lists)."""
    meta = manifest.setdefault("metadata", {})
    meta.setdefault("labels", {})["karmada.io/managed"] = "true"
    meta.setdefault("annotations", {}).update(
        {
            "work.karmada.io/name": name,
            "work.karmada.io/namespace": NS,
            "resourcetemplate.karmada.io/uid": TEMPLATE_UID,
        }
    )
    labels, annotations = meta["labels"], meta["annotations"]
    annotations["resourcetemplate.karmada.io/managed-labels"] = ",".join(sorted(labels))
    managed = {*annotations, "resourcetemplate.karmada.io/managed-annotations"}
    annotations["resourcetemplate.karmada.io/managed-annotations"] = ",".join(sorted(managed))
    return {
        "apiVersion": "work.karmada.io/v1alpha1",
        "kind": "Work",
        "metadata": {"name": name, "namespace": NS, "finalizers": ["karmada.io/execution-controller"]},
        "spec": {"workload": {"manifests": [manifest]}, **spec},
    }


def get_work(pull_mode: PullMode, name: str) -> dict[str, Any] | None:
    result = pull_mode.admin("get", "work", name, "-n", NS, "-o", "json", check=False)
    return json.loads(result.stdout) if result.returncode == 0 else None


def condition(pull_mode: PullMode, name: str, kind: str) -> dict[str, Any] | None:
    for found in ((get_work(pull_mode, name) or {}).get("status") or {}).get("conditions") or []:
        if found["type"] == kind:
            return dict(found)
    return None


def wait_condition(pull_mode: PullMode, name: str, kind: str, status: str, timeout: float = 20) -> dict[str, Any]:
    def check() -> dict[str, Any] | None:
        found = condition(pull_mode, name, kind)
        return found if found and found["status"] == status else None

    result: dict[str, Any] = wait_for(check, timeout=timeout, what=f"{name} {kind}={status}")
    return result


def manifest_status(pull_mode: PullMode, name: str) -> dict[str, Any] | None:
    statuses = ((get_work(pull_mode, name) or {}).get("status") or {}).get("manifestStatuses") or []
    return dict(statuses[0]) if statuses else None


def events(pull_mode: PullMode, namespace: str, name: str) -> list[dict[str, Any]]:
    listing = pull_mode.admin(
        "get", "events", "-n", namespace, "--field-selector", f"involvedObject.name={name}", "-o", "json"
    ).stdout
    return list(json.loads(listing)["items"])


def reasons(pull_mode: PullMode, namespace: str, name: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for event in events(pull_mode, namespace, name):
        found.setdefault(event["reason"], []).append(event["message"])
    return found


def ready_member(pull_mode: PullMode, member: ServerThread) -> Kubectl:
    if pull_mode.cluster("member1") is None:
        pull_mode.register(member, "member1")
        pull_mode.start_agent(member, "member1")
    wait_for(lambda: pull_mode.ready("member1") == "True", what="member1 Ready")
    return pull_mode.member_admin(member, "member1")


def apply(pull_mode: PullMode, obj: dict[str, Any]) -> None:
    pull_mode.admin("apply", "-f", "-", stdin=json.dumps(obj))


_SERVER_META = ("creationTimestamp", "generation", "managedFields", "resourceVersion", "uid", "selfLink")
_JOB_LABELS = ("controller-uid", "job-name", "batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name")


def defaulted(pull_mode: PullMode, manifest: dict[str, Any]) -> dict[str, Any]:
    """``manifest`` as the control plane stores it (its defaults filled by a server dry-run),
    pruned as the binding controller prunes a template into a Work (reference 6.3)."""
    stored = json.loads(
        pull_mode.admin("create", "--dry-run=server", "-o", "json", "-f", "-", stdin=json.dumps(manifest)).stdout
    )
    stored.pop("status", None)
    for key in _SERVER_META:
        stored["metadata"].pop(key, None)
    spec = stored.get("spec") or {}
    if stored["kind"] == "Job" and not spec.get("manualSelector"):
        spec.pop("selector", None)
        labels = spec["template"].get("metadata", {}).get("labels", {})
        for key in _JOB_LABELS:
            labels.pop(key, None)
    if stored["kind"] == "Service" and spec.get("clusterIP") != "None":
        spec.pop("clusterIP", None)
        spec.pop("clusterIPs", None)
    return dict(stored)
