"""Fields Go's JSON encoder always writes (non-omitempty fields and struct values) are present
in localkube's answers, as in kube-apiserver's.

Expected values come from the Go types of k8s.io/api v0.32 (core/v1/types.go:
NodeStatus, NodeSystemInfo, DaemonEndpoint, ContainerStatus, PodCondition;
rbac/v1/types.go: ClusterRole; core/v1/types.go: Event) and the generator is
checked on a small Go source written here.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from localkube import zero_values
from localkube.builtin_schemas import definitions
from localkube.gen_zero_fields import generate
from localkube.simulation import SimulationConfig
from tests.servers import Raw, ServerThread, start_server

Obj = dict[str, Any]

NODE_INFO: dict[str, Any] = dict.fromkeys(
    (
        "architecture",
        "bootID",
        "containerRuntimeVersion",
        "kernelVersion",
        "kubeProxyVersion",
        "kubeletVersion",
        "machineID",
        "operatingSystem",
        "osImage",
        "systemUUID",
    ),
    "",
)


async def test_node_created_with_a_name_only(raw: Raw) -> None:
    """The issue's reproduction: spec {} and the full status kube-apiserver writes."""
    status, node, _ = await raw.request("POST", "/api/v1/nodes", {"metadata": {"name": "n"}})
    assert status == 201, node
    assert node["spec"] == {}
    assert node["status"]["daemonEndpoints"] == {"kubeletEndpoint": {"Port": 0}}
    assert node["status"]["nodeInfo"] == NODE_INFO
    _, again, _ = await raw.request("GET", "/api/v1/nodes/n")
    assert again["status"] == node["status"]
    # a status write with half a nodeInfo still answers with all of it
    update = {**again, "status": {"nodeInfo": {"kubeletVersion": "v1.32.0"}}}
    status, written, _ = await raw.request("PUT", "/api/v1/nodes/n/status", update)
    assert status == 200, written
    assert written["status"]["nodeInfo"] == {**NODE_INFO, "kubeletVersion": "v1.32.0"}


async def test_nested_and_null_zero_values(raw: Raw) -> None:
    status, role, _ = await raw.request(
        "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {"metadata": {"name": "empty"}}
    )
    assert status == 201 and "rules" in role and role["rules"] is None
    event = {"metadata": {"name": "e"}, "involvedObject": {"kind": "Pod", "name": "p"}, "reason": "R"}
    status, stored, _ = await raw.request("POST", "/api/v1/namespaces/default/events", event)
    assert status == 201, stored
    assert stored["source"] == {} and stored["reportingComponent"] == "" and stored["reportingInstance"] == ""
    assert stored["firstTimestamp"] is None and stored["eventTime"] is None
    cm = {"metadata": {"name": "c"}}
    assert (await raw.request("POST", "/api/v1/namespaces/default/configmaps", cm))[1].keys() == {
        "kind",
        "apiVersion",
        "metadata",
    }


async def test_deployment_template_and_status(raw: Raw) -> None:
    body = {
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": {"app": "d"}},
            "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
        },
    }
    status, deployment, _ = await raw.request("POST", "/apis/apps/v1/namespaces/default/deployments", body)
    assert status == 201, deployment
    assert deployment["status"] == {}
    assert deployment["spec"]["template"]["metadata"]["creationTimestamp"] is None
    assert deployment["spec"]["template"]["spec"]["containers"][0]["resources"] == {}


@pytest.fixture(scope="module")
def simulated() -> Iterator[ServerThread]:
    config = SimulationConfig(nodes=1, node_prefix="z", workloads=True)
    yield from start_server(port=0, simulation=config)


def test_simulated_node_and_pod(simulated: ServerThread, workdir: Path) -> None:
    raw = Raw(simulated, simulated.kubeconfig(workdir / "sim"))

    async def check() -> None:
        node: Obj = {}
        for _ in range(200):
            status, node, _ = await raw.request("GET", "/api/v1/nodes/z-1")
            if status == 200 and node.get("status", {}).get("conditions"):
                break
            await asyncio.sleep(0.05)
        assert node["spec"] == {}
        assert node["status"]["daemonEndpoints"] == {"kubeletEndpoint": {"Port": 0}}
        # the simulation writes four of the fields; the other six are the encoder's empty strings
        assert node["status"]["nodeInfo"] == {
            **NODE_INFO,
            "kubeletVersion": "v1.32.0",
            "operatingSystem": "linux",
            "architecture": "amd64",
            "containerRuntimeVersion": "simulated://1.0",
        }
        body = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i:1"}]}}
        assert (await raw.request("POST", "/api/v1/namespaces/default/pods", body))[0] == 201
        pod: Obj = {}
        for _ in range(200):
            _, pod, _ = await raw.request("GET", "/api/v1/namespaces/default/pods/p")
            if pod["status"].get("containerStatuses"):
                break
            await asyncio.sleep(0.05)
        container = pod["status"]["containerStatuses"][0]
        assert container["lastState"] == {}
        assert all("lastProbeTime" in c and c["lastProbeTime"] is None for c in pod["status"]["conditions"])

    (workdir / "sim").mkdir(exist_ok=True)
    asyncio.run(check())


def test_table_names_only_fields_the_schemas_know() -> None:
    """Every listed field exists in its definition, and every nested struct is a definition."""
    schemas = definitions()
    for name, fields in zero_values.zero_fields().items():
        properties = schemas[name].get("properties") or {}
        for field, zero in fields.items():
            assert field in properties, (name, field)
            if isinstance(zero, str) and zero.startswith("@"):
                assert zero[1:] in schemas, (name, field, zero)


GO_SOURCE = """package v1

import (
\tmetav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Thing is a test kind.
type Thing struct {
\tmetav1.TypeMeta `json:",inline"`
\t// Standard object's metadata.
\tmetav1.ObjectMeta `json:"metadata,omitempty"`
\tSpec ThingSpec `json:"spec,omitempty"`
\tItems []string `json:"items"`
\tOptional *int32 `json:"optional,omitempty"`
\tSkipped string `json:"-"`
}

type Phase string

type ThingSpec struct {
\tPhase Phase `json:"phase"`
\tCount int32 `json:"count"`
\tEnabled bool `json:"enabled"`
\tName string `json:"name,omitempty"`
\tWhen metav1.Time `json:"when,omitempty"`
\tInline `json:",inline"`
}

type Inline struct {
\tPort int32 `json:"port"`
}
"""

META_SOURCE = """package v1

type TypeMeta struct {
\tKind string `json:"kind,omitempty"`
}

type ObjectMeta struct {
\tName string `json:"name,omitempty"`
\tCreationTimestamp Time `json:"creationTimestamp,omitempty"`
}

type Time struct {
\tx int
}
"""


def test_generator_reads_go_tags(tmp_path: Path) -> None:
    api = tmp_path / "api"
    (api / "example" / "v1").mkdir(parents=True)
    (api / "go.mod").write_text("module k8s.io/api\n")
    (api / "example" / "v1" / "types.go").write_text(GO_SOURCE)
    machinery = tmp_path / "apimachinery"
    (machinery / "pkg" / "apis" / "meta" / "v1").mkdir(parents=True)
    (machinery / "go.mod").write_text("module k8s.io/apimachinery\n")
    (machinery / "pkg" / "apis" / "meta" / "v1" / "types.go").write_text(META_SOURCE)
    known = {
        "io.k8s.api.example.v1.Thing",
        "io.k8s.api.example.v1.ThingSpec",
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
    }
    table = generate([api, machinery], known)
    assert table == {
        "io.k8s.api.example.v1.Thing": {
            "items": None,
            "metadata": "@io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
            "spec": "@io.k8s.api.example.v1.ThingSpec",
        },
        "io.k8s.api.example.v1.ThingSpec": {"count": 0, "enabled": False, "phase": "", "port": 0, "when": None},
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {"creationTimestamp": None},
    }
    assert json.dumps(table)  # plain data, as committed


def test_table_matches_the_schemas_release() -> None:
    """The table is generated from the Go modules of the release whose schemas localkube loads
    (v1.32 <-> v0.32); bumping one without regenerating the other fails here."""
    from importlib import resources

    from localkube.builtin_schemas import KUBERNETES_VERSION

    document = json.loads(resources.files("localkube").joinpath("zero_fields.json").read_text())
    minor = KUBERNETES_VERSION.removeprefix("v1.").split(".")[0]
    assert document["source"].endswith(f"v0.{minor}.0")
