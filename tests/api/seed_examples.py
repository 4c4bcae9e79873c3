"""Re-indented YAML of the seed examples that were published flattened to one line.

Each entry is the example exactly as the seed prints it, with only newlines
and indentation restored; ``tests/api/test_seed_examples.py`` checks that each
flattens back to text found in its seed, and that every flattened example of
every seed is covered here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FlattenedExample:
    """A reconstructed example; ``invalid`` names the field Karmada would reject."""

    seed: str
    name: str
    text: str
    invalid: str = ""


EXAMPLES: tuple[FlattenedExample, ...] = (
    FlattenedExample(
        "000",
        "myapp-deployment",
        """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: myapp
  labels:
    app: myapp
spec:
  replicas: 1
  selector:
    matchLabels:
      app: myapp
  template:
    metadata:
      labels:
        app: myapp
    spec:
      containers:
        - image: nginx
          name: nginx
          volumeMounts:
            - name: configmap
              mountPath: "/configmap"
      volumes:
        - name: configmap
          configMap:
            name: my-config
""",
    ),
    FlattenedExample(
        "000",
        "myapp-propagation",
        """\
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: myapp-propagation
spec:
  propagateDeps: true
  resourceSelectors:
    - apiVersion: apps/v1
      kind: Deployment
      name: myapp
  placement:
    clusterAffinity:
      clusterNames:
        - member1
        - member2
    replicaScheduling:
      replicaSchedulingType: Duplicated
""",
    ),
    FlattenedExample(
        "000",
        "my-config",
        """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: my-config
data:
  nginx.properties: |
    proxy-connect-timeout: "10s"
    proxy-read-timeout: "10s"
    client-max-body-size: "2m"
""",
    ),
    FlattenedExample(
        "000",
        "attached-binding-spec",
        """\
spec:
  requiredBy:
    - clusters:
        - name: member1
          replicas: 1
        - name: member2
          replicas: 1
      name: myapp-deployment
      namespace: default
  resource:
    apiVersion: v1
    kind: ConfigMap
    name: my-config
    namespace: default
    resourceVersion: "757297"
""",
    ),
    FlattenedExample(
        "004",
        "order-service-policy",
        """\
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: order-service-policy
spec:
  resourceSelectors:
    - apiVersion: apps/v1
      kind: Deployment
      name: order-service
  placement:
    clusterAffinity:
      clusterNames: [beijing, shanghai, singapore]
""",
    ),
    FlattenedExample(
        "004",
        "cluster-names",
        """\
placement:
  clusterAffinity:
    clusterNames: [cluster-1, cluster-2]
""",
    ),
    # The seed writes a label selector where a list of cluster names belongs:
    # Karmada's schema rejects it, and so do we, naming the field.
    FlattenedExample(
        "004",
        "cluster-affinities-label-typo",
        """\
placement:
  clusterAffinities:
    - affinityName: production-clusters
      clusterNames:
        - matchLabels:
            environment: prod
""",
        invalid="spec.placement.clusterAffinities[0].clusterNames[0]",
    ),
    FlattenedExample(
        "004",
        "static-weights",
        """\
replicaScheduling:
  replicaDivisionPreference: Weighted
  replicaSchedulingType: Divided
  weightPreference:
    staticWeightList:
      - targetCluster:
          clusterNames: [cluster-1]
        weight: 70
      - targetCluster:
          clusterNames: [cluster-2]
        weight: 30
""",
    ),
    FlattenedExample(
        "004",
        "duplicated",
        """\
replicaScheduling:
  replicaSchedulingType: Duplicated
""",
    ),
    FlattenedExample(
        "004",
        "cluster-tolerations",
        """\
placement:
  clusterTolerations:
    - key: cluster-failure
      operator: Exists
      effect: NoExecute
      tolerationSeconds: 3600
""",
    ),
)
