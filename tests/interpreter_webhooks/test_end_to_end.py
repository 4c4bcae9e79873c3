"""An interpreter webhook teaching Karmada a CRD kind, through the real control plane and agents.

A ``Workload`` counts its replicas in ``spec.size``, which no built-in rule
knows. A ResourceInterpreterWebhookConfiguration, applied while the control
plane runs, points at a real webhook over TLS (a test CA in ``caBundle``): the
detector's InterpretReplica gives the binding its replicas, the binding
controller's ReviseReplica (a JSON patch) gives each member its share, the
agents' InterpretStatus and InterpretHealth report the members' status, and
the control plane's AggregateStatus (a JSON patch) sums it into the template.
A second configuration whose webhook is down fails its own kind, with an
event, while the first kind keeps flowing; deleted, its kind falls back to the
rules below. Last, the first configuration moves to a ``clientConfig.service``
(an ExternalName Service on the control plane), still without a restart.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest

from tests.interpreter_webhooks.hookserver import HookServer
from tests.pullmode import PullMode, wait_for
from tests.servers import Kubectl, ServerThread

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

GROUP = "workloads.example.io"


def crd(kind: str, plural: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "names": {"kind": kind, "plural": plural, "singular": kind.lower(), "listKind": f"{kind}List"},
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


CRDS = [crd("Workload", "workloads"), crd("Gadget", "gadgets")]


def webhook_configuration(name: str, kind: str, url: str, ca_bundle: str) -> dict[str, Any]:
    return {
        "apiVersion": "config.karmada.io/v1alpha1",
        "kind": "ResourceInterpreterWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [
            {
                "name": f"{kind.lower()}s.example.io",
                "clientConfig": {"url": url, "caBundle": ca_bundle},
                "rules": [
                    {
                        "operations": [
                            "InterpretReplica",
                            "ReviseReplica",
                            "InterpretStatus",
                            "InterpretHealth",
                            "AggregateStatus",
                        ],
                        "apiGroups": [GROUP],
                        "apiVersions": ["v1"],
                        "kinds": [kind],
                    }
                ],
                "timeoutSeconds": 3,
                "interpreterContextVersions": ["v1alpha1"],
            }
        ],
    }


def workload(kind: str, name: str, size: int) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"size": size},
    }


POLICY = {
    "apiVersion": "policy.karmada.io/v1alpha1",
    "kind": "PropagationPolicy",
    "metadata": {"name": "workloads", "namespace": "default"},
    "spec": {
        "resourceSelectors": [
            {"apiVersion": f"{GROUP}/v1", "kind": "Workload"},
            {"apiVersion": f"{GROUP}/v1", "kind": "Gadget"},
        ],
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


@pytest.fixture(scope="module")
def hook() -> Iterator[HookServer]:
    server = HookServer().start()
    yield server
    server.stop()


def get(kubectl: Kubectl, *args: str) -> Any:
    result = kubectl("get", *args, "-o", "json", check=False)
    return json.loads(result.stdout) if result.returncode == 0 else None


def events_about(kubectl: Kubectl, name: str) -> list[dict[str, Any]]:
    found = get(kubectl, "events", f"--field-selector=involvedObject.name={name}") or {"items": []}
    return list(found["items"])


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_a_webhook_interprets_a_crd_kind_end_to_end(
    pull_mode: PullMode, member1: ServerThread, member2: ServerThread, hook: HookServer
) -> None:
    members = {"member1": member1, "member2": member2}
    admins = {name: pull_mode.member_admin(server, name) for name, server in members.items()}
    for name, server in members.items():
        for definition in CRDS:
            admins[name]("apply", "-f", "-", stdin=json.dumps(definition))
        pull_mode.register(server, name)
        pull_mode.start_agent(server, name)
    for name in members:
        wait_for(partial(lambda n: pull_mode.ready(n) == "True", name), timeout=60, what=f"{name} Ready")
    admin = pull_mode.admin
    for definition in CRDS:
        admin("apply", "-f", "-", stdin=json.dumps(definition))
    # applied while the control plane and the agents run: no restart
    admin(
        "apply", "-f", "-", stdin=json.dumps(webhook_configuration("workloads", "Workload", hook.url, hook.ca_bundle))
    )
    assert get(admin, "resourceinterpreterwebhookconfigurations", "workloads")["webhooks"][0]["timeoutSeconds"] == 3
    admin("apply", "-f", "-", stdin=json.dumps(POLICY))
    admin("apply", "-f", "-", stdin=json.dumps(workload("Workload", "web", 4)))

    # InterpretReplica by the webhook, Divided 1:1, ReviseReplica (a JSON patch) per member
    rb = "web-workload"
    wait_for(lambda: (get(admin, "rb", rb) or {}).get("spec", {}).get("replicas") == 4, timeout=60, what="replicas")
    assert get(admin, "rb", rb)["spec"]["replicaRequirements"] == {"resourceRequest": {"cpu": "250m"}}
    for name in members:
        wait_for(
            partial(lambda n: (get(admins[n], f"workloads.{GROUP}", "web") or {}).get("spec") == {"size": 2}, name),
            timeout=60,
            what=f"web with size 2 in {name}",
        )

    # the members' status: InterpretStatus and InterpretHealth in the agents, AggregateStatus in the control plane
    for name in members:
        admins[name](
            "patch",
            f"workloads.{GROUP}",
            "web",
            "--subresource=status",
            "--type=merge",
            "-p",
            json.dumps({"status": {"ready": 2, "noise": "x"}}),
        )
    wait_for(
        lambda: (get(admin, f"workloads.{GROUP}", "web") or {}).get("status") == {"ready": 4},
        timeout=60,
        what="the status aggregated by the webhook",
    )
    items = get(admin, "rb", rb)["status"]["aggregatedStatus"]
    assert sorted(i["clusterName"] for i in items) == ["member1", "member2"]
    assert all(i["health"] == "Healthy" and i["status"] == {"ready": 2} for i in items)
    assert {"InterpretReplica", "ReviseReplica", "InterpretStatus", "InterpretHealth", "AggregateStatus"} <= (
        hook.operations()
    )

    # a webhook that is down fails its own kind, with an event; the other kind keeps flowing
    down = f"https://127.0.0.1:{_closed_port()}/interpret"
    admin("apply", "-f", "-", stdin=json.dumps(webhook_configuration("gadgets", "Gadget", down, hook.ca_bundle)))
    admin("apply", "-f", "-", stdin=json.dumps(workload("Gadget", "broken", 2)))

    def failed_event() -> list[dict[str, Any]]:
        return [
            e
            for e in events_about(admin, "broken")
            if e.get("reason") == "GetReplicasFailed"
            and 'failed calling webhook "gadgets/gadgets.example.io"' in (e.get("message") or "")
        ]

    wait_for(failed_event, timeout=60, what="the webhook failure in an event")
    admin("apply", "-f", "-", stdin=json.dumps(workload("Workload", "api", 6)))
    wait_for(
        lambda: (get(admin, "rb", "api-workload") or {}).get("spec", {}).get("replicas") == 6,
        timeout=60,
        what="the other kind still interpreted",
    )
    for name in members:
        wait_for(
            partial(lambda n: (get(admins[n], f"workloads.{GROUP}", "api") or {}).get("spec") == {"size": 3}, name),
            timeout=60,
            what=f"api with size 3 in {name}",
        )
    assert get(admin, "rb", "broken-gadget") is None

    # a deleted configuration: the kind falls back to the rules below (none here: no replicas)
    admin("delete", "resourceinterpreterwebhookconfiguration", "gadgets")
    wait_for(
        lambda: get(admin, "rb", "broken-gadget") is not None,
        timeout=60,
        what="the gadget's binding, without the webhook",
    )
    assert get(admin, "rb", "broken-gadget")["spec"].get("replicas") in (None, 0)

    # clientConfig.service: the control plane resolves the Service it has (an ExternalName here)
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "interpreter", "namespace": "default"},
        "spec": {"type": "ExternalName", "externalName": "127.0.0.1", "ports": [{"port": hook.port}]},
    }
    admin("apply", "-f", "-", stdin=json.dumps(service))
    by_service = webhook_configuration("workloads", "Workload", hook.url, hook.ca_bundle)
    by_service["webhooks"][0]["clientConfig"] = {
        "service": {"namespace": "default", "name": "interpreter", "port": hook.port, "path": "/interpret"},
        "caBundle": hook.ca_bundle,
    }
    admin("apply", "-f", "-", stdin=json.dumps(by_service))
    admin("apply", "-f", "-", stdin=json.dumps(workload("Workload", "svc", 2)))
    wait_for(
        lambda: (get(admin, "rb", "svc-workload") or {}).get("spec", {}).get("replicas") == 2,
        timeout=60,
        what="replicas through the Service",
    )
    assert ("InterpretReplica", "Workload", "svc") in hook.seen
