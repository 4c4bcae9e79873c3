"""The resource detector against localkube, driven with the real kubectl:
``karmada-controlplane --controllers=detector,binding`` claims templates for policies and
writes their bindings; policy deletion releases; CRD kinds installed after the
policy, cluster-scoped templates, priority and preemption; binding GC."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.pullmode import PullMode, wait_for
from tests.servers import ServerThread

PP_ID = "propagationpolicy.karmada.io/permanent-id"
CPP_ID = "clusterpropagationpolicy.karmada.io/permanent-id"
PP_NAME = "propagationpolicy.karmada.io/name"
PP_NS = "propagationpolicy.karmada.io/namespace"
CPP_NAME = "clusterpropagationpolicy.karmada.io/name"
RB_ID = "resourcebinding.karmada.io/permanent-id"
CRB_ID = "clusterresourcebinding.karmada.io/permanent-id"


@pytest.fixture(scope="module")
def karmada(localkube: ServerThread, workdir: Path) -> Iterator[PullMode]:
    env = PullMode(localkube, workdir).install()
    env.start_controlplane("--controllers=detector,binding", "--feature-gates=PropagationPolicyPreemption=true")
    try:
        yield env
    finally:
        env.stop()


def apply(karmada: PullMode, *docs: dict[str, Any]) -> None:
    karmada.admin("apply", "-f", "-", stdin=yaml.safe_dump_all(docs))


def get(karmada: PullMode, *what: str) -> dict[str, Any] | None:
    result = karmada.admin("get", *what, "-o", "json", check=False)
    return json.loads(result.stdout) if result.returncode == 0 else None


def deployment(name: str, namespace: str = "default", replicas: int = 3, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": name, **labels}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [
                        {"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}
                    ]
                },
            },
        },
    }


def policy(
    name: str, selectors: list[dict[str, Any]], namespace: str | None = "default", **spec: Any
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy" if namespace else "ClusterPropagationPolicy",
        "metadata": meta,
        "spec": {"resourceSelectors": selectors, **spec},
    }


def labels(obj: dict[str, Any] | None) -> dict[str, str]:
    return dict(((obj or {}).get("metadata") or {}).get("labels") or {})


def annos(obj: dict[str, Any] | None) -> dict[str, str]:
    return dict(((obj or {}).get("metadata") or {}).get("annotations") or {})


def events(karmada: PullMode, name: str, namespace: str = "default") -> list[tuple[str, str]]:
    found = get(karmada, "events", "-n", namespace, f"--field-selector=involvedObject.name={name}") or {}
    return [(e["reason"], e["message"]) for e in found.get("items") or []]


def test_a_deployment_and_its_policy_make_a_binding(karmada: PullMode) -> None:
    placement = {
        "clusterAffinity": {"clusterNames": ["member1", "member2"]},
        "replicaScheduling": {"replicaSchedulingType": "Divided"},
        "spreadConstraints": [{"maxGroups": 2}],
    }
    apply(
        karmada,
        deployment("nginx"),
        policy(
            "nginx-pp",
            [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}],
            placement=placement,
            propagateDeps=True,
            failover={"application": {"decisionConditions": {"tolerationSeconds": 60}}},
        ),
    )
    rb = wait_for(lambda: get(karmada, "rb", "nginx-deployment", "-n", "default"), what="the binding")
    pp = get(karmada, "pp", "nginx-pp", "-n", "default")
    assert pp is not None
    policy_id = labels(pp)[PP_ID]
    assert "karmada.io/propagation-policy-controller" in pp["metadata"]["finalizers"]
    assert "namespace" not in pp["spec"]["resourceSelectors"][0]  # defaults are applied when read, not written

    template = get(karmada, "deploy", "nginx", "-n", "default")
    assert template is not None
    assert labels(template)[PP_ID] == policy_id
    assert annos(template)[PP_NAME] == "nginx-pp" and annos(template)[PP_NS] == "default"

    assert labels(rb)[PP_ID] == policy_id and labels(rb)[RB_ID]
    assert annos(rb)[PP_NAME] == "nginx-pp"
    (owner,) = rb["metadata"]["ownerReferences"]
    assert owner == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "nginx",
        "uid": template["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    spec = rb["spec"]
    assert spec["resource"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "namespace": "default",
        "name": "nginx",
        "uid": template["metadata"]["uid"],
        "resourceVersion": template["metadata"]["resourceVersion"],
    }
    assert spec["replicas"] == 3
    assert spec["replicaRequirements"]["resourceRequest"] == {"cpu": "100m", "memory": "64Mi"}
    assert spec["placement"]["replicaScheduling"] == {
        "replicaSchedulingType": "Divided",
        "replicaDivisionPreference": "Weighted",  # the webhook's default
    }
    assert spec["placement"]["spreadConstraints"] == [{"spreadByField": "cluster", "maxGroups": 2, "minGroups": 1}]
    assert spec["propagateDeps"] is True
    assert spec["failover"]["application"]["gracePeriodSeconds"] == 600
    assert spec["schedulerName"] == "default-scheduler" and spec["conflictResolution"] == "Abort"
    assert "clusters" not in spec
    assert ("ApplyPolicySucceed", "Apply policy(default/nginx-pp) succeed") in events(karmada, "nginx")


def rb_of(karmada: PullMode, name: str) -> dict[str, Any] | None:
    return get(karmada, "rb", name, "-n", "default")


def test_spec_changes_flow_status_changes_write_nothing(karmada: PullMode) -> None:
    karmada.admin("scale", "deploy", "nginx", "-n", "default", "--replicas=5")
    wait_for(lambda: (rb_of(karmada, "nginx-deployment") or {})["spec"].get("replicas") == 5, what="replicas")
    # the scheduler's field is left alone: write one as the scheduler would
    karmada.admin(
        "patch", "rb", "nginx-deployment", "-n", "default", "--type=merge",
        "-p", json.dumps({"spec": {"clusters": [{"name": "member1", "replicas": 5}]}}),
    )  # fmt: skip
    generation = rb_of(karmada, "nginx-deployment")["metadata"]["generation"]  # type: ignore[index]
    # a status write on the template must not make the detector write the binding ...
    karmada.admin(
        "patch", "deploy", "nginx", "-n", "default", "--subresource=status", "--type=merge",
        "-p", json.dumps({"status": {"observedGeneration": 2, "replicas": 5}}),
    )  # fmt: skip
    # ... so the policy edit below is the binding's only write since
    karmada.admin(
        "patch", "pp", "nginx-pp", "-n", "default", "--type=merge",
        "-p", json.dumps({"spec": {"placement": {"clusterAffinity": {"clusterNames": ["member3"]}}}}),
    )  # fmt: skip
    rb = wait_for(
        lambda: (
            (b := rb_of(karmada, "nginx-deployment"))
            and b["spec"]["placement"].get("clusterAffinity") == {"clusterNames": ["member3"]}
            and b
        ),
        what="the placement edit to reach the binding",
    )
    assert rb["spec"]["clusters"] == [{"name": "member1", "replicas": 5}]
    assert rb["metadata"]["generation"] == generation + 1


def test_a_template_no_policy_selects_gets_nothing(karmada: PullMode) -> None:
    apply(karmada, deployment("lonely"), {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c1"}})
    apply(
        karmada,
        deployment("canary"),
        policy("canary-pp", [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "canary"}]),
    )
    wait_for(lambda: get(karmada, "rb", "canary-deployment", "-n", "default"), what="canary's binding")
    assert get(karmada, "rb", "lonely-deployment", "-n", "default") is None
    lonely = get(karmada, "deploy", "lonely", "-n", "default")
    assert PP_ID not in labels(lonely)


def test_deleting_the_policy_releases_and_another_policy_takes_over(karmada: PullMode) -> None:
    apply(
        karmada,
        deployment("web", tier="front"),
        policy("web-high", [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}], priority=10),
        policy(
            "web-low",
            [{"apiVersion": "apps/v1", "kind": "Deployment", "labelSelector": {"matchLabels": {"tier": "front"}}}],
            priority=1,
        ),
    )
    rb = wait_for(lambda: get(karmada, "rb", "web-deployment", "-n", "default"), what="web's binding")
    assert annos(rb)[PP_NAME] == "web-high"
    rb_id = labels(rb)[RB_ID]
    karmada.admin("delete", "pp", "web-high", "-n", "default", "--wait=true", "--timeout=20s")
    # released, then re-matched by the remaining policy, which rewrites the same binding
    rb = wait_for(
        lambda: (
            (b := get(karmada, "rb", "web-deployment", "-n", "default")) and annos(b).get(PP_NAME) == "web-low" and b
        ),
        what="web-low to take the template",
    )
    assert labels(rb)[RB_ID] == rb_id  # the same binding object
    low = get(karmada, "pp", "web-low", "-n", "default")
    template = get(karmada, "deploy", "web", "-n", "default")
    assert labels(template)[PP_ID] == labels(low)[PP_ID]
    # the last policy goes: template and binding are released, the binding stays
    karmada.admin("delete", "pp", "web-low", "-n", "default", "--wait=true", "--timeout=20s")
    template = wait_for(
        lambda: (t := get(karmada, "deploy", "web", "-n", "default")) and PP_ID not in labels(t) and t,
        what="the template to be released",
    )
    assert PP_NAME not in annos(template)
    rb = get(karmada, "rb", "web-deployment", "-n", "default")
    assert rb is not None and PP_ID not in labels(rb) and PP_NAME not in annos(rb)


def test_a_policy_that_stops_selecting_releases(karmada: PullMode) -> None:
    apply(
        karmada,
        deployment("shop", tier="back"),
        policy(
            "back-pp",
            [{"apiVersion": "apps/v1", "kind": "Deployment", "labelSelector": {"matchLabels": {"tier": "back"}}}],
        ),
    )
    wait_for(lambda: get(karmada, "rb", "shop-deployment", "-n", "default"), what="shop's binding")
    karmada.admin("label", "deploy", "shop", "-n", "default", "tier=other", "--overwrite")
    # a template whose labels moved away keeps its claim until the policy changes (Karmada's rule) ...
    karmada.admin(
        "patch", "pp", "back-pp", "-n", "default", "--type=merge", "-p", json.dumps({"spec": {"priority": 2}})
    )
    # ... and then it is released from both
    wait_for(lambda: PP_ID not in labels(get(karmada, "deploy", "shop", "-n", "default")), what="shop released")
    wait_for(
        lambda: PP_ID not in labels(get(karmada, "rb", "shop-deployment", "-n", "default")), what="binding released"
    )


CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
            }
        ],
    },
}


def test_a_custom_kind_installed_after_its_policy(karmada: PullMode) -> None:
    apply(karmada, policy("widgets", [{"apiVersion": "example.com/v1", "kind": "Widget"}]))
    wait_for(lambda: PP_ID in labels(get(karmada, "pp", "widgets", "-n", "default")), what="the policy admitted")
    apply(karmada, CRD)
    karmada.admin("wait", "--for=condition=Established", "crd/widgets.example.com", "--timeout=20s")
    apply(
        karmada,
        {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "w1", "namespace": "default"},
            "spec": {"size": 1},
        },
    )
    rb = wait_for(lambda: get(karmada, "rb", "w1-widget", "-n", "default"), what="the widget's binding")
    assert rb["spec"]["resource"]["kind"] == "Widget" and "replicas" not in rb["spec"]
    assert annos(get(karmada, "widget", "w1", "-n", "default"))[PP_NAME] == "widgets"


def test_a_cluster_scoped_template_gets_a_cluster_resource_binding(karmada: PullMode) -> None:
    apply(
        karmada,
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "reader"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}],
        },
        policy(
            "roles",
            [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "name": "reader"}],
            namespace=None,
        ),
    )
    crb = wait_for(lambda: get(karmada, "crb", "reader-clusterrole"), what="the ClusterResourceBinding")
    cpp = get(karmada, "cpp", "roles")
    assert "karmada.io/cluster-propagation-policy-controller" in cpp["metadata"]["finalizers"]  # type: ignore[index]
    assert labels(crb)[CPP_ID] == labels(cpp)[CPP_ID] and labels(crb)[CRB_ID]
    assert annos(crb)[CPP_NAME] == "roles"
    assert crb["spec"]["resource"]["kind"] == "ClusterRole" and "namespace" not in crb["spec"]["resource"]
    role = get(karmada, "clusterrole", "reader")
    assert labels(role)[CPP_ID] == labels(cpp)[CPP_ID] and annos(role)[CPP_NAME] == "roles"


def test_a_cluster_policy_binds_namespaced_templates_outside_skipped_namespaces(karmada: PullMode) -> None:
    def cm(name: str, namespace: str) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace, "labels": {"share": "yes"}},
        }

    apply(
        karmada,
        cm("shared", "default"),
        cm("shared", "kube-system"),
        policy(
            "shared-cms",
            [{"apiVersion": "v1", "kind": "ConfigMap", "labelSelector": {"matchLabels": {"share": "yes"}}}],
            namespace=None,
        ),
    )
    rb = wait_for(
        lambda: rb_of(karmada, "shared-configmap"), what="the ResourceBinding from a ClusterPropagationPolicy"
    )
    assert annos(rb)[CPP_NAME] == "shared-cms" and CPP_ID in labels(rb) and PP_ID not in labels(rb)
    assert get(karmada, "rb", "shared-configmap", "-n", "kube-system") is None
    assert CPP_ID not in labels(get(karmada, "cm", "shared", "-n", "kube-system"))


def test_a_preempting_propagation_policy_takes_a_template_from_any_cluster_policy(karmada: PullMode) -> None:
    selector = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "shared"}]
    apply(karmada, policy("shared-pp", selector, priority=-1, preemption="Always"))
    rb = wait_for(
        lambda: (b := rb_of(karmada, "shared-configmap")) and annos(b).get(PP_NAME) == "shared-pp" and b,
        what="the PropagationPolicy to preempt the ClusterPropagationPolicy",
    )
    assert CPP_ID not in labels(rb) and CPP_NAME not in annos(rb)  # never both claims
    template = get(karmada, "cm", "shared", "-n", "default")
    assert CPP_ID not in labels(template) and labels(template)[PP_ID] == labels(rb)[PP_ID]


def test_priority_decides_and_preemption_moves_a_claim(karmada: PullMode) -> None:
    apply(
        karmada,
        deployment("api"),
        policy("api-low", [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"}], priority=1),
    )
    wait_for(lambda: annos(get(karmada, "deploy", "api", "-n", "default")).get(PP_NAME) == "api-low", what="api-low")
    # a better policy without preemption does not take a claimed template
    apply(karmada, policy("api-better", [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"}], priority=5))
    wait_for(lambda: PP_ID in labels(get(karmada, "pp", "api-better", "-n", "default")), what="api-better admitted")
    assert annos(get(karmada, "deploy", "api", "-n", "default"))[PP_NAME] == "api-low"
    # with preemption: Always it does
    apply(
        karmada,
        policy(
            "api-best",
            [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"}],
            priority=7,
            preemption="Always",
        ),
    )
    rb = wait_for(
        lambda: (
            (b := get(karmada, "rb", "api-deployment", "-n", "default")) and annos(b).get(PP_NAME) == "api-best" and b
        ),
        what="api-best to preempt",
    )
    best = get(karmada, "pp", "api-best", "-n", "default")
    assert labels(rb)[PP_ID] == labels(best)[PP_ID]
    assert (
        "PreemptPolicySucceed",
        "Propagation policy(default/api-best) preempted propagation policy(default/api-low) successfully",
    ) in events(karmada, "api")


def test_lowering_the_holders_priority_lets_a_waiting_preemptor_in(karmada: PullMode) -> None:
    selector = [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"}]
    apply(karmada, policy("api-mid", selector, priority=6, preemption="Always"))
    wait_for(lambda: PP_ID in labels(get(karmada, "pp", "api-mid", "-n", "default")), what="api-mid admitted")
    assert annos(get(karmada, "deploy", "api", "-n", "default"))[PP_NAME] == "api-best"  # 6 < 7: no preemption
    apply(karmada, policy("api-best", selector, priority=0, preemption="Always"))
    wait_for(
        lambda: annos(get(karmada, "rb", "api-deployment", "-n", "default")).get(PP_NAME) == "api-mid",
        what="api-mid to preempt once api-best fell below it",
    )


def test_deleting_the_template_collects_its_binding(karmada: PullMode) -> None:
    assert get(karmada, "rb", "canary-deployment", "-n", "default") is not None
    karmada.admin("delete", "deploy", "canary", "-n", "default")
    wait_for(lambda: get(karmada, "rb", "canary-deployment", "-n", "default") is None, what="the binding collected")


def test_a_missing_priority_class_fails_until_it_exists(karmada: PullMode) -> None:
    apply(
        karmada,
        deployment("batch"),
        policy(
            "batch-pp",
            [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "batch"}],
            schedulePriority={"priorityClassSource": "KubePriorityClass", "priorityClassName": "urgent"},
        ),
    )
    wait_for(
        lambda: any(
            reason == "ApplyPolicyFailed" and message.startswith("Apply policy(default/batch-pp) failed: ")
            for reason, message in events(karmada, "batch")
        ),
        what="ApplyPolicyFailed",
    )
    assert get(karmada, "rb", "batch-deployment", "-n", "default") is None
    karmada.admin("create", "priorityclass", "urgent", "--value=1000")
    rb = wait_for(lambda: get(karmada, "rb", "batch-deployment", "-n", "default"), timeout=30, what="the binding")
    assert rb["spec"]["schedulePriority"] == {"priority": 1000}


def test_dependent_overrides_must_exist_first(karmada: PullMode) -> None:
    apply(
        karmada,
        deployment("ovr"),
        policy(
            "ovr-pp", [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "ovr"}], dependentOverrides=["ovr-op"]
        ),
    )
    wait_for(lambda: PP_ID in labels(get(karmada, "pp", "ovr-pp", "-n", "default")), what="ovr-pp admitted")
    assert get(karmada, "rb", "ovr-deployment", "-n", "default") is None
    apply(
        karmada,
        {
            "apiVersion": "policy.karmada.io/v1alpha1",
            "kind": "OverridePolicy",
            "metadata": {"name": "ovr-op", "namespace": "default"},
            "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "ovr"}]},
        },
    )
    wait_for(lambda: get(karmada, "rb", "ovr-deployment", "-n", "default"), what="the binding")


def test_a_deleted_binding_comes_back(karmada: PullMode) -> None:
    old = get(karmada, "rb", "nginx-deployment", "-n", "default")
    assert old is not None
    karmada.admin("delete", "rb", "nginx-deployment", "-n", "default")
    new = wait_for(
        lambda: (
            (b := get(karmada, "rb", "nginx-deployment", "-n", "default"))
            and b["metadata"]["uid"] != old["metadata"]["uid"]
            and b
        ),
        what="the binding recreated",
    )
    assert labels(new)[RB_ID] != labels(old)[RB_ID]  # a new binding, a new permanent id


def test_a_lazy_policy_waits_for_the_next_user_change(karmada: PullMode) -> None:
    selector = [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "lazy"}]
    placement = {"clusterAffinity": {"clusterNames": ["member1"]}}
    apply(karmada, deployment("lazy"), policy("lazy-pp", selector, activationPreference="Lazy", placement=placement))
    wait_for(lambda: rb_of(karmada, "lazy-deployment"), what="the first binding")
    moved = {"clusterAffinity": {"clusterNames": ["member2"]}}
    apply(karmada, policy("lazy-pp", selector, activationPreference="Lazy", placement=moved, priority=3))
    wait_for(lambda: get(karmada, "pp", "lazy-pp", "-n", "default")["spec"].get("priority") == 3, what="the edit")  # type: ignore[index]
    assert rb_of(karmada, "lazy-deployment")["spec"]["placement"] == placement  # type: ignore[index]
    karmada.admin("scale", "deploy", "lazy", "-n", "default", "--replicas=4")  # a user's change applies the policy
    rb = wait_for(
        lambda: (b := rb_of(karmada, "lazy-deployment")) and b["spec"].get("replicas") == 4 and b, what="the refresh"
    )
    assert rb["spec"]["placement"] == moved


def test_a_restart_converges_with_no_writes(karmada: PullMode) -> None:
    watched = [
        ("deploy", "nginx", "default"),
        ("rb", "nginx-deployment", "default"),
        ("pp", "nginx-pp", "default"),
        ("crb", "reader-clusterrole", ""),
        ("clusterrole", "reader", ""),
        ("rb", "api-deployment", "default"),
    ]

    def versions() -> list[str]:
        found = []
        for kind, name, namespace in watched:
            obj = get(karmada, kind, name, *(["-n", namespace] if namespace else []))
            assert obj is not None, (kind, name)
            found.append(obj["metadata"]["resourceVersion"])
        return found

    before = versions()
    assert karmada.controlplane is not None
    karmada.controlplane.stop()
    offset = karmada.controlplane.log.stat().st_size
    log = karmada.start_controlplane(
        "--controllers=detector,binding", "--feature-gates=PropagationPolicyPreemption=true"
    ).log

    def started(what: str) -> bool:
        return what.encode() in log.read_bytes()[offset:]

    wait_for(lambda: started("watching deployments"), what="the detector to start again")
    wait_for(lambda: started("watching clusterroles"), what="the detector to resolve its kinds")
    time.sleep(2)  # let it reconcile everything it enqueued; nothing may be written
    assert versions() == before


def test_a_kind_that_never_resolves_does_not_block_the_rest_of_the_policy(karmada: PullMode) -> None:
    apply(
        karmada,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "cfg", "namespace": "default"},
            "data": {"a": "b"},
        },
        policy(
            "mixed",
            [
                {"apiVersion": "nowhere.example.com/v1", "kind": "Ghost"},
                {"apiVersion": "v1", "kind": "ConfigMap", "name": "cfg"},
            ],
        ),
    )
    rb = wait_for(lambda: get(karmada, "rb", "cfg-configmap", "-n", "default"), what="the ConfigMap's binding")
    assert annos(rb)[PP_NAME] == "mixed" and "replicas" not in rb["spec"]
    assert get(karmada, "rb", "c1-configmap", "-n", "default") is None  # unselected ConfigMaps stay alone


def test_deleting_a_cluster_policy_releases_its_cluster_scoped_template(karmada: PullMode) -> None:
    assert get(karmada, "crb", "reader-clusterrole") is not None
    karmada.admin("delete", "cpp", "roles", "--wait=true", "--timeout=20s")
    role = wait_for(
        lambda: (r := get(karmada, "clusterrole", "reader")) and CPP_ID not in labels(r) and r, what="reader released"
    )
    assert CPP_NAME not in annos(role)
    crb = get(karmada, "crb", "reader-clusterrole")
    assert crb is not None and CPP_ID not in labels(crb) and CPP_NAME not in annos(crb)  # the binding stays


def test_a_policy_deleted_while_the_detector_is_down_is_released_on_start(
    karmada: PullMode, localkube: ServerThread
) -> None:
    apply(
        karmada,
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "token", "namespace": "default"}},
        policy("secrets", [{"apiVersion": "v1", "kind": "Secret", "name": "token"}]),
    )
    wait_for(lambda: rb_of(karmada, "token-secret"), what="the Secret's binding")
    assert karmada.controlplane is not None
    karmada.controlplane.stop()
    karmada.admin("delete", "pp", "secrets", "-n", "default", "--wait=false")
    assert get(karmada, "pp", "secrets", "-n", "default")["metadata"]["deletionTimestamp"]  # type: ignore[index]
    karmada.start_controlplane("--controllers=detector,binding", "--feature-gates=PropagationPolicyPreemption=true")
    wait_for(lambda: get(karmada, "pp", "secrets", "-n", "default") is None, what="the finalizer removed")
    assert PP_ID not in labels(get(karmada, "secret", "token", "-n", "default"))
    assert PP_ID not in labels(rb_of(karmada, "token-secret"))
    # no policy selects Secrets any more: the detector stops watching them
    assert karmada.controlplane is not None
    log = karmada.controlplane.log
    wait_for(lambda: b"no policy selects Secret in v1 any more" in log.read_bytes(), what="the Secret watch to end")
    # and it ends: the binding controller read the template but is not a reader of the cache
    watchers = localkube.server.store._watchers
    wait_for(lambda: not len(watchers.get("/secrets") or ()), what="no watch of Secrets on the API server")


def test_a_template_whose_policy_vanished_is_matched_again_at_once(karmada: PullMode) -> None:
    """A policy gone without its finalizer (removed by hand while the detector was down) leaves
    its claim on the template: the detector releases it and the remaining policy takes it
    in the same pass (nothing else would bring the template back)."""
    selector = [{"apiVersion": "v1", "kind": "ServiceAccount", "name": "robot"}]
    apply(
        karmada,
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot", "namespace": "default"}},
        policy("robot-high", selector, priority=10),
        policy("robot-low", selector, priority=1),
    )
    rb = wait_for(lambda: rb_of(karmada, "robot-serviceaccount"), what="the ServiceAccount's binding")
    assert annos(rb)[PP_NAME] == "robot-high"
    assert karmada.controlplane is not None
    karmada.controlplane.stop()
    karmada.admin(
        "patch", "pp", "robot-high", "-n", "default", "--type=merge", "-p", '{"metadata":{"finalizers":null}}'
    )
    karmada.admin("delete", "pp", "robot-high", "-n", "default", "--wait=true", "--timeout=20s")
    karmada.start_controlplane("--controllers=detector,binding", "--feature-gates=PropagationPolicyPreemption=true")
    low = wait_for(lambda: labels(get(karmada, "pp", "robot-low", "-n", "default")).get(PP_ID), what="robot-low")
    wait_for(
        lambda: labels(get(karmada, "sa", "robot", "-n", "default")).get(PP_ID) == low,
        what="robot-low to claim the ServiceAccount",
    )
    wait_for(lambda: annos(rb_of(karmada, "robot-serviceaccount")).get(PP_NAME) == "robot-low", what="the binding")
