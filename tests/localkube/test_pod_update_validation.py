"""A Pod's spec is immutable on update except for kube's few updatable fields.

The table re-expresses cases of kube-apiserver's own tests (not their code):
kubernetes/kubernetes pkg/apis/core/validation/validation_test.go
TestValidatePodUpdate (images, activeDeadlineSeconds, tolerations,
terminationGracePeriodSeconds, nodeName, scheduling gates, the gated Pod's
nodeSelector and node affinity) and the rules of ValidatePodUpdate in
validation.go that those cases exercise. The HTTP tests drive the real kubectl
(``set image``, ``patch``, ``label``) and the Binding API against localkube,
and check that the simulation, like kube-scheduler, binds through
``pods/binding`` now that a plain update may not set ``spec.nodeName``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from localkube import defaults
from localkube.simulation import SimulationConfig
from localkube.validation import validate
from localkube.validation.pod_spec_diff import pod_spec_diff
from localkube.validation.pod_update import FORBIDDEN
from tests.pullmode import wait_for
from tests.servers import Kubectl, Raw, ServerThread, start_server

Obj = dict[str, Any]
Change = Callable[[Obj], None]

FIXED = (
    "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,"
    "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),"
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"
)
SPEC_FORBIDDEN = "spec: Forbidden: " + FIXED
TOLERATION = {"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute", "tolerationSeconds": 60}
GATES = [{"name": "example.com/quota"}, {"name": "example.com/arch"}]
WEIGHTED = {"weight": 1, "podAffinityTerm": {"topologyKey": "zone", "labelSelector": {"matchLabels": {"a": "b"}}}}
TERM = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}


GO_TERM = (
    "core.NodeSelectorTerm{MatchExpressions:[]core.NodeSelectorRequirement{core.NodeSelectorRequirement{"
    'Key:"zone", Operator:"In", Values:[]string{"a"}}}, MatchFields:[]core.NodeSelectorRequirement(nil)}'
)


def pod(**spec: Any) -> Obj:
    body: Obj = {
        "containers": [{"name": "app", "image": "nginx:1.25"}],
        "initContainers": [{"name": "init", "image": "busybox:1"}],
        **spec,
    }
    defaults.pod_spec(body)
    return {"metadata": {"name": "p", "namespace": "default", "labels": {"app": "web"}}, "spec": body}


def required(*terms: Obj) -> Obj:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def spec_set(**fields: Any) -> Change:
    return lambda p: p["spec"].update(copy.deepcopy(fields))


def spec_drop(field: str) -> Change:
    return lambda p: p["spec"].pop(field, None)


def container_set(field: str, index: int, **values: Any) -> Change:
    return lambda p: p["spec"][field][index].update(values)


def messages(new: Obj, old: Obj, subresource: str = "") -> list[str]:
    """The causes as ``field: message``, the spec diff cut off after the fixed sentence."""
    return [f"{c.field}: {c.message.split(chr(10))[0]}" for c in validate("Pod", new, old, subresource)]


# (case, the stored Pod's spec fields, the change made to it, the causes expected)
CASES: list[tuple[str, Obj, Change, list[str]]] = [
    ("no change", {}, lambda p: None, []),
    ("labels and annotations are metadata", {}, lambda p: p["metadata"].update(annotations={"a": "b"}), []),
    ("container image", {}, container_set("containers", 0, image="nginx:2"), []),
    ("init container image", {}, container_set("initContainers", 0, image="busybox:2"), []),
    ("image removed", {}, container_set("containers", 0, image=""), ["spec.containers[0].image: Required value"]),
    (
        "image with trailing whitespace",
        {},
        container_set("containers", 0, image="nginx:2 "),
        ['spec.containers[0].image: Invalid value: "nginx:2 ": must not have leading or trailing whitespace'],
    ),
    (
        "container added",
        {},
        lambda p: p["spec"]["containers"].append({**p["spec"]["containers"][0], "name": "two"}),
        ["spec.containers: Forbidden: pod updates may not add or remove containers"],
    ),
    (
        "init container removed",
        {},
        lambda p: p["spec"].update(initContainers=[]),
        ["spec.initContainers: Forbidden: pod updates may not add or remove containers"],
    ),
    ("container command", {}, container_set("containers", 0, command=["sleep"]), [SPEC_FORBIDDEN]),
    ("activeDeadlineSeconds set from nil", {}, spec_set(activeDeadlineSeconds=30), []),
    ("activeDeadlineSeconds no change", {"activeDeadlineSeconds": 30}, lambda p: None, []),
    ("activeDeadlineSeconds lowered", {"activeDeadlineSeconds": 30}, spec_set(activeDeadlineSeconds=10), []),
    (
        "activeDeadlineSeconds raised",
        {"activeDeadlineSeconds": 30},
        spec_set(activeDeadlineSeconds=60),
        ["spec.activeDeadlineSeconds: Invalid value: 60: must be less than or equal to previous value"],
    ),
    (
        "activeDeadlineSeconds unset",
        {"activeDeadlineSeconds": 30},
        spec_drop("activeDeadlineSeconds"),
        ['spec.activeDeadlineSeconds: Invalid value: "null": must not update from a positive integer to nil value'],
    ),
    (
        "activeDeadlineSeconds to zero: within the update's range, outside the spec's",
        {"activeDeadlineSeconds": 30},
        spec_set(activeDeadlineSeconds=0),
        ["spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive"],
    ),
    (
        "activeDeadlineSeconds to negative",
        {"activeDeadlineSeconds": 30},
        spec_set(activeDeadlineSeconds=-1),
        [
            "spec.activeDeadlineSeconds: Invalid value: -1: must be between 1 and 2147483647, inclusive",
            "spec.activeDeadlineSeconds: Invalid value: -1: must be between 0 and 2147483647, inclusive",
        ],
    ),
    (
        "activeDeadlineSeconds out of range stops the other checks",
        {},
        lambda p: p["spec"].update(activeDeadlineSeconds=3000000000, restartPolicy="Never"),
        [
            "spec.activeDeadlineSeconds: Invalid value: 3000000000: must be between 1 and 2147483647, inclusive",
            "spec.activeDeadlineSeconds: Invalid value: 3000000000: must be between 0 and 2147483647, inclusive",
        ],
    ),
    ("toleration added", {}, spec_set(tolerations=[TOLERATION]), []),
    (
        "toleration added next to an existing one",
        {"tolerations": [TOLERATION]},
        spec_set(tolerations=[TOLERATION, {"key": "other", "operator": "Exists"}]),
        [],
    ),
    (
        "tolerationSeconds of an existing toleration raised",
        {"tolerations": [TOLERATION]},
        spec_set(tolerations=[{**TOLERATION, "tolerationSeconds": 3600}]),
        [],
    ),
    (
        "tolerationSeconds of an existing toleration removed",
        {"tolerations": [TOLERATION]},
        spec_set(tolerations=[{k: v for k, v in TOLERATION.items() if k != "tolerationSeconds"}]),
        [],
    ),
    (
        "toleration value changed",
        {"tolerations": [TOLERATION]},
        spec_set(tolerations=[{**TOLERATION, "value": "w"}]),
        ["spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"],
    ),
    (
        "toleration removed",
        {"tolerations": [TOLERATION]},
        spec_drop("tolerations"),
        ["spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"],
    ),
    (
        "terminationGracePeriodSeconds to 1 from negative",
        {"terminationGracePeriodSeconds": -1},
        spec_set(terminationGracePeriodSeconds=1),
        [],
    ),
    (
        "terminationGracePeriodSeconds to 2 from negative",
        {"terminationGracePeriodSeconds": -1},
        spec_set(terminationGracePeriodSeconds=2),
        [SPEC_FORBIDDEN],
    ),
    (
        "terminationGracePeriodSeconds to 1 from positive",
        {"terminationGracePeriodSeconds": 30},
        spec_set(terminationGracePeriodSeconds=1),
        [SPEC_FORBIDDEN],
    ),
    ("nodeName set", {}, spec_set(nodeName="node-1"), [SPEC_FORBIDDEN]),
    ("nodeName changed", {"nodeName": "node-1"}, spec_set(nodeName="node-2"), [SPEC_FORBIDDEN]),
    ("restartPolicy changed", {}, spec_set(restartPolicy="Never"), [SPEC_FORBIDDEN]),
    ("serviceAccountName changed", {}, spec_set(serviceAccountName="robot"), [SPEC_FORBIDDEN]),
    (
        "ephemeral containers through a plain update",
        {},
        spec_set(ephemeralContainers=[{"name": "debug", "image": "busybox", "terminationMessagePolicy": "File"}]),
        [SPEC_FORBIDDEN],
    ),
    ("scheduling gate removed", {"schedulingGates": GATES}, spec_set(schedulingGates=GATES[1:]), []),
    ("all scheduling gates removed", {"schedulingGates": GATES}, spec_drop("schedulingGates"), []),
    (
        "scheduling gate added",
        {"schedulingGates": GATES[:1]},
        spec_set(schedulingGates=[*GATES[:1], {"name": "new"}]),
        ["spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling gate 'new'"],
    ),
    (
        "scheduling gate added to an ungated Pod",
        {},
        spec_set(schedulingGates=[{"name": "late"}]),
        ["spec.schedulingGates[0].name: Forbidden: only deletion is allowed, but found new scheduling gate 'late'"],
    ),
    (
        "gated Pod: nodeSelector entry added",
        {"schedulingGates": GATES, "nodeSelector": {"zone": "a"}},
        spec_set(nodeSelector={"zone": "a", "disk": "ssd"}),
        [],
    ),
    ("gated Pod: first nodeSelector", {"schedulingGates": GATES}, spec_set(nodeSelector={"zone": "a"}), []),
    (
        "gated Pod: nodeSelector entry changed",
        {"schedulingGates": GATES, "nodeSelector": {"zone": "a"}},
        spec_set(nodeSelector={"zone": "b", "disk": "ssd"}),
        [
            'spec.nodeSelector: Invalid value: map[string]string{"disk":"ssd", "zone":"b"}: '
            "only additions to spec.nodeSelector are allowed (no mutations or deletions)"
        ],
    ),
    (
        "ungated Pod: nodeSelector entry added",
        {"nodeSelector": {"zone": "a"}},
        spec_set(nodeSelector={"zone": "a", "disk": "ssd"}),
        [SPEC_FORBIDDEN],
    ),
    ("gated Pod: first required node affinity", {"schedulingGates": GATES}, spec_set(affinity=required(TERM)), []),
    (
        "gated Pod: expression added to a term",
        {"schedulingGates": GATES, "affinity": required(TERM)},
        spec_set(
            affinity=required({"matchExpressions": [*TERM["matchExpressions"], {"key": "disk", "operator": "Exists"}]})
        ),
        [],
    ),
    (
        "gated Pod: term added",
        {"schedulingGates": GATES, "affinity": required(TERM)},
        spec_set(affinity=required(TERM, TERM)),
        [
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: "
            "Invalid value: []core.NodeSelectorTerm{"
            + ", ".join([GO_TERM] * 2)
            + "}: no additions/deletions to non-empty NodeSelectorTerms list are allowed"
        ],
    ),
    (
        "gated Pod: expression changed",
        {"schedulingGates": GATES, "affinity": required(TERM)},
        spec_set(affinity=required({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]})),
        [
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]: "
            "Invalid value: core.NodeSelectorTerm{MatchExpressions:[]core.NodeSelectorRequirement{"
            'core.NodeSelectorRequirement{Key:"zone", Operator:"In", Values:[]string{"b"}}}, '
            "MatchFields:[]core.NodeSelectorRequirement(nil)}: only additions are allowed (no mutations or deletions)"
        ],
    ),
    (
        "gated Pod: pod affinity is not among the mutable fields",
        {"schedulingGates": GATES},
        spec_set(affinity={"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [WEIGHTED]}}),
        [SPEC_FORBIDDEN],
    ),
    (
        "ungated Pod: first required node affinity",
        {},
        spec_set(affinity=required(TERM)),
        [SPEC_FORBIDDEN],
    ),
]


@pytest.mark.parametrize(("case", "stored", "change", "expected"), CASES, ids=[c[0] for c in CASES])
def test_validate_pod_update(case: str, stored: Obj, change: Change, expected: list[str]) -> None:
    old = pod(**copy.deepcopy(stored))
    new = copy.deepcopy(old)
    change(new)
    assert messages(new, old) == expected


def test_subresources_keep_their_own_rules() -> None:
    """binding sets spec.nodeName and ephemeralcontainers adds containers: not this rule's business."""
    old = pod()
    bound = copy.deepcopy(old)
    bound["spec"]["nodeName"] = "node-1"
    assert messages(bound, old, "binding") == []
    debugged = copy.deepcopy(old)
    debugged["spec"]["ephemeralContainers"] = [
        {"name": "debug", "image": "busybox", "terminationMessagePolicy": "File", "imagePullPolicy": "Always"}
    ]
    assert messages(debugged, old, "ephemeralcontainers") == []
    assert messages(debugged, old) == [SPEC_FORBIDDEN]


def test_the_fixed_sentence_is_kubes() -> None:
    assert FIXED == FORBIDDEN


def test_the_diff_marks_the_changed_fields_and_folds_the_rest() -> None:
    old = pod()["spec"]
    new = {**old, "restartPolicy": "Never", "nodeName": "node-1"}
    lines = pod_spec_diff(old, new).splitlines()
    assert lines[0] == "  core.PodSpec{" and lines[-1] == "  }"
    assert all(line[:2] in ("  ", "- ", "+ ") for line in lines)
    words = [" ".join(line.split()) for line in lines]  # go-cmp pads the names of neighbouring fields
    assert '- RestartPolicy: "Always",' in words and '+ RestartPolicy: "Never",' in words
    assert '- NodeName: "",' in words and '+ NodeName: "node-1",' in words
    assert "TerminationGracePeriodSeconds: &30," in words  # context next to a change, a pointer
    only_node = [" ".join(line.split()) for line in pod_spec_diff(old, {**old, "nodeName": "n"}).splitlines()]
    # InitContainers, Containers and RestartPolicy are more than two fields away from the change
    assert only_node[1] == "... // 3 identical fields" and only_node[2] == "TerminationGracePeriodSeconds: &30,"


def test_the_diff_walks_into_a_changed_container() -> None:
    old = pod()["spec"]
    new = copy.deepcopy(old)
    new["containers"][0]["workingDir"] = "/srv"
    lines = pod_spec_diff(old, new).splitlines()
    start = lines.index("  \tContainers: []core.Container{")
    assert lines[start + 1] == "  \t\t{" and lines[start + 2] == "  \t\t\t... // 3 identical fields"
    words = [" ".join(line.split()) for line in lines]
    assert '- WorkingDir: "",' in words and '+ WorkingDir: "/srv",' in words


# -- over HTTP, with the real kubectl ----------------------------------------------------------
MANIFEST = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
  - name: c
    image: nginx:1
"""


def test_kubectl_set_image_is_allowed(admin: Kubectl) -> None:
    admin("apply", "-f", "-", stdin=MANIFEST.format(name="imaged"))
    assert "pod/imaged image updated" in admin("set", "image", "pod/imaged", "c=nginx:2").stdout
    assert admin("get", "pod", "imaged", "-o", "jsonpath={.spec.containers[0].image}").stdout == "nginx:2"


def test_kubectl_patch_of_restart_policy_is_refused(admin: Kubectl) -> None:
    admin("apply", "-f", "-", stdin=MANIFEST.format(name="fixed"))
    result = admin("patch", "pod", "fixed", "-p", '{"spec":{"restartPolicy":"Never"}}', check=False)
    assert result.returncode != 0
    assert f'The Pod "fixed" is invalid: {SPEC_FORBIDDEN}\n  core.PodSpec{{' in result.stderr
    assert "- \tRestartPolicy:" in result.stderr and '"Always"' in result.stderr
    assert admin("get", "pod", "fixed", "-o", "jsonpath={.spec.restartPolicy}").stdout == "Always"


def test_kubectl_label_is_allowed(admin: Kubectl) -> None:
    admin("apply", "-f", "-", stdin=MANIFEST.format(name="labelled"))
    assert "pod/labelled labeled" in admin("label", "pod", "labelled", "tier=web").stdout
    assert admin("get", "pod", "labelled", "-o", "jsonpath={.metadata.labels.tier}").stdout == "web"


async def test_put_of_node_name_is_refused_and_binding_sets_it(raw: Raw) -> None:
    pods = "/api/v1/namespaces/default/pods"
    status, created, _ = await raw.request("POST", pods, {"metadata": {"name": "unbound"}, **_spec()})
    assert status == 201, created
    moved = copy.deepcopy(created)
    moved["spec"]["nodeName"] = "node-1"
    status, refused, _ = await raw.request("PUT", f"{pods}/unbound", moved)
    assert status == 422 and refused["reason"] == "Invalid"
    assert refused["message"].startswith(f'Pod "unbound" is invalid: {SPEC_FORBIDDEN}\n  core.PodSpec{{')
    assert [(c["field"], c["reason"]) for c in refused["details"]["causes"]] == [("spec", "FieldValueForbidden")]
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "unbound"}, "target": {"name": "node-1"}}
    status, _, _ = await raw.request("POST", f"{pods}/unbound/binding", binding)
    assert status == 201
    status, bound, _ = await raw.request("GET", f"{pods}/unbound")
    assert bound["spec"]["nodeName"] == "node-1"


def _spec() -> Obj:
    return {"spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}


# -- the simulation's scheduler binds as kube-scheduler does -----------------------------------
@pytest.fixture(scope="module")
def simulated() -> Iterator[ServerThread]:
    yield from start_server(port=0, simulation=SimulationConfig(nodes=1, node_prefix="pu", workloads=True))


def test_simulation_schedules_through_the_binding_api(simulated: ServerThread, workdir: Path) -> None:
    kubectl = Kubectl(simulated.kubeconfig(workdir), workdir / "sim-cache")
    kubectl("apply", "-f", "-", stdin=MANIFEST.format(name="scheduled"))

    def running() -> Obj | None:
        found = json.loads(kubectl("get", "pod", "scheduled", "-o", "json").stdout)
        return found if (found.get("status") or {}).get("phase") == "Running" else None

    found = wait_for(running, what="the simulated scheduler to bind and run the Pod")
    assert found["spec"]["nodeName"] == "pu-1"
    conditions = {c["type"]: c["status"] for c in found["status"]["conditions"]}
    assert conditions["PodScheduled"] == "True"
    # the node is set for good: moving the Pod is refused, as it is on kube
    result = kubectl("patch", "pod", "scheduled", "-p", '{"spec":{"nodeName":"pu-2"}}', check=False)
    assert result.returncode != 0 and SPEC_FORBIDDEN in result.stderr
