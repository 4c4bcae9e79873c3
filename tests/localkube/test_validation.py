"""kube-apiserver's validation of built-in kinds, as table tests.

The cases re-express those of kube-apiserver's own validation tests (not their
code): kubernetes/kubernetes pkg/apis/core/validation/validation_test.go
(TestValidateContainers, TestValidatePodSpec, TestValidateVolumes,
TestValidateTolerations, TestValidateService, TestValidateConfigMap,
TestValidateSecret, TestValidateNode, TestValidatePersistentVolumeClaim),
pkg/apis/apps/validation/validation_test.go (TestValidateDeployment,
TestValidateStatefulSet, TestValidateDaemonSet), pkg/apis/batch/validation/
validation_test.go (TestValidateJob, TestValidateCronJob),
pkg/apis/networking/validation/validation_test.go (TestValidateIngress),
pkg/apis/coordination/validation/validation_test.go (TestValidateLease),
pkg/apis/rbac/validation/validation_test.go (TestValidateRoleBinding,
TestValidatePolicyRule) and pkg/apis/core/validation/events_test.go.

Each case names the kind, an object (after defaulting, as validation sees it)
and the causes expected as ``field: message`` (empty for a valid object).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from localkube import defaults
from localkube.validation import validate
from localkube.validation.certificates import USAGES
from tests.servers import Raw

Obj = dict[str, Any]


def pod_spec(**overrides: Any) -> Obj:
    spec: Obj = {"containers": [{"name": "app", "image": "nginx:1.25"}]}
    spec.update(overrides)
    defaults.pod_spec(spec)
    return spec


def pod(**overrides: Any) -> Obj:
    return {"metadata": {"name": "p", "namespace": "default"}, "spec": pod_spec(**overrides)}


def container(**fields: Any) -> Obj:
    return {"name": "app", "image": "nginx:1.25", **fields}


LABELS = {"app": "web"}


def template(spec: Obj | None = None, labels: Obj | None = None) -> Obj:
    return {"metadata": {"labels": LABELS if labels is None else labels}, "spec": spec or pod_spec()}


def workload(kind: str, **spec: Any) -> Obj:
    body: Obj = {"selector": {"matchLabels": LABELS}, "template": template(), **spec}
    defaults.workload(kind, body)
    return {"metadata": {"name": "w", "namespace": "default"}, "spec": body}


def service(**spec: Any) -> Obj:
    body: Obj = {"type": "ClusterIP", "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}], **spec}
    return {"metadata": {"name": "s", "namespace": "default"}, "spec": body}


LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end"
    " with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is"
    " '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)

CASES: list[tuple[str, str, Obj, list[str]]] = [
    # -- pods: containers
    ("valid pod", "Pod", pod(), []),
    ("no containers", "Pod", pod(containers=[]), ["spec.containers: Required value"]),
    (
        "container without name",
        "Pod",
        pod(containers=[container(name="")]),
        ["spec.containers[0].name: Required value"],
    ),
    (
        "container without image",
        "Pod",
        pod(containers=[container(image="")]),
        ["spec.containers[0].image: Required value"],
    ),
    (
        "container name not a DNS label",
        "Pod",
        pod(containers=[container(name="Bad_Name")]),
        [f'spec.containers[0].name: Invalid value: "Bad_Name": {LABEL_MSG}'],
    ),
    (
        "two containers with one name",
        "Pod",
        pod(containers=[container(), container()]),
        ['spec.containers[1].name: Duplicate value: "app"'],
    ),
    (
        "init container named like a container",
        "Pod",
        pod(initContainers=[container()]),
        ['spec.containers[0].name: Duplicate value: "app"'],
    ),
    (
        "unsupported pull policy",
        "Pod",
        pod(containers=[container(imagePullPolicy="Sometimes")]),
        [
            'spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: '
            '"Always", "IfNotPresent", "Never"'
        ],
    ),
    (
        "port out of range, bad protocol",
        "Pod",
        pod(containers=[container(ports=[{"containerPort": 70000, "protocol": "HTTP"}])]),
        [
            "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
            'spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
        ],
    ),
    (
        "port name not an IANA service name",
        "Pod",
        pod(containers=[container(ports=[{"name": "a--b", "containerPort": 80, "protocol": "TCP"}])]),
        ['spec.containers[0].ports[0].name: Invalid value: "a--b": must not contain consecutive hyphens'],
    ),
    (
        "env var without a name, and one with '='",
        "Pod",
        pod(containers=[container(env=[{"value": "x"}, {"name": "A=B"}])]),
        [
            "spec.containers[0].env[0].name: Required value",
            'spec.containers[0].env[1].name: Invalid value: "A=B": a valid environment variable name must consist'
            " only of printable ASCII characters other than '='",
        ],
    ),
    (
        "requests above limits",
        "Pod",
        pod(containers=[container(resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1"}})]),
        ['spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1'],
    ),
    # -- pods: volumes and mounts
    (
        "volume without a type, mount of an unknown volume",
        "Pod",
        pod(volumes=[{"name": "data"}], containers=[container(volumeMounts=[{"name": "other", "mountPath": "/d"}])]),
        [
            "spec.volumes[0]: Required value: must specify a volume type",
            'spec.containers[0].volumeMounts[0].name: Not found: "other"',
        ],
    ),
    (
        "two volumes with one name",
        "Pod",
        pod(volumes=[{"name": "v", "emptyDir": {}}, {"name": "v", "emptyDir": {}}]),
        ['spec.volumes[1].name: Duplicate value: "v"'],
    ),
    (
        "volume with two types",
        "Pod",
        pod(volumes=[{"name": "v", "emptyDir": {}, "hostPath": {"path": "/x"}}]),
        ["spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type"],
    ),
    # -- pods: policies and scheduling
    (
        "unsupported restart and DNS policies",
        "Pod",
        pod(restartPolicy="Sometimes", dnsPolicy="Google"),
        [
            'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
            'spec.dnsPolicy: Unsupported value: "Google": supported values: "ClusterFirstWithHostNet",'
            ' "ClusterFirst", "Default", "None"',
        ],
    ),
    (
        "tolerations: missing operator with no key, Exists with a value, unknown operator and effect",
        "Pod",
        pod(
            tolerations=[
                {"value": "x"},
                {"key": "k", "operator": "Exists", "value": "v"},
                {"key": "k", "operator": "In", "effect": "Never"},
            ]
        ),
        [
            'spec.tolerations[0].operator: Invalid value: "": operator must be Exists when `key` is empty,'
            ' which means "match all values and all keys"',
            "spec.tolerations[1].operator: Invalid value: \"v\": value must be empty when `operator` is 'Exists'",
            'spec.tolerations[2].operator: Unsupported value: "In": supported values: "Equal", "Exists"',
            'spec.tolerations[2].effect: Unsupported value: "Never": supported values: "NoSchedule",'
            ' "PreferNoSchedule", "NoExecute"',
        ],
    ),
    (
        "activeDeadlineSeconds of 0",
        "Pod",
        pod(activeDeadlineSeconds=0),
        ["spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive"],
    ),
    (
        "tolerations: empty key with Equal, seconds without NoExecute",
        "Pod",
        pod(
            tolerations=[
                {"operator": "Equal", "value": "x"},
                {"key": "k", "effect": "NoSchedule", "tolerationSeconds": 5},
            ]
        ),
        [
            'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty,'
            ' which means "match all values and all keys"',
            "spec.tolerations[1].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when"
            " `tolerationSeconds` is set",
        ],
    ),
    # -- workloads
    ("valid deployment", "Deployment", workload("Deployment"), []),
    (
        "deployment selector does not match template labels",
        "Deployment",
        workload("Deployment", template=template(labels={"app": "other"})),
        [
            'spec.template.metadata.labels: Invalid value: map[string]string{"app":"other"}: '
            "`selector` does not match template `labels`"
        ],
    ),
    (
        "deployment with negative replicas and no selector",
        "Deployment",
        {"metadata": {"name": "w"}, "spec": {**workload("Deployment")["spec"], "replicas": -1, "selector": None}},
        ["spec.replicas: Invalid value: -1: must be greater than or equal to 0", "spec.selector: Required value"],
    ),
    (
        "deployment template must restart always",
        "Deployment",
        workload("Deployment", template=template(pod_spec(restartPolicy="Never"))),
        ['spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"'],
    ),
    (
        "deployment template container errors carry the template path",
        "Deployment",
        workload("Deployment", template=template(pod_spec(containers=[container(name="Bad_Name", image="")]))),
        [
            f'spec.template.spec.containers[0].name: Invalid value: "Bad_Name": {LABEL_MSG}',
            "spec.template.spec.containers[0].image: Required value",
        ],
    ),
    (
        "deployment rolling update with both maxima 0",
        "Deployment",
        workload(
            "Deployment", strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}
        ),
        ["spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0"],
    ),
    (
        "recreate deployment with a rolling update",
        "Deployment",
        workload("Deployment", strategy={"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}),
        ["spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"],
    ),
    ("valid statefulset", "StatefulSet", workload("StatefulSet"), []),
    (
        "statefulset with unknown pod management",
        "StatefulSet",
        workload("StatefulSet", podManagementPolicy="Random"),
        ['spec.podManagementPolicy: Unsupported value: "Random": supported values: "OrderedReady", "Parallel"'],
    ),
    (
        "statefulset mounting its claim template",
        "StatefulSet",
        workload(
            "StatefulSet",
            template=template(pod_spec(containers=[container(volumeMounts=[{"name": "data", "mountPath": "/d"}])])),
            volumeClaimTemplates=[{"metadata": {"name": "data"}, "spec": {}}],
        ),
        [],
    ),
    (
        "statefulset mounting a volume it has not",
        "StatefulSet",
        workload(
            "StatefulSet",
            template=template(pod_spec(containers=[container(volumeMounts=[{"name": "gone", "mountPath": "/d"}])])),
        ),
        ['spec.template.spec.containers[0].volumeMounts[0].name: Not found: "gone"'],
    ),
    ("valid daemonset", "DaemonSet", workload("DaemonSet"), []),
    ("valid replicaset", "ReplicaSet", workload("ReplicaSet"), []),
    (
        "replicaset with an empty selector",
        "ReplicaSet",
        workload("ReplicaSet", selector={}),
        ['spec.selector: Invalid value: "": empty selector is invalid for replicaset'],
    ),
    (
        "job template restarting always",
        "Job",
        {
            "metadata": {"name": "j"},
            "spec": {"selector": {"matchLabels": LABELS}, "template": template(pod_spec(restartPolicy="Always"))},
        },
        ['spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"'],
    ),
    (
        "job with negative parallelism",
        "Job",
        {
            "metadata": {"name": "j"},
            "spec": {
                "parallelism": -1,
                "selector": {"matchLabels": LABELS},
                "template": template(pod_spec(restartPolicy="Never")),
            },
        },
        ["spec.parallelism: Invalid value: -1: must be greater than or equal to 0"],
    ),
    (
        "cronjob with a bad schedule",
        "CronJob",
        {
            "metadata": {"name": "c"},
            "spec": {
                "schedule": "every minute",
                "concurrencyPolicy": "Allow",
                "jobTemplate": {"spec": {"template": template(pod_spec(restartPolicy="OnFailure"))}},
            },
        },
        ['spec.schedule: Invalid value: "every minute": expected exactly 5 fields, found 2: every minute'],
    ),
    # -- services
    ("valid service", "Service", service(), []),
    (
        "service without ports",
        "Service",
        service(ports=[]),
        ["spec.ports: Required value"],
    ),
    (
        "two unnamed ports, one out of range",
        "Service",
        service(ports=[{"port": 80, "protocol": "TCP"}, {"port": 0, "protocol": "TCP"}]),
        [
            "spec.ports[0].name: Required value",
            "spec.ports[1].name: Required value",
            "spec.ports[1].port: Invalid value: 0: must be between 1 and 65535, inclusive",
        ],
    ),
    (
        "node port on a ClusterIP service",
        "Service",
        service(ports=[{"port": 80, "protocol": "TCP", "nodePort": 30080}]),
        ["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"],
    ),
    (
        "external name service without a name",
        "Service",
        service(type="ExternalName", ports=[]),
        ["spec.externalName: Required value"],
    ),
    (
        "unsupported type and session affinity",
        "Service",
        service(type="Cluster", sessionAffinity="Sticky"),
        [
            'spec.type: Unsupported value: "Cluster": supported values: "ClusterIP", "ExternalName",'
            ' "LoadBalancer", "NodePort"',
            'spec.sessionAffinity: Unsupported value: "Sticky": supported values: "ClientIP", "None"',
        ],
    ),
    # -- configmaps and secrets
    ("valid configmap", "ConfigMap", {"metadata": {"name": "c"}, "data": {"a.b-c_D": "1"}}, []),
    (
        "configmap key with a space, key '..'",
        "ConfigMap",
        {"metadata": {"name": "c"}, "data": {"a b": "1", "..": "2"}},
        [
            "data[a b]: Invalid value: \"a b\": a valid config key must consist of alphanumeric characters, '-',"
            " '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is"
            " '[-._a-zA-Z0-9]+')",
            "data[..]: Invalid value: \"..\": must not be '..'",
        ],
    ),
    (
        "configmap key in data and binaryData",
        "ConfigMap",
        {"metadata": {"name": "c"}, "data": {"k": "1"}, "binaryData": {"k": "MQ=="}},
        ['binaryData[k]: Invalid value: "k": duplicate of key present in data'],
    ),
    (
        "configmap over 1 MiB",
        "ConfigMap",
        {"metadata": {"name": "c"}, "data": {"a": "x" * 600_000, "b": "y" * 600_000}},
        ["Too long: may not be more than 1048576 bytes"],
    ),
    (
        "secret over 1 MiB once decoded",
        "Secret",
        {"metadata": {"name": "s"}, "type": "Opaque", "data": {"a": "QUFB" * 350_000}},
        ["data: Too long: may not be more than 1048576 bytes"],
    ),
    ("secret of 1 MiB", "Secret", {"metadata": {"name": "s"}, "data": {"a": "QUFB" * 349_525 + "QQ=="}}, []),
    (
        "TLS secret without its keys",
        "Secret",
        {"metadata": {"name": "s"}, "type": "kubernetes.io/tls", "data": {}},
        ["data[tls.crt]: Required value", "data[tls.key]: Required value"],
    ),
    # -- cluster-scoped and small kinds
    (
        "node taint with no effect, twice",
        "Node",
        {
            "metadata": {"name": "n"},
            "spec": {
                "taints": [{"key": "k", "effect": "NoSchedule"}, {"key": "k", "effect": "NoSchedule"}, {"key": "x"}]
            },
        },
        ['spec.taints[1]: Duplicate value: "k:NoSchedule"', "spec.taints[2].effect: Required value"],
    ),
    (
        "PVC without access modes or storage",
        "PersistentVolumeClaim",
        {"metadata": {"name": "c"}, "spec": {"resources": {}}},
        [
            "spec.accessModes: Required value: at least 1 access mode is required",
            "spec.resources[storage]: Required value",
        ],
    ),
    (
        "valid PVC",
        "PersistentVolumeClaim",
        {
            "metadata": {"name": "c"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        },
        [],
    ),
    (
        "ingress path without a type, relative path",
        "Ingress",
        {
            "metadata": {"name": "i"},
            "spec": {
                "rules": [
                    {
                        "host": "example.com",
                        "http": {
                            "paths": [{"path": "web", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]
                        },
                    }
                ]
            },
        },
        [
            "spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified",
            'spec.rules[0].http.paths[0].path: Invalid value: "web": must be an absolute path',
        ],
    ),
    (
        "ingress service port with name and number",
        "Ingress",
        {
            "metadata": {"name": "i"},
            "spec": {"defaultBackend": {"service": {"name": "web", "port": {"name": "http", "number": 80}}}},
        },
        ['spec.defaultBackend.service.port: Invalid value: "": cannot set both port name & port number'],
    ),
    (
        "lease with zero duration and negative transitions",
        "Lease",
        {"metadata": {"name": "l"}, "spec": {"leaseDurationSeconds": 0, "leaseTransitions": -1}},
        [
            "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0",
            "spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0",
        ],
    ),
    (
        "event about an object in another namespace",
        "Event",
        {"metadata": {"name": "e", "namespace": "default"}, "involvedObject": {"kind": "Pod", "namespace": "other"}},
        ['involvedObject.namespace: Invalid value: "other": does not match event.namespace'],
    ),
    (
        "role rule without verbs, api groups or resources",
        "Role",
        {"metadata": {"name": "r"}, "rules": [{}]},
        [
            "rules[0].verbs: Required value: verbs must contain at least one value",
            "rules[0].apiGroups: Required value: resource rules must supply at least one api group",
            "rules[0].resources: Required value: resource rules must supply at least one resource",
        ],
    ),
    (
        "namespaced rule on non-resource URLs",
        "Role",
        {"metadata": {"name": "r"}, "rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]},
        [
            'rules[0].nonResourceURLs: Invalid value: []string{"/healthz"}: '
            "namespaced rules cannot apply to non-resource URLs"
        ],
    ),
    (
        "CSR with no request, a signer without a path, an unknown and a repeated usage",
        "CertificateSigningRequest",
        {
            "metadata": {"name": "c"},
            "spec": {"request": "", "signerName": "example.com", "usages": ["client auth", "client auth", "flying"]},
        },
        [
            'spec.request: Invalid value: "[]byte": PEM block type must be CERTIFICATE REQUEST',
            'spec.signerName: Invalid value: "example.com": must be a fully qualified domain and path of the form'
            " 'example.com/signer-name'",
            'spec.usages[2]: Unsupported value: "flying": supported values: ' + ", ".join(f'"{u}"' for u in USAGES),
            'spec.usages: Invalid value: "list": duplicate usages',
        ],
    ),
    (
        "cluster role binding to a Role, service account without namespace",
        "ClusterRoleBinding",
        {
            "metadata": {"name": "b"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
            "subjects": [{"kind": "ServiceAccount", "name": "sa"}],
        },
        [
            'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
            "subjects[0].namespace: Required value",
        ],
    ),
]


@pytest.mark.parametrize(("kind", "obj", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_validation(kind: str, obj: Obj, expected: list[str]) -> None:
    causes = validate(kind, copy.deepcopy(obj))
    assert [f"{c.field}: {c.message}" if c.field else c.message for c in causes] == expected


UPDATES: list[tuple[str, str, Obj, Obj, list[str]]] = [
    (
        "service cluster IP may not change",
        "Service",
        service(clusterIP="10.96.0.10", clusterIPs=["10.96.0.10"]),
        service(clusterIP="10.96.0.11"),
        ['spec.clusterIPs[0]: Invalid value: []string{"10.96.0.11"}: may not change once set'],
    ),
    (
        "headless service may become headless again",
        "Service",
        service(clusterIP="None", clusterIPs=["None"]),
        service(clusterIP="None", clusterIPs=["None"]),
        [],
    ),
    (
        "deployment selector is immutable",
        "Deployment",
        workload("Deployment"),
        workload(
            "Deployment",
            selector={"matchLabels": {"app": "web", "tier": "x"}},
            template=template(labels={"app": "web", "tier": "x"}),
        ),
        [
            'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web", "tier":"x"},'
            " MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"
        ],
    ),
    (
        "immutable configmap keeps its data",
        "ConfigMap",
        {"metadata": {"name": "c"}, "immutable": True, "data": {"a": "1"}},
        {"metadata": {"name": "c"}, "immutable": True, "data": {"a": "2"}},
        ["data: Forbidden: field is immutable when `immutable` is set"],
    ),
    (
        "bound PVC spec is immutable but for its requests",
        "PersistentVolumeClaim",
        {
            "metadata": {"name": "c"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "volumeName": "v",
                "resources": {"requests": {"storage": "1Gi"}},
            },
        },
        {
            "metadata": {"name": "c"},
            "spec": {
                "accessModes": ["ReadWriteMany"],
                "volumeName": "v",
                "resources": {"requests": {"storage": "2Gi"}},
            },
        },
        [
            "spec: Forbidden: spec is immutable after creation except resources.requests and"
            " volumeAttributesClassName for bound claims"
        ],
    ),
    (
        "role binding cannot change its role",
        "RoleBinding",
        {"metadata": {"name": "b"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "a"}},
        {"metadata": {"name": "b"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "b"}},
        [
            'roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"Role", Name:"b"}: '
            "cannot change roleRef"
        ],
    ),
]


@pytest.mark.parametrize(("kind", "old", "new", "expected"), [c[1:] for c in UPDATES], ids=[c[0] for c in UPDATES])
def test_update_validation(kind: str, old: Obj, new: Obj, expected: list[str]) -> None:
    causes = validate(kind, copy.deepcopy(new), copy.deepcopy(old))
    assert [f"{c.field}: {c.message}" for c in causes] == expected


PODS = "/api/v1/namespaces/default/pods"


async def test_invalid_pod_is_refused_with_every_cause(raw: Raw) -> None:
    """The reproduction of the issue: 422 Invalid, kube's aggregated message and one cause per field."""
    body = {
        "metadata": {"name": "x"},
        "spec": {"containers": [{"name": ""}, {"name": "Bad_Name", "image": "i"}, {"name": "Bad_Name", "image": "i"}]},
    }
    status, answer, _ = await raw.request("POST", PODS, body)
    assert status == 422, answer
    assert answer["reason"] == "Invalid"
    assert answer["message"] == (
        'Pod "x" is invalid: [spec.containers[0].name: Required value, spec.containers[0].image: Required value, '
        f'spec.containers[1].name: Invalid value: "Bad_Name": {LABEL_MSG}, '
        f'spec.containers[2].name: Invalid value: "Bad_Name": {LABEL_MSG}, '
        'spec.containers[2].name: Duplicate value: "Bad_Name"]'
    )
    assert answer["details"]["causes"][0] == {
        "reason": "FieldValueRequired",
        "message": "Required value",
        "field": "spec.containers[0].name",
    }
    assert answer["details"]["causes"][-1]["reason"] == "FieldValueDuplicate"
    assert (await raw.request("GET", f"{PODS}/x"))[0] == 404


async def test_invalid_deployment_template_is_refused(raw: Raw) -> None:
    body = {
        "metadata": {"name": "bad-template"},
        "spec": {
            "selector": {"matchLabels": {"app": "a"}},
            "template": {"metadata": {"labels": {"app": "b"}}, "spec": {"containers": [{"name": "c"}]}},
        },
    }
    status, answer, _ = await raw.request("POST", "/apis/apps/v1/namespaces/default/deployments", body)
    assert status == 422, answer
    fields = [c["field"] for c in answer["details"]["causes"]]
    assert fields == ["spec.template.metadata.labels", "spec.template.spec.containers[0].image"]
    assert answer["message"].startswith('Deployment.apps "bad-template" is invalid: [')


async def test_generate_name_is_validated_as_a_prefix(raw: Raw) -> None:
    status, created, _ = await raw.request(
        "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"generateName": "ok-"}}
    )
    assert status == 201 and created["metadata"]["name"].startswith("ok-")
    status, answer, _ = await raw.request(
        "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"generateName": "Bad-"}}
    )
    assert status == 422
    assert [c["field"] for c in answer["details"]["causes"]] == ["metadata.name", "metadata.generateName"]


async def test_metadata_labels_and_annotation_size(raw: Raw) -> None:
    labelled = {"metadata": {"name": "labelled", "labels": {"bad key": "v", "ok": "bad value!"}}}
    status, answer, _ = await raw.request("POST", "/api/v1/namespaces/default/configmaps", labelled)
    assert status == 422
    assert [c["field"] for c in answer["details"]["causes"]] == ["metadata.labels", "metadata.labels"]
    assert answer["details"]["causes"][0]["message"].startswith('Invalid value: "bad key": name part must consist of')
    big = {"metadata": {"name": "annotated", "annotations": {"a": "x" * 262144}}}
    status, answer, _ = await raw.request("POST", "/api/v1/namespaces/default/configmaps", big)
    assert status == 422
    assert answer["details"]["causes"] == [
        {
            "reason": "FieldValueTooLong",
            "message": "Too long: may not be more than 262144 bytes",
            "field": "metadata.annotations",
        }
    ]
    fits = {"metadata": {"name": "annotated", "annotations": {"a": "x" * 262143}}}
    assert (await raw.request("POST", "/api/v1/namespaces/default/configmaps", fits))[0] == 201
