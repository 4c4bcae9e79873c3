"""The binding controller end to end: localkube with Karmada installed,
``karmada-controlplane --controllers=binding``, and bindings written by hand as
the detector and scheduler would; everything checked with the real kubectl.

No agent runs here, so a deleted Work stays with its execution finalizer; the
tests strip it the way the agent would once the member object is gone.
The tests of this module run in order and share one control plane.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from karmada.api.names import work_name
from tests.factories import cluster
from tests.pullmode import PullMode, wait_for
from tests.servers import ServerThread

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

Obj = dict[str, Any]
WORK = work_name("Deployment", "nginx", "default")
RB = "nginx-deployment"
RB_ID = "5c2b8a4e-6a63-4d38-9d7e-0f3e4b7f0a11"


@pytest.fixture(scope="module")
def env(localkube: ServerThread, workdir: Path) -> Iterator[PullMode]:
    mode = PullMode(localkube, workdir).install()
    for name, labels in (("member1", {"env": "prod"}), ("member2", {}), ("member3", {})):
        mode.admin("apply", "-f", "-", stdin=json.dumps(cluster(name, labels=labels).to_dict()))
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"karmada-es-{name}"}}
        mode.admin("apply", "-f", "-", stdin=json.dumps(namespace))
    mode.start_controlplane("--controllers=binding")
    try:
        yield mode
    finally:
        mode.stop()


def get(env: PullMode, *args: str) -> Obj | None:
    result = env.admin("get", *args, "-o", "json", check=False)
    return json.loads(result.stdout) if result.returncode == 0 else None


def work(env: PullMode, cluster_name: str, name: str = WORK) -> Obj | None:
    return get(env, "work", name, "-n", f"karmada-es-{cluster_name}")


def manifest(env: PullMode, cluster_name: str, name: str = WORK) -> Obj:
    found = work(env, cluster_name, name)
    assert found is not None, f"no Work {name} for {cluster_name}"
    return dict(found["spec"]["workload"]["manifests"][0])


def container(env: PullMode, cluster_name: str) -> Obj:
    return dict(manifest(env, cluster_name)["spec"]["template"]["spec"]["containers"][0])


def version(env: PullMode, cluster_name: str, name: str = WORK) -> str:
    return str((work(env, cluster_name, name) or {})["metadata"]["resourceVersion"])


def apply(env: PullMode, obj: Obj) -> None:
    env.admin("apply", "-f", "-", stdin=json.dumps(obj))


def patch_binding(env: PullMode, patch: Obj, name: str = RB) -> None:
    env.admin("patch", "resourcebinding", name, "-n", "default", "--type=merge", "-p", json.dumps(patch))


def events(env: PullMode, name: str, namespace: str = "default") -> list[Obj]:
    listing = get(env, "events", "-n", namespace, "--field-selector", f"involvedObject.name={name}") or {}
    return list(listing.get("items") or [])


def reasons(env: PullMode, name: str, namespace: str = "default") -> set[str]:
    return {e["reason"] for e in events(env, name, namespace)}


def release(env: PullMode, cluster_name: str, name: str = WORK) -> None:
    """What the agent does once the member object is gone: drop the execution finalizer."""
    patch = json.dumps({"metadata": {"finalizers": None}})
    env.admin("patch", "work", name, "-n", f"karmada-es-{cluster_name}", "--type=merge", "-p", patch)


def deleting(env: PullMode, cluster_name: str, name: str = WORK) -> bool:
    found = work(env, cluster_name, name)
    return found is not None and bool(found["metadata"].get("deletionTimestamp"))


def override_policy(image_value: str, plaintext: list[Obj] | None = None) -> Obj:
    return {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "OverridePolicy",
        "metadata": {"name": "nginx-op", "namespace": "default"},
        "spec": {
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}],
            "overrideRules": [
                {
                    "targetCluster": {"labelSelector": {"matchLabels": {"env": "prod"}}},
                    "overriders": {
                        "imageOverrider": [{"component": "Registry", "operator": "replace", "value": image_value}],
                        "argsOverrider": [{"containerName": "nginx", "operator": "add", "value": ["--prod"]}],
                    },
                },
                {
                    "overriders": {
                        "plaintext": plaintext or [{"path": "/spec/minReadySeconds", "operator": "add", "value": 5}]
                    }
                },
            ],
        },
    }


def binding_for(template: Obj, name: str, binding_id: str, clusters: list[Obj], **spec: Any) -> Obj:
    meta = template["metadata"]
    reference = {"apiVersion": template["apiVersion"], "kind": template["kind"], "name": meta["name"]}
    if meta.get("namespace"):
        reference["namespace"] = meta["namespace"]
    reference.update(uid=meta["uid"], resourceVersion=meta["resourceVersion"])
    owner = {
        "apiVersion": template["apiVersion"],
        "kind": template["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    namespaced = bool(meta.get("namespace"))
    label = (
        "resourcebinding.karmada.io/permanent-id" if namespaced else "clusterresourcebinding.karmada.io/permanent-id"
    )
    metadata: Obj = {"name": name, "labels": {label: binding_id}, "ownerReferences": [owner]}
    if namespaced:
        metadata["namespace"] = meta["namespace"]
    return {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding" if namespaced else "ClusterResourceBinding",
        "metadata": metadata,
        "spec": {"resource": reference, "clusters": clusters, **spec},
    }


def test_one_work_per_cluster_with_overrides_and_shares(env: PullMode) -> None:
    env.admin("create", "deployment", "nginx", "--image=nginx:1.25", "--replicas=3")
    apply(env, override_policy("registry.example"))
    template = get(env, "deployment", "nginx")
    assert template is not None
    placement = {"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}}
    clusters = [{"name": "member1", "replicas": 2}, {"name": "member2", "replicas": 1}]
    apply(env, binding_for(template, RB, RB_ID, clusters, replicas=3, placement=placement))

    wait_for(lambda: work(env, "member1") and work(env, "member2"), what="works in member1 and member2")
    one, two = manifest(env, "member1"), manifest(env, "member2")
    assert (one["spec"]["replicas"], two["spec"]["replicas"]) == (2, 1)
    assert container(env, "member1")["image"] == "registry.example/nginx:1.25"
    assert container(env, "member1").get("args") == ["--prod"]
    assert container(env, "member2")["image"] == "nginx:1.25" and "args" not in container(env, "member2")
    assert one["spec"]["minReadySeconds"] == 5 and two["spec"]["minReadySeconds"] == 5
    for m in (one, two):
        assert "status" not in m and "uid" not in m["metadata"] and "resourceVersion" not in m["metadata"]
        assert m["metadata"]["labels"]["karmada.io/managed"] == "true"
        assert m["metadata"]["labels"]["resourcebinding.karmada.io/permanent-id"] == RB_ID
        assert m["metadata"]["annotations"]["resourcetemplate.karmada.io/uid"] == template["metadata"]["uid"]
        assert m["metadata"]["annotations"]["work.karmada.io/conflict-resolution"] == "abort"
        assert "deployment.kubernetes.io/revision" not in m["metadata"]["annotations"]
    stored = work(env, "member1") or {}
    meta = stored["metadata"]
    assert meta["finalizers"] == ["karmada.io/execution-controller"]
    assert meta["labels"]["resourcebinding.karmada.io/permanent-id"] == RB_ID
    work_id = meta["labels"]["work.karmada.io/permanent-id"]
    assert len(work_id) == 36 and one["metadata"]["labels"]["work.karmada.io/permanent-id"] == work_id
    assert meta["annotations"]["resourcebinding.karmada.io/namespace"] == "default"
    assert meta["annotations"]["resourcebinding.karmada.io/name"] == RB
    applied = json.loads(meta["annotations"]["policy.karmada.io/applied-overrides"])
    assert [a["policyName"] for a in applied] == ["nginx-op", "nginx-op"]
    assert stored["spec"]["suspendDispatching"] is False and stored["spec"]["preserveResourcesOnDeletion"] is False
    binding = get(env, "resourcebinding", RB) or {}
    assert "karmada.io/binding-controller" in binding["metadata"]["finalizers"]
    wait_for(lambda: "SyncWorkSucceed" in reasons(env, RB), what="SyncWorkSucceed on the binding")
    wait_for(lambda: {"SyncWorkSucceed", "ApplyOverridePolicySucceed"} <= reasons(env, "nginx"), what="template events")
    # kubectl shows the Works like any other resource
    listing = env.admin("get", "works", "-A", "-l", f"resourcebinding.karmada.io/permanent-id={RB_ID}").stdout
    assert listing.count(WORK) == 2


def test_unchanged_works_are_not_written_again(env: PullMode) -> None:
    before = version(env, "member1")
    # a spec change that renders the same Works, then one that changes member2 only
    patch_binding(env, {"spec": {"schedulerName": "default-scheduler"}})
    patch_binding(env, {"spec": {"clusters": [{"name": "member1", "replicas": 2}, {"name": "member2", "replicas": 4}]}})
    wait_for(lambda: manifest(env, "member2")["spec"]["replicas"] == 4, what="member2 share updated")
    assert version(env, "member1") == before
    # a restarted control plane reconciles everything again, and writes nothing
    assert env.controlplane is not None
    env.controlplane.stop()
    env.start_controlplane("--controllers=binding")
    patch_binding(env, {"spec": {"clusters": [{"name": "member1", "replicas": 2}, {"name": "member2", "replicas": 1}]}})
    wait_for(lambda: manifest(env, "member2")["spec"]["replicas"] == 1, what="member2 share back")
    assert version(env, "member1") == before


def test_suspension_and_preservation_reach_the_works(env: PullMode) -> None:
    patch_binding(
        env,
        {
            "spec": {
                "suspension": {"dispatchingOnClusters": {"clusterNames": ["member2"]}},
                "preserveResourcesOnDeletion": True,
            }
        },
    )
    wait_for(lambda: (work(env, "member2") or {})["spec"].get("suspendDispatching") is True, what="member2 suspended")
    assert (work(env, "member1") or {})["spec"]["suspendDispatching"] is False
    assert (work(env, "member1") or {})["spec"]["preserveResourcesOnDeletion"] is True
    patch_binding(env, {"spec": {"suspension": None, "preserveResourcesOnDeletion": None}})
    wait_for(lambda: (work(env, "member2") or {})["spec"].get("suspendDispatching") is False, what="resumed")


def test_a_cluster_no_longer_targeted_loses_its_work(env: PullMode) -> None:
    patch_binding(env, {"spec": {"clusters": [{"name": "member2", "replicas": 1}, {"name": "member3", "replicas": 2}]}})
    wait_for(lambda: work(env, "member3"), what="work in member3")
    assert manifest(env, "member3")["spec"]["replicas"] == 2
    wait_for(lambda: deleting(env, "member1"), what="member1 work deleted")
    release(env, "member1")
    wait_for(lambda: work(env, "member1") is None, what="member1 work gone")
    assert work(env, "member2") is not None


def test_a_policy_change_renders_the_bindings_it_selects(env: PullMode) -> None:
    env.admin("label", "cluster", "member3", "env=prod")  # a relabelled cluster picks up the rule
    wait_for(lambda: container(env, "member3")["image"] == "registry.example/nginx:1.25", what="member3 overridden")
    apply(env, override_policy("mirror.example"))
    wait_for(lambda: container(env, "member3")["image"] == "mirror.example/nginx:1.25", what="new image in member3")
    assert container(env, "member2")["image"] == "nginx:1.25"


def test_a_broken_override_leaves_the_works_and_says_why(env: PullMode) -> None:
    before = {c: version(env, c) for c in ("member2", "member3")}
    broken = [{"path": "/spec/nothing/deep", "operator": "replace", "value": 1}]
    apply(env, override_policy("mirror.example", plaintext=broken))

    def condition() -> Obj | None:
        binding = get(env, "resourcebinding", RB) or {}
        for c in (binding.get("status") or {}).get("conditions") or []:
            if c["type"] == "OverridesApplied":
                return dict(c)
        return None

    wait_for(lambda: (condition() or {}).get("status") == "False", what="OverridesApplied=False")
    found = condition() or {}
    assert found["reason"] == "ApplyOverridePolicyFailed"
    assert "OverridePolicy default/nginx-op" in found["message"] and "overrideRules[1]" in found["message"]
    assert "/spec/nothing/deep" in found["message"] and "cluster member2" in found["message"]
    wait_for(lambda: {"ApplyOverridePolicyFailed", "SyncWorkFailed"} <= reasons(env, RB), what="warning events")
    warning = next(e for e in events(env, RB) if e["reason"] == "ApplyOverridePolicyFailed")
    assert warning["type"] == "Warning" and "nginx-op" in warning["message"]
    assert {c: version(env, c) for c in ("member2", "member3")} == before
    # fixed: the Works follow and the condition says so
    apply(env, override_policy("fixed.example"))
    wait_for(lambda: (condition() or {}).get("status") == "True", what="OverridesApplied=True")
    assert (condition() or {})["reason"] == "ApplyOverridePolicySucceed"
    wait_for(lambda: container(env, "member3")["image"] == "fixed.example/nginx:1.25", what="fixed image")


def test_a_template_change_reaches_the_works_through_the_binding(env: PullMode) -> None:
    env.admin("set", "image", "deployment/nginx", "nginx=nginx:1.26")
    template = get(env, "deployment", "nginx") or {}
    # what the detector does on a template change: the binding's reference follows it
    patch_binding(env, {"spec": {"resource": {"resourceVersion": template["metadata"]["resourceVersion"]}}})
    wait_for(lambda: container(env, "member2")["image"] == "nginx:1.26", what="new image in member2")
    assert container(env, "member3")["image"] == "fixed.example/nginx:1.26"
    generation = str(template["metadata"]["generation"])
    assert manifest(env, "member2")["metadata"]["annotations"]["resourcetemplate.karmada.io/generation"] == generation


def test_a_work_deleted_by_hand_comes_back(env: PullMode) -> None:
    old_id = (work(env, "member2") or {})["metadata"]["labels"]["work.karmada.io/permanent-id"]
    env.admin("delete", "work", WORK, "-n", "karmada-es-member2", "--wait=false")
    release(env, "member2")

    def recreated() -> bool:
        found = work(env, "member2")
        return found is not None and found["metadata"]["labels"]["work.karmada.io/permanent-id"] != old_id

    wait_for(recreated, what="work recreated with a new id")


def test_deleting_the_binding_deletes_its_works_then_the_finalizer(env: PullMode) -> None:
    env.admin("delete", "resourcebinding", RB, "-n", "default", "--wait=false")
    wait_for(lambda: get(env, "resourcebinding", RB) is None, what="binding gone")
    for name in ("member2", "member3"):
        assert deleting(env, name), f"{name} work deleted before the finalizer went"
        release(env, name)
    wait_for(lambda: work(env, "member2") is None and work(env, "member3") is None, what="works gone")


def test_a_deleted_template_takes_binding_and_works_along(env: PullMode) -> None:
    env.admin("create", "configmap", "settings", "--from-literal=k=v")
    template = get(env, "configmap", "settings") or {}
    apply(
        env, binding_for(template, "settings-configmap", "7d7f7e52-1c4b-4b0e-8d0c-4b3f1b0e9c21", [{"name": "member1"}])
    )
    name = work_name("ConfigMap", "settings", "default")
    wait_for(lambda: work(env, "member1", name), what="configmap work")
    data = manifest(env, "member1", name)
    assert data["data"] == {"k": "v"} and "replicas" not in data
    env.admin("delete", "configmap", "settings")
    wait_for(lambda: deleting(env, "member1", name), what="configmap work deleted")
    release(env, "member1", name)
    wait_for(lambda: get(env, "resourcebinding", "settings-configmap") is None, what="binding collected")


def test_cluster_resource_binding(env: PullMode) -> None:
    env.admin("create", "clusterrole", "reader", "--verb=get", "--resource=pods")
    env.admin("annotate", "clusterrole", "reader", "work.karmada.io/conflict-resolution=overwrite")
    template = get(env, "clusterrole", "reader") or {}
    crb = binding_for(template, "reader-clusterrole", "a3c1f3f6-2b8e-4d52-9e53-8f0f0d4c2b10", [{"name": "member2"}])
    apply(env, crb)
    name = work_name("ClusterRole", "reader")
    wait_for(lambda: work(env, "member2", name), what="clusterrole work")
    stored = work(env, "member2", name) or {}
    assert (
        stored["metadata"]["labels"]["clusterresourcebinding.karmada.io/permanent-id"]
        == crb["metadata"]["labels"]["clusterresourcebinding.karmada.io/permanent-id"]
    )
    assert stored["metadata"]["annotations"]["clusterresourcebinding.karmada.io/name"] == "reader-clusterrole"
    assert stored["metadata"]["annotations"]["work.karmada.io/conflict-resolution"] == "overwrite"
    found = get(env, "clusterresourcebinding", "reader-clusterrole") or {}
    assert "karmada.io/cluster-resource-binding-controller" in found["metadata"]["finalizers"]
    # a selector-less ClusterOverridePolicy reaches every binding, cluster-scoped ones too
    cop = {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "ClusterOverridePolicy",
        "metadata": {"name": "fleet"},
        "spec": {
            "overrideRules": [{"overriders": {"labelsOverrider": [{"operator": "add", "value": {"fleet": "blue"}}]}}]
        },
    }
    apply(env, cop)
    wait_for(lambda: manifest(env, "member2", name)["metadata"]["labels"].get("fleet") == "blue", what="cop applied")
    annotations = (work(env, "member2", name) or {})["metadata"]["annotations"]
    assert json.loads(annotations["policy.karmada.io/applied-cluster-overrides"])[0]["policyName"] == "fleet"
    env.admin("delete", "clusteroverridepolicy", "fleet")
    wait_for(lambda: "fleet" not in manifest(env, "member2", name)["metadata"]["labels"], what="cop removed")
    annotations = (work(env, "member2", name) or {})["metadata"]["annotations"]
    assert "policy.karmada.io/applied-cluster-overrides" not in annotations
    env.admin("delete", "clusterresourcebinding", "reader-clusterrole", "--wait=false")
    wait_for(lambda: deleting(env, "member2", name), what="clusterrole work deleted")
    wait_for(lambda: get(env, "clusterresourcebinding", "reader-clusterrole") is None, what="crb gone")
    release(env, "member2", name)


def test_a_directly_evicted_cluster_blocks_syncing_until_its_work_is_gone(env: PullMode) -> None:
    env.admin("create", "configmap", "evicted", "--from-literal=k=v")
    template = get(env, "configmap", "evicted") or {}
    clusters = [{"name": "member1"}, {"name": "member2"}]
    apply(env, binding_for(template, "evicted-configmap", "0b1e5d0e-5d3c-4a55-bb0e-2c0a7c6d9e01", clusters))
    name = work_name("ConfigMap", "evicted", "default")
    wait_for(lambda: work(env, "member1", name) and work(env, "member2", name), what="configmap works")
    task = {"fromCluster": "member2", "purgeMode": "Directly", "reason": "TaintUntolerated", "producer": "TaintManager"}
    patch = {
        "spec": {"clusters": [{"name": "member1"}], "gracefulEvictionTasks": [task], "conflictResolution": "Overwrite"}
    }
    patch_binding(env, patch, "evicted-configmap")
    wait_for(lambda: deleting(env, "member2", name), what="evicted cluster's work deleted at once")

    def resolution() -> str:
        return str((work(env, "member1", name) or {})["metadata"]["annotations"]["work.karmada.io/conflict-resolution"])

    assert resolution() == "abort", "nothing synced while the evicted cluster still has its Work"
    release(env, "member2", name)
    wait_for(lambda: resolution() == "overwrite", timeout=15, what="synced once the evicted Work is gone")
    env.admin("delete", "configmap", "evicted")
    wait_for(lambda: deleting(env, "member1", name), what="work deleted with its template")
    release(env, "member1", name)


def test_a_work_someone_else_wrote_is_taken_over_keeping_their_metadata(env: PullMode) -> None:
    env.admin("create", "configmap", "shared", "--from-literal=k=v")
    name = work_name("ConfigMap", "shared", "default")
    foreign = {
        "apiVersion": "work.karmada.io/v1alpha1",
        "kind": "Work",
        "metadata": {"name": name, "namespace": "karmada-es-member3", "labels": {"team": "a"}},
        "spec": {"workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}]}},
    }
    apply(env, foreign)
    template = get(env, "configmap", "shared") or {}
    apply(env, binding_for(template, "shared-configmap", "6f8a3f5e-9a1b-4a8e-a8e5-3d2f1c0b7a60", [{"name": "member3"}]))
    wait_for(lambda: manifest(env, "member3", name)["metadata"]["name"] == "shared", what="work taken over")
    stored = work(env, "member3", name) or {}
    assert stored["metadata"]["labels"]["team"] == "a"
    assert stored["metadata"]["labels"]["resourcebinding.karmada.io/permanent-id"].startswith("6f8a3f5e")
    assert stored["metadata"]["finalizers"] == ["karmada.io/execution-controller"]
    env.admin("delete", "configmap", "shared")
    wait_for(lambda: deleting(env, "member3", name), what="work deleted with its template")
    release(env, "member3", name)


def test_a_cluster_that_appears_later_gets_its_work(env: PullMode) -> None:
    env.admin("create", "configmap", "early", "--from-literal=k=v")
    template = get(env, "configmap", "early") or {}
    apply(env, binding_for(template, "early-configmap", "2e0c1b7a-3f4d-4c5e-9a8b-7c6d5e4f3a21", [{"name": "member4"}]))
    wait_for(lambda: "SyncWorkFailed" in reasons(env, "early-configmap"), what="SyncWorkFailed for a missing cluster")
    failed = next(e for e in events(env, "early-configmap") if e["reason"] == "SyncWorkFailed")
    assert "cluster member4 not found" in failed["message"]
    env.admin("create", "namespace", "karmada-es-member4")
    apply(env, cluster("member4").to_dict())
    name = work_name("ConfigMap", "early", "default")
    wait_for(lambda: work(env, "member4", name), what="work once the cluster exists")
    env.admin("delete", "configmap", "early")
    wait_for(lambda: deleting(env, "member4", name), what="work deleted with its template")
    release(env, "member4", name)
