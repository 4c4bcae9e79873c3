"""The built-in interpreter (pkg/resourceinterpreter/default/native/*_test.go cases)."""

from __future__ import annotations

from typing import Any

import pytest

from karmada.api.binding import AggregatedStatusItem
from karmada.interpreter import NativeInterpreter, Operation
from karmada.interpreter.retain import RetainError

NATIVE = NativeInterpreter()
NOW = "2024-05-01T00:00:00Z"


def deployment(pod: dict[str, Any], replicas: int | None = 3, **meta: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"template": {"spec": pod}}
    if replicas is not None:
        spec["replicas"] = replicas
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "default", **meta},
        "spec": spec,
    }


def container(
    name: str = "c",
    requests: dict[str, Any] | None = None,
    limits: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    return {"name": name, "image": "nginx", "resources": resources, **extra}


@pytest.mark.parametrize(
    ("obj", "replicas", "requirements"),
    [
        (
            deployment({"containers": [container(requests={"cpu": "100m", "memory": "128Mi"})]}, 6),
            6,
            {"resourceRequest": {"cpu": "100m", "memory": "128Mi"}},
        ),
        (deployment({"containers": [container()]}, None), 0, None),
        # limits stand in for missing requests; containers sum
        (
            deployment({"containers": [container(limits={"cpu": "1"}), container("b", requests={"cpu": "500m"})]}),
            3,
            {"resourceRequest": {"cpu": "1500m"}},
        ),
        # init containers are max-ed in, overhead added
        (
            deployment(
                {
                    "containers": [container(requests={"cpu": "200m"})],
                    "initContainers": [container("init", requests={"cpu": "1", "memory": "1Gi"})],
                    "overhead": {"cpu": "100m"},
                }
            ),
            3,
            {"resourceRequest": {"cpu": "1100m", "memory": "1Gi"}},
        ),
        # extended resources count; unknown plain names do not
        (
            deployment({"containers": [container(requests={"nvidia.com/gpu": 2, "storage": "1Gi"})]}),
            3,
            {"resourceRequest": {"nvidia.com/gpu": "2"}},
        ),
        (
            deployment(
                {
                    "containers": [container()],
                    "nodeSelector": {"disk": "ssd"},
                    "tolerations": [{"key": "k", "operator": "Exists"}],
                }
            ),
            3,
            {
                "nodeClaim": {
                    "nodeSelector": {"disk": "ssd"},
                    "tolerations": [{"key": "k", "operator": "Exists"}],
                }
            },
        ),
        (
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": "j"},
                "spec": {
                    "parallelism": 5,
                    "completions": 3,
                    "template": {"spec": {"containers": [container()]}},
                },
            },
            3,
            None,
        ),
        (
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": "j"},
                "spec": {"parallelism": 2, "template": {"spec": {"containers": [container()]}}},
            },
            2,
            None,
        ),
        (
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p"},
                "spec": {"containers": [container(requests={"memory": "100M"})]},
            },
            1,
            {"resourceRequest": {"memory": "100000000"}},
        ),
    ],
)
def test_get_replicas(obj: dict[str, Any], replicas: int, requirements: dict[str, Any] | None) -> None:
    count, reqs = NATIVE.get_replicas(obj)
    assert count == replicas
    assert (reqs.to_dict() if reqs else None) == requirements


def test_quantities_are_printed_like_go() -> None:
    # Go prints memory in binary units when exact, else as a plain number; small values in decimal form
    _, reqs = NATIVE.get_replicas(
        deployment({"containers": [container(requests={"memory": "100M", "cpu": 2, "ephemeral-storage": "1k"})]})
    )
    assert reqs is not None and reqs.resource_request == {
        "memory": "100000000",
        "cpu": "2",
        "ephemeral-storage": "1k",
    }


def test_revise_replica() -> None:
    obj = deployment({"containers": [container()]}, 6)
    assert NATIVE.revise_replica(obj, 2)["spec"]["replicas"] == 2
    assert obj["spec"]["replicas"] == 6
    job = {"apiVersion": "batch/v1", "kind": "Job", "spec": {"parallelism": 4}}
    assert NATIVE.revise_replica(job, 1)["spec"] == {"parallelism": 1}
    with pytest.raises(KeyError):
        NATIVE.revise_replica({"apiVersion": "v1", "kind": "ConfigMap"}, 1)


def test_hooks() -> None:
    assert NATIVE.hook_enabled("apps/v1", "Deployment", Operation.INTERPRET_REPLICA)
    assert not NATIVE.hook_enabled("apps/v1", "DaemonSet", Operation.INTERPRET_REPLICA)
    assert NATIVE.hook_enabled("example.io/v1", "Widget", Operation.INTERPRET_STATUS)
    assert not NATIVE.hook_enabled("v1", "ConfigMap", Operation.INTERPRET_DEPENDENCY)


def test_seed_deployment_depends_on_its_configmap() -> None:
    """Seed 000: myapp mounts ConfigMap my-config."""
    myapp = deployment(
        {
            "containers": [
                {
                    "image": "nginx",
                    "name": "nginx",
                    "volumeMounts": [{"name": "configmap", "mountPath": "/configmap"}],
                }
            ],
            "volumes": [{"name": "configmap", "configMap": {"name": "my-config"}}],
        },
        1,
    )
    assert [d.to_dict() for d in NATIVE.get_dependencies(myapp)] == [
        {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "default", "name": "my-config"}
    ]


def test_every_pod_reference_is_found_sorted_and_deduplicated() -> None:
    pod = {
        "serviceAccountName": "runner",
        "imagePullSecrets": [{"name": "pull"}, {"name": ""}],
        "initContainers": [{"name": "i", "envFrom": [{"configMapRef": {"name": "init-cm"}}]}],
        "ephemeralContainers": [
            {"name": "e", "env": [{"name": "X", "valueFrom": {"secretKeyRef": {"name": "eph", "key": "k"}}}]}
        ],
        "containers": [
            {
                "name": "c",
                "env": [
                    {"name": "A", "valueFrom": {"configMapKeyRef": {"name": "env-cm", "key": "a"}}},
                    {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                ],
                "envFrom": [{"secretRef": {"name": "env-secret"}}, {"configMapRef": {"name": "env-cm"}}],
            },
        ],
        "volumes": [
            {"name": "a", "secret": {"secretName": "vol-secret"}},
            {
                "name": "b",
                "projected": {
                    "sources": [
                        {"configMap": {"name": "proj-cm"}},
                        {"secret": {"name": "proj-secret"}},
                        {"serviceAccountToken": {"path": "t"}},
                        {"downwardAPI": {}},
                    ]
                },
            },
            {"name": "c", "persistentVolumeClaim": {"claimName": "data"}},
            {"name": "d", "csi": {"driver": "x", "nodePublishSecretRef": {"name": "csi-secret"}}},
            {"name": "e", "azureFile": {"secretName": "azure", "shareName": "s"}},
            {"name": "f", "rbd": {"monitors": [], "image": "i", "secretRef": {"name": "rbd-secret"}}},
        ],
    }
    deps = NATIVE.get_dependencies(deployment(pod))
    assert [(d.kind, d.name) for d in deps] == [
        ("ConfigMap", "env-cm"),
        ("ConfigMap", "init-cm"),
        ("ConfigMap", "proj-cm"),
        ("PersistentVolumeClaim", "data"),
        ("Secret", "azure"),
        ("Secret", "csi-secret"),
        ("Secret", "env-secret"),
        ("Secret", "eph"),
        ("Secret", "proj-secret"),
        ("Secret", "pull"),
        ("Secret", "rbd-secret"),
        ("Secret", "vol-secret"),
        ("ServiceAccount", "runner"),
    ]


def test_dependencies_of_other_kinds() -> None:
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "s", "namespace": "ns"},
        "spec": {
            "volumeClaimTemplates": [{"metadata": {"name": "www"}}],
            "template": {
                "spec": {
                    "serviceAccountName": "default",
                    "volumes": [
                        {"name": "w", "persistentVolumeClaim": {"claimName": "www"}},
                        {"name": "x", "persistentVolumeClaim": {"claimName": "shared"}},
                    ],
                }
            },
        },
    }
    assert [(d.kind, d.name) for d in NATIVE.get_dependencies(sts)] == [("PersistentVolumeClaim", "shared")]
    cron = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "c", "namespace": "ns"},
        "spec": {
            "jobTemplate": {"spec": {"template": {"spec": {"volumes": [{"name": "v", "secret": {"secretName": "s"}}]}}}}
        },
    }
    assert [(d.kind, d.name, d.namespace) for d in NATIVE.get_dependencies(cron)] == [("Secret", "s", "ns")]
    ingress = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "i", "namespace": "ns"},
        "spec": {"tls": [{"secretName": "tls-b"}, {"secretName": "tls-a"}]},
    }
    assert [d.name for d in NATIVE.get_dependencies(ingress)] == ["tls-a", "tls-b"]
    imported = {
        "apiVersion": "multicluster.x-k8s.io/v1alpha1",
        "kind": "ServiceImport",
        "metadata": {"name": "svc", "namespace": "ns"},
    }
    deps = [d.to_dict() for d in NATIVE.get_dependencies(imported)]
    assert deps == [
        {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "namespace": "ns",
            "labelSelector": {"matchLabels": {"kubernetes.io/service-name": "derived-svc"}},
        },
        {"apiVersion": "v1", "kind": "Service", "namespace": "ns", "name": "derived-svc"},
    ]


@pytest.mark.parametrize(
    ("obj", "healthy"),
    [
        (
            deployment({}, 3, generation=2)
            | {"status": {"observedGeneration": 2, "updatedReplicas": 3, "availableReplicas": 3}},
            True,
        ),
        (
            deployment({}, 3, generation=2)
            | {"status": {"observedGeneration": 1, "updatedReplicas": 3, "availableReplicas": 3}},
            False,
        ),
        (
            deployment({}, 3, generation=1)
            | {"status": {"observedGeneration": 1, "updatedReplicas": 2, "availableReplicas": 2}},
            False,
        ),
        (
            deployment({}, 3, generation=1)
            | {"status": {"observedGeneration": 1, "updatedReplicas": 3, "availableReplicas": 2}},
            False,
        ),
        (
            {
                "apiVersion": "apps/v1",
                "kind": "DaemonSet",
                "metadata": {"generation": 1},
                "status": {
                    "observedGeneration": 1,
                    "desiredNumberScheduled": 2,
                    "updatedNumberScheduled": 2,
                    "numberAvailable": 2,
                },
            },
            True,
        ),
        ({"apiVersion": "v1", "kind": "Service", "spec": {"type": "ClusterIP"}}, True),
        ({"apiVersion": "v1", "kind": "Service", "spec": {"type": "LoadBalancer"}}, False),
        (
            {
                "apiVersion": "v1",
                "kind": "Service",
                "spec": {"type": "LoadBalancer"},
                "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}},
            },
            True,
        ),
        (
            {
                "apiVersion": "networking.k8s.io/v1",
                "kind": "Ingress",
                "status": {"loadBalancer": {"ingress": [{"hostname": "h"}]}},
            },
            True,
        ),
        ({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "status": {"phase": "Pending"}}, False),
        (
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
            },
            True,
        ),
        ({"apiVersion": "v1", "kind": "Pod", "status": {"phase": "Running"}}, False),
        ({"apiVersion": "v1", "kind": "Pod", "status": {"phase": "Succeeded"}}, True),
        (
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "status": {"currentHealthy": 1, "desiredHealthy": 2},
            },
            False,
        ),
        ({"apiVersion": "v1", "kind": "ConfigMap"}, True),
    ],
)
def test_health(obj: dict[str, Any], healthy: bool) -> None:
    assert NATIVE.interpret_health(obj) is healthy


def test_retain() -> None:
    desired = deployment({}, 3, labels={"resourcetemplate.karmada.io/retain-replicas": "true"})
    assert NATIVE.retain(desired, {"spec": {"replicas": 7}})["spec"]["replicas"] == 7
    assert NATIVE.retain(deployment({}, 3), {"spec": {"replicas": 7}})["spec"]["replicas"] == 3
    with pytest.raises(RetainError):
        NATIVE.retain(desired, {"spec": {}})
    service = {"apiVersion": "v1", "kind": "Service", "spec": {"ports": [{"port": 80}]}}
    observed = {"spec": {"clusterIP": "10.0.0.7", "healthCheckNodePort": 30000, "ports": [{"port": 80}]}}
    assert NATIVE.retain(service, observed)["spec"] == {
        "ports": [{"port": 80}],
        "healthCheckNodePort": 30000,
        "clusterIP": "10.0.0.7",
    }
    sa = {"apiVersion": "v1", "kind": "ServiceAccount", "secrets": [{"name": "a"}]}
    merged = NATIVE.retain(sa, {"secrets": [{"name": "b"}, {"name": "a"}], "imagePullSecrets": [{"name": "p"}]})
    assert merged["secrets"] == [{"name": "a"}, {"name": "b"}] and merged["imagePullSecrets"] == [{"name": "p"}]
    pod = {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [{"name": "c", "image": "x"}]}}
    observed_pod = {
        "spec": {
            "nodeName": "n1",
            "serviceAccountName": "default",
            "volumes": [{"name": "token"}],
            "containers": [{"name": "c", "volumeMounts": [{"name": "token", "mountPath": "/t"}]}],
        }
    }
    retained = NATIVE.retain(pod, observed_pod)["spec"]
    assert retained["nodeName"] == "n1" and retained["volumes"] == [{"name": "token"}]
    assert retained["containers"][0]["volumeMounts"] == [{"name": "token", "mountPath": "/t"}]
    token = {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token"}
    assert NATIVE.retain(token, {"data": {"token": "abc"}})["data"] == {"token": "abc"}
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "1"}}
    assert NATIVE.retain(cm, {"data": {"a": "2"}}) == cm


def _member(generation: int, template_generation: int, **status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "generation": generation,
            "annotations": {"resourcetemplate.karmada.io/generation": str(template_generation)},
        },
        "status": status,
    }


def test_reflect_deployment_status_keeps_counters_and_generations() -> None:
    member = _member(
        3,
        2,
        replicas=2,
        readyReplicas=2,
        availableReplicas=2,
        updatedReplicas=2,
        observedGeneration=3,
        conditions=[{"type": "Available"}],
    )
    assert NATIVE.reflect_status(member) == {
        "generation": 3,
        "resourceTemplateGeneration": 2,
        "observedGeneration": 3,
        "replicas": 2,
        "updatedReplicas": 2,
        "readyReplicas": 2,
        "availableReplicas": 2,
    }
    assert NATIVE.reflect_status({"apiVersion": "apps/v1", "kind": "Deployment", "status": {}}) is None
    assert (
        NATIVE.reflect_status({"apiVersion": "v1", "kind": "Service", "spec": {"type": "ClusterIP"}, "status": {}})
        is None
    )
    assert NATIVE.reflect_status({"apiVersion": "example.io/v1", "kind": "W", "status": {"x": [1]}}) == {"x": [1]}


def test_aggregate_deployment_status() -> None:
    template = deployment({}, 4, generation=2) | {"status": {"observedGeneration": 1}}
    items = [
        AggregatedStatusItem(
            cluster_name="m1",
            status=NATIVE.reflect_status(
                _member(
                    5,
                    2,
                    replicas=2,
                    availableReplicas=2,
                    readyReplicas=2,
                    updatedReplicas=2,
                    observedGeneration=5,
                )
            ),
        ),
        AggregatedStatusItem(
            cluster_name="m2",
            status=NATIVE.reflect_status(
                _member(
                    7,
                    2,
                    replicas=2,
                    availableReplicas=1,
                    readyReplicas=1,
                    updatedReplicas=2,
                    observedGeneration=7,
                )
            ),
        ),
    ]
    result = NATIVE.aggregate_status(template, items, NOW)
    assert result["status"] == {
        "observedGeneration": 2,
        "replicas": 4,
        "updatedReplicas": 4,
        "readyReplicas": 3,
        "availableReplicas": 3,
    }
    lagging = [
        *items[:1],
        AggregatedStatusItem(
            cluster_name="m2", status=NATIVE.reflect_status(_member(7, 1, replicas=2, observedGeneration=7))
        ),
    ]
    assert NATIVE.aggregate_status(template, lagging, NOW)["status"]["observedGeneration"] == 1


def test_aggregate_service_and_job_and_pod() -> None:
    service = {"apiVersion": "v1", "kind": "Service", "spec": {"type": "LoadBalancer"}}
    items = [
        AggregatedStatusItem(cluster_name="m1", status={"loadBalancer": {"ingress": [{"ip": "2.2.2.2"}]}}),
        AggregatedStatusItem(
            cluster_name="m2", status={"loadBalancer": {"ingress": [{"ip": "1.1.1.1"}, {"ip": "2.2.2.2"}]}}
        ),
    ]
    assert NATIVE.aggregate_status(service, items, NOW)["status"] == {
        "loadBalancer": {"ingress": [{"ip": "1.1.1.1"}, {"ip": "2.2.2.2"}]}
    }
    job = {"apiVersion": "batch/v1", "kind": "Job", "spec": {}}
    done = {
        "succeeded": 1,
        "conditions": [{"type": "Complete", "status": "True"}],
        "startTime": "2024-01-01T00:00:00Z",
        "completionTime": "2024-01-01T00:01:00Z",
    }
    late = {**done, "startTime": "2024-01-01T00:00:30Z", "completionTime": "2024-01-01T00:02:00Z"}
    status = NATIVE.aggregate_status(
        job,
        [
            AggregatedStatusItem(cluster_name="a", status=done),
            AggregatedStatusItem(cluster_name="b", status=late),
        ],
        NOW,
    )["status"]
    assert status["succeeded"] == 2 and status["startTime"] == "2024-01-01T00:00:00Z"
    assert status["completionTime"] == "2024-01-01T00:02:00Z"
    assert status["conditions"] == [
        {
            "type": "Complete",
            "status": "True",
            "lastProbeTime": NOW,
            "lastTransitionTime": NOW,
            "reason": "Completed",
            "message": "Job completed",
        }
    ]
    failed = NATIVE.aggregate_status(
        job,
        [
            AggregatedStatusItem(
                cluster_name="a", status={"failed": 1, "conditions": [{"type": "Failed", "status": "True"}]}
            )
        ],
        NOW,
    )
    assert failed["status"]["conditions"][0]["message"] == "Job executed failed in member clusters a"
    pod = {"apiVersion": "v1", "kind": "Pod"}
    pods = [
        AggregatedStatusItem(cluster_name="a", status={"phase": "Running"}),
        AggregatedStatusItem(cluster_name="b"),
    ]
    assert NATIVE.aggregate_status(pod, pods, NOW)["status"] == {"phase": "Pending", "containerStatuses": []}
