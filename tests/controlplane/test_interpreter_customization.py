"""A CloneSet-like CRD workload taught to Karmada by a ResourceInterpreterCustomization,
propagated by the real control plane to two members through their agents: the
Lua script's replicas are divided between the members, each member object gets
its share (ReviseReplica), the members' status comes back through the script
(ReflectStatus, InterpretHealth) and is summed into the template (AggregateStatus)."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import pytest

from tests.pullmode import PullMode, wait_for
from tests.servers import Kubectl, ServerThread

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "clones.apps.example.io"},
    "spec": {
        "group": "apps.example.io",
        "names": {"kind": "Clone", "plural": "clones", "singular": "clone", "listKind": "CloneList"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
            }
        ],
    },
}

SCRIPTS = {
    "replicaResource": """
local kube = require("kube")
function GetReplicas(obj)
  return obj.spec.replicas, kube.accuratePodRequirements(obj.spec.template)
end""",
    "replicaRevision": """
function ReviseReplica(obj, desiredReplica)
  obj.spec.replicas = desiredReplica
  return obj
end""",
    "statusReflection": """
function ReflectStatus(observedObj)
  if observedObj.status == nil then return {} end
  return {replicas = observedObj.status.replicas, readyReplicas = observedObj.status.readyReplicas}
end""",
    "healthInterpretation": """
function InterpretHealth(observedObj)
  return observedObj.status ~= nil and observedObj.status.readyReplicas == observedObj.spec.replicas
end""",
    "statusAggregation": """
function AggregateStatus(desiredObj, statusItems)
  local replicas, ready = 0, 0
  for _, item in ipairs(statusItems or {}) do
    if item.status ~= nil then
      replicas = replicas + (item.status.replicas or 0)
      ready = ready + (item.status.readyReplicas or 0)
    end
  end
  desiredObj.status = {replicas = replicas, readyReplicas = ready}
  return desiredObj
end""",
}


def customization(scripts: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "config.karmada.io/v1alpha1",
        "kind": "ResourceInterpreterCustomization",
        "metadata": {"name": "clones"},
        "spec": {
            "target": {"apiVersion": "apps.example.io/v1", "kind": "Clone"},
            "customizations": {field: {"luaScript": source} for field, source in scripts.items()},
        },
    }


def clone(name: str, replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps.example.io/v1",
        "kind": "Clone",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "template": {
                "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}]}
            },
        },
    }


POLICY = {
    "apiVersion": "policy.karmada.io/v1alpha1",
    "kind": "PropagationPolicy",
    "metadata": {"name": "clones", "namespace": "default"},
    "spec": {
        "resourceSelectors": [{"apiVersion": "apps.example.io/v1", "kind": "Clone"}],
        "placement": {
            "clusterAffinity": {"clusterNames": ["member1", "member2"]},
            "replicaScheduling": {
                "replicaSchedulingType": "Divided",
                "replicaDivisionPreference": "Weighted",
                "weightPreference": {
                    "staticWeightList": [
                        {"targetCluster": {"clusterNames": ["member1"]}, "weight": 1},
                        {"targetCluster": {"clusterNames": ["member2"]}, "weight": 1},
                    ]
                },
            },
        },
    },
}


def get(kubectl: Kubectl, *args: str) -> Any:
    result = kubectl("get", *args, "-o", "json", check=False)
    return json.loads(result.stdout) if result.returncode == 0 else None


def test_a_customized_crd_workload_is_split_revised_and_its_status_summed(
    pull_mode: PullMode, member1: ServerThread, member2: ServerThread
) -> None:
    members = {"member1": member1, "member2": member2}
    admins = {name: pull_mode.member_admin(server, name) for name, server in members.items()}
    for name, server in members.items():
        admins[name]("apply", "-f", "-", stdin=json.dumps(CRD))
        pull_mode.register(server, name)
        pull_mode.start_agent(server, name)
    for name in members:
        wait_for(partial(lambda n: pull_mode.ready(n) == "True", name), timeout=60, what=f"{name} Ready")
    admin = pull_mode.admin
    admin("apply", "-f", "-", stdin=json.dumps(CRD))
    admin("apply", "-f", "-", stdin=json.dumps(customization(SCRIPTS)))
    admin("apply", "-f", "-", stdin=json.dumps(POLICY))
    admin("apply", "-f", "-", stdin=json.dumps(clone("web", 4)))

    # InterpretReplica through the script, then Divided 1:1 and ReviseReplica per member
    rb = "web-clone"
    wait_for(lambda: (get(admin, "rb", rb) or {}).get("spec", {}).get("replicas") == 4, timeout=60, what="replicas")
    binding = get(admin, "rb", rb)
    assert binding["spec"]["replicaRequirements"] == {"resourceRequest": {"cpu": "100m"}}
    for name in members:
        wait_for(
            partial(lambda n: get(admins[n], "clones.apps.example.io", "web") is not None, name),
            timeout=60,
            what=f"web in {name}",
        )
        assert get(admins[name], "clones.apps.example.io", "web")["spec"]["replicas"] == 2

    # members report status: ReflectStatus and InterpretHealth in the agents, AggregateStatus in the control plane
    for name in members:
        admins[name](
            "patch",
            "clones.apps.example.io",
            "web",
            "--subresource=status",
            "--type=merge",
            "-p",
            json.dumps({"status": {"replicas": 2, "readyReplicas": 2, "ignored": "x"}}),
        )
    wait_for(
        lambda: (
            (get(admin, "clones.apps.example.io", "web") or {}).get("status") == {"replicas": 4, "readyReplicas": 4}
        ),
        timeout=60,
        what="aggregated status",
    )
    items = get(admin, "rb", rb)["status"]["aggregatedStatus"]
    assert sorted(i["clusterName"] for i in items) == ["member1", "member2"]
    assert all(i["health"] == "Healthy" and i["status"] == {"replicas": 2, "readyReplicas": 2} for i in items)

    # a changed customization applies without a restart; a failing script fails only its objects
    broken = dict(SCRIPTS, replicaResource='function GetReplicas(obj) error("no replicas here") end')
    admin("apply", "-f", "-", stdin=json.dumps(customization(broken)))
    admin("apply", "-f", "-", stdin=json.dumps(clone("web", 6)))

    def failed_event() -> bool:
        events = get(admin, "events", "--field-selector=involvedObject.name=web") or {"items": []}
        return any("no replicas here" in (e.get("message") or "") for e in events["items"])

    wait_for(failed_event, timeout=60, what="the Lua error in an event")
    assert get(admin, "rb", rb)["spec"]["replicas"] == 4


DEPENDENCY_SCRIPT = """
function GetDependencies(desiredObj)
  local refs = {}
  if desiredObj.spec.configName ~= nil then
    refs[1] = {apiVersion = "v1", kind = "ConfigMap", namespace = desiredObj.metadata.namespace,
               name = desiredObj.spec.configName}
  end
  return refs
end"""


def test_a_customized_kind_takes_its_dependencies_along(
    pull_mode: PullMode, member1: ServerThread, member2: ServerThread
) -> None:
    """InterpretDependency from a customization feeds the dependencies distributor (propagateDeps)."""
    members = {"member1": member1, "member2": member2}
    admins = {name: pull_mode.member_admin(server, name) for name, server in members.items()}
    for name, server in members.items():
        if pull_mode.cluster(name) is None:
            admins[name]("apply", "-f", "-", stdin=json.dumps(CRD))
            pull_mode.register(server, name)
            pull_mode.start_agent(server, name)
    for name in members:
        wait_for(partial(lambda n: pull_mode.ready(n) == "True", name), timeout=60, what=f"{name} Ready")
    admin = pull_mode.admin
    admin("apply", "-f", "-", stdin=json.dumps(CRD))
    admin(
        "apply", "-f", "-", stdin=json.dumps(customization(dict(SCRIPTS, dependencyInterpretation=DEPENDENCY_SCRIPT)))
    )
    policy = json.loads(json.dumps(POLICY))
    policy["metadata"]["name"] = "clones-with-deps"
    policy["spec"]["propagateDeps"] = True
    policy["spec"]["resourceSelectors"] = [{"apiVersion": "apps.example.io/v1", "kind": "Clone", "name": "api"}]
    policy["spec"]["priority"] = 10
    admin("apply", "-f", "-", stdin=json.dumps(policy))
    workload = clone("api", 2)
    workload["spec"]["configName"] = "api-config"
    admin("apply", "-f", "-", stdin=json.dumps(workload))
    admin("create", "configmap", "api-config", "--from-literal=mode=fast")
    for name in members:
        wait_for(
            partial(lambda n: get(admins[n], "configmap", "api-config") is not None, name),
            timeout=90,
            what=f"the dependency api-config in {name}",
        )
    assert get(admins["member1"], "configmap", "api-config")["data"] == {"mode": "fast"}
    annotation = get(admin, "rb", "api-clone")["metadata"]["annotations"]["resourcebinding.karmada.io/dependencies"]
    assert json.loads(annotation) == [
        {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "default", "name": "api-config"}
    ]
