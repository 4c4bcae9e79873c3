"""Pruning: server-set metadata and status go from every kind; each kind in
reference 6.3 loses its member-specific fields, and nothing else changes."""

from __future__ import annotations

from typing import Any

import pytest

from karmada.works import prune

Obj = dict[str, Any]


def obj(kind: str, api_version: str = "v1", **fields: Any) -> Obj:
    base: Obj = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x", "namespace": "default"}}
    base.update(fields)
    return base


SERVER_META = {
    "creationTimestamp": "2024-01-01T00:00:00Z",
    "deletionTimestamp": "2024-01-01T00:00:00Z",
    "deletionGracePeriodSeconds": 0,
    "generation": 3,
    "managedFields": [{"manager": "kubectl"}],
    "resourceVersion": "42",
    "selfLink": "/api/v1/x",
    "uid": "u-1",
    "ownerReferences": [{"kind": "Other"}],
    "finalizers": ["f"],
}

JOB_SPEC = {
    "ttlSecondsAfterFinished": 10,
    "selector": {"matchLabels": {"controller-uid": "u", "batch.kubernetes.io/controller-uid": "u", "app": "a"}},
    "template": {
        "metadata": {
            "labels": {
                "controller-uid": "u",
                "job-name": "x",
                "batch.kubernetes.io/controller-uid": "u",
                "batch.kubernetes.io/job-name": "x",
                "app": "a",
            }
        }
    },
}

CASES: list[tuple[str, Obj, Obj]] = [
    (
        "server metadata and status",
        obj("ConfigMap", metadata={"name": "x", "labels": {"a": "b"}, **SERVER_META}, status={"s": 1}, data={"k": "v"}),
        obj("ConfigMap", metadata={"name": "x", "labels": {"a": "b"}}, data={"k": "v"}),
    ),
    (
        "deployment revision annotations",
        obj(
            "Deployment",
            "apps/v1",
            metadata={
                "name": "x",
                "annotations": {
                    "deployment.kubernetes.io/revision": "3",
                    "deployment.kubernetes.io/revision-history": "1,2",
                    "keep": "me",
                },
            },
        ),
        obj("Deployment", "apps/v1", metadata={"name": "x", "annotations": {"keep": "me"}}),
    ),
    (
        "job: ttl and generated selector labels",
        obj("Job", "batch/v1", spec=JOB_SPEC),
        obj(
            "Job",
            "batch/v1",
            spec={"selector": {"matchLabels": {"app": "a"}}, "template": {"metadata": {"labels": {"app": "a"}}}},
        ),
    ),
    (
        "job with manualSelector keeps its labels, still loses ttl",
        obj("Job", "batch/v1", spec={**JOB_SPEC, "manualSelector": True}),
        obj(
            "Job",
            "batch/v1",
            spec={k: v for k, v in {**JOB_SPEC, "manualSelector": True}.items() if k != "ttlSecondsAfterFinished"},
        ),
    ),
    (
        "service clusterIP and clusterIPs",
        obj("Service", spec={"clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.1"], "ports": [{"port": 80}]}),
        obj("Service", spec={"ports": [{"port": 80}]}),
    ),
    (
        "headless service keeps clusterIP None",
        obj("Service", spec={"clusterIP": "None", "clusterIPs": ["None"]}),
        obj("Service", spec={"clusterIP": "None", "clusterIPs": ["None"]}),
    ),
    (
        "service account: generated token secrets only",
        obj("ServiceAccount", secrets=[{"name": "x-token-abc"}, {"name": "x-token-def"}, {"name": "mine"}]),
        obj("ServiceAccount", secrets=[{"name": "mine"}]),
    ),
    (
        "service-account token secret: data null, sa uid annotation gone",
        obj(
            "Secret",
            type="kubernetes.io/service-account-token",
            metadata={
                "name": "x",
                "annotations": {"kubernetes.io/service-account.uid": "u", "kubernetes.io/service-account.name": "sa"},
            },
            data={"token": "c2VjcmV0"},
        ),
        obj(
            "Secret",
            type="kubernetes.io/service-account-token",
            metadata={"name": "x", "annotations": {"kubernetes.io/service-account.name": "sa"}},
            data=None,
        ),
    ),
    (
        "opaque secret unchanged",
        obj("Secret", type="Opaque", data={"k": "dg=="}),
        obj("Secret", type="Opaque", data={"k": "dg=="}),
    ),
    (
        "pvc selected-node annotation",
        obj(
            "PersistentVolumeClaim",
            metadata={"name": "x", "annotations": {"volume.kubernetes.io/selected-node": "n1", "keep": "me"}},
        ),
        obj("PersistentVolumeClaim", metadata={"name": "x", "annotations": {"keep": "me"}}),
    ),
    (
        "other kinds keep their fields",
        obj("Pod", spec={"nodeName": "n1", "clusterIP": "1.2.3.4", "ttlSecondsAfterFinished": 3}),
        obj("Pod", spec={"nodeName": "n1", "clusterIP": "1.2.3.4", "ttlSecondsAfterFinished": 3}),
    ),
]


@pytest.mark.parametrize(("manifest", "expected"), [(m, e) for _, m, e in CASES], ids=[c[0] for c in CASES])
def test_prune(manifest: Obj, expected: Obj) -> None:
    before = repr(manifest)
    assert prune(manifest) == expected
    assert repr(manifest) == before, "the input is not modified"


def test_job_ttl_kept_when_asked() -> None:
    job = obj("Job", "batch/v1", spec={"ttlSecondsAfterFinished": 10})
    assert prune(job, job_ttl=False)["spec"] == {"ttlSecondsAfterFinished": 10}
