"""localkube driven by the real kubectl: the conformance checks of the issue."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from manifests import crd_files
from tests.conftest import UserFactory
from tests.factories import crd
from tests.programs import kubectl, program_env
from tests.servers import Kubectl, ServerThread

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: demo
  namespace: {ns}
  labels: {{app: demo}}
data:
  a: "{value}"
"""


def test_version_reports_1_32(admin: Kubectl) -> None:
    out = admin("version", "-o", "json").stdout
    assert json.loads(out)["serverVersion"]["minor"] == "32"


def test_api_resources_with_a_fresh_cache(admin: Kubectl, workdir: Path) -> None:
    out = admin("api-resources", f"--cache-dir={workdir / 'fresh'}").stdout
    assert "configmaps" in out and "cm" in out
    assert "leases" in out and "coordination.k8s.io/v1" in out


def test_apply_then_reapply_changed_file(admin: Kubectl, tmp_path: Path) -> None:
    admin("create", "namespace", "apply-test")
    manifest = tmp_path / "cm.yaml"
    manifest.write_text(CONFIGMAP.format(ns="apply-test", value="1"))
    assert "configmap/demo created" in admin("apply", "-f", str(manifest)).stdout
    manifest.write_text(CONFIGMAP.format(ns="apply-test", value="2"))
    result = admin("apply", "-f", str(manifest))
    assert "configmap/demo configured" in result.stdout and not result.stderr
    assert admin("get", "cm", "demo", "-n", "apply-test", "-o", "jsonpath={.data.a}").stdout == "2"
    unchanged = admin("apply", "-f", str(manifest))
    assert "unchanged" in unchanged.stdout


def test_get_output_formats(admin: Kubectl) -> None:
    admin("create", "configmap", "formats", "--from-literal=k=v")
    as_json = json.loads(admin("get", "cm", "formats", "-o", "json").stdout)
    assert as_json["data"] == {"k": "v"} and as_json["metadata"]["uid"]
    assert "k: v" in admin("get", "cm", "formats", "-o", "yaml").stdout
    table = admin("get", "cm", "formats").stdout.splitlines()
    assert table[0].split() == ["NAME", "DATA", "AGE"] and table[1].split()[:2] == ["formats", "1"]
    assert admin("get", "cm", "-o", "name").stdout.count("configmap/") >= 2
    assert "formats" in admin("get", "cm", "formats", "-o", "wide").stdout


def test_label_annotate_and_describe(admin: Kubectl) -> None:
    admin("create", "configmap", "tagged", "--from-literal=k=v")
    admin("label", "cm", "tagged", "tier=web")
    admin("annotate", "cm", "tagged", "owner=platform")
    meta = json.loads(admin("get", "cm", "tagged", "-o", "json").stdout)["metadata"]
    assert meta["labels"] == {"tier": "web"} and meta["annotations"]["owner"] == "platform"
    assert admin("get", "cm", "-l", "tier=web", "-o", "name").stdout.strip() == "configmap/tagged"
    assert admin("get", "cm", "-l", "tier!=web", "-o", "name").stdout.count("configmap/tagged") == 0
    described = admin("describe", "cm", "tagged").stdout
    assert "tier=web" in described and "owner: platform" in described


def test_patch_types(admin: Kubectl) -> None:
    admin("create", "deployment", "web", "--image=nginx:1.25")
    admin(
        "patch",
        "deployment",
        "web",
        "-p",
        '{"spec":{"template":{"spec":{"containers":[{"name":"nginx","env":[{"name":"A","value":"1"}]}]}}}}',
    )
    admin(
        "patch",
        "deployment",
        "web",
        "-p",
        '{"spec":{"template":{"spec":{"containers":[{"name":"nginx","env":[{"name":"B","value":"2"}]}]}}}}',
    )
    container = json.loads(admin("get", "deploy", "web", "-o", "json").stdout)["spec"]["template"]["spec"][
        "containers"
    ][0]
    assert container["image"] == "nginx:1.25"
    assert [e["name"] for e in container["env"]] == ["A", "B"], "strategic merge keeps both env entries"
    admin("patch", "deployment", "web", "--type=merge", "-p", '{"spec":{"replicas":3}}')
    admin("patch", "deployment", "web", "--type=json", "-p", '[{"op":"replace","path":"/spec/replicas","value":4}]')
    deployment = json.loads(admin("get", "deploy", "web", "-o", "json").stdout)
    assert deployment["spec"]["replicas"] == 4
    assert deployment["metadata"]["generation"] == 5
    failed = admin(
        "patch", "deployment", "web", "--type=json", "-p", '[{"op":"remove","path":"/spec/nothing"}]', check=False
    )
    assert failed.returncode == 1 and "The request is invalid: unable to remove nonexistent key" in failed.stderr


def test_scale_subresource(admin: Kubectl) -> None:
    admin("create", "deployment", "scaled", "--image=nginx")
    admin("scale", "deployment", "scaled", "--replicas=5")
    assert admin("get", "deploy", "scaled", "-o", "jsonpath={.spec.replicas}").stdout == "5"


def test_watch_prints_later_changes(admin: Kubectl) -> None:
    admin("create", "configmap", "watched", "--from-literal=k=1")
    process = subprocess.Popen(
        [
            kubectl(),
            f"--kubeconfig={admin.kubeconfig}",
            f"--cache-dir={admin.cache_dir}",
            "get",
            "cm",
            "watched",
            "-w",
            "--output-watch-events",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=program_env(),
    )
    try:
        time.sleep(1.0)
        admin("patch", "cm", "watched", "-p", '{"data":{"k":"2"}}')
        admin("delete", "cm", "watched")
        time.sleep(1.0)
    finally:
        process.terminate()
        out, _ = process.communicate(timeout=10)
    lines = [line.split() for line in out.splitlines() if line.strip()]
    assert lines[0][:2] == ["EVENT", "NAME"]
    assert [line[0] for line in lines[1:]] == ["ADDED", "MODIFIED", "DELETED"]


def test_delete_waits_for_finalizers(admin: Kubectl) -> None:
    admin("create", "configmap", "held", "--from-literal=k=v")
    admin("patch", "cm", "held", "--type=merge", "-p", '{"metadata":{"finalizers":["example.com/hold"]}}')
    admin("delete", "cm", "held", "--wait=false")
    meta = json.loads(admin("get", "cm", "held", "-o", "json").stdout)["metadata"]
    assert meta["deletionTimestamp"] and meta["finalizers"] == ["example.com/hold"]
    forbidden = admin(
        "patch",
        "cm",
        "held",
        "--type=merge",
        "-p",
        '{"metadata":{"finalizers":["example.com/hold","x.io/new"]}}',
        check=False,
    )
    assert forbidden.returncode == 1 and "no new finalizers can be added" in forbidden.stderr
    admin("patch", "cm", "held", "--type=json", "-p", '[{"op":"remove","path":"/metadata/finalizers"}]')
    missing = admin("get", "cm", "held", check=False)
    assert missing.returncode == 1 and 'configmaps "held" not found' in missing.stderr


def _owned_secret(admin: Kubectl, owner: str, name: str) -> None:
    uid = admin("get", "cm", owner, "-o", "jsonpath={.metadata.uid}").stdout
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": name,
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "ConfigMap", "name": owner, "uid": uid, "blockOwnerDeletion": True}
            ],
        },
        "stringData": {"k": "v"},
    }
    admin("apply", "-f", "-", stdin=json.dumps(secret))


def _wait_gone(admin: Kubectl, *what: str, timeout: float = 5) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if admin("get", *what, check=False).returncode == 1:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("policy", ["background", "foreground", "orphan"])
def test_cascading_garbage_collection(admin: Kubectl, policy: str) -> None:
    owner, dependent = f"owner-{policy}", f"dependent-{policy}"
    admin("create", "configmap", owner)
    _owned_secret(admin, owner, dependent)
    admin("delete", "cm", owner, f"--cascade={policy}")
    assert _wait_gone(admin, "cm", owner)
    if policy == "orphan":
        secret = json.loads(admin("get", "secret", dependent, "-o", "json").stdout)
        assert "ownerReferences" not in secret["metadata"]
    else:
        assert _wait_gone(admin, "secret", dependent)


def test_namespace_termination_deletes_content(admin: Kubectl) -> None:
    admin("create", "namespace", "doomed")
    admin("create", "configmap", "inside", "-n", "doomed")
    admin("delete", "namespace", "doomed", timeout=20)
    assert _wait_gone(admin, "namespace", "doomed")
    again = admin("create", "configmap", "inside", "-n", "doomed", check=False)
    assert 'namespaces "doomed" not found' in again.stderr


def test_auth_can_i_as_different_users(admin: Kubectl, as_user: UserFactory) -> None:
    alice = as_user("alice")
    assert alice("auth", "can-i", "list", "configmaps", check=False).stdout.strip() == "no"
    denied = alice("get", "configmaps", check=False)
    assert denied.returncode == 1
    assert 'User "alice" cannot list resource "configmaps" in API group "" in the namespace "default"' in denied.stderr
    admin("create", "rolebinding", "alice-view", "--clusterrole=view", "--user=alice", "-n", "default")
    assert alice("auth", "can-i", "list", "configmaps").stdout.strip() == "yes"
    assert alice("auth", "can-i", "list", "configmaps", "-n", "kube-system", check=False).stdout.strip() == "no"
    assert admin("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}").stdout == "kubernetes-admin"


def test_karmada_crds_and_printer_columns(admin: Kubectl) -> None:
    for path in crd_files():
        admin("apply", "-f", str(path))
    admin("wait", "--for=condition=Established", "crd/clusters.cluster.karmada.io", "--timeout=10s")
    cluster = {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": "member1"},
        "spec": {"syncMode": "Pull", "region": "r1", "zones": ["z1"]},
    }
    admin("apply", "-f", "-", stdin=json.dumps(cluster))
    lines = admin("get", "clusters").stdout.splitlines()
    assert lines[0].split() == ["NAME", "VERSION", "MODE", "READY", "AGE"]
    assert lines[1].split()[:2] == ["member1", "Pull"]
    wide = admin("get", "clusters", "-o", "wide").stdout.splitlines()[0].split()
    assert wide[-5:] == ["ZONES", "REGION", "PROVIDER", "API-ENDPOINT", "PROXY-URL"]
    status = {
        "status": {
            "kubernetesVersion": "v1.32.0",
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "ClusterReady",
                    "message": "ok",
                    "lastTransitionTime": "2024-01-01T00:00:00Z",
                }
            ],
        }
    }
    admin("patch", "cluster", "member1", "--subresource=status", "--type=merge", "-p", json.dumps(status))
    row = admin("get", "clusters", "member1").stdout.splitlines()[1].split()
    assert row[:4] == ["member1", "v1.32.0", "Pull", "True"]
    admin("wait", "--for=condition=Ready", "cluster/member1", "--timeout=5s")


def test_json_patch_replace_of_a_missing_key_adds_it(admin: Kubectl) -> None:
    """gopkg.in/evanphx/json-patch.v4, as kube-apiserver's patch handler uses it (test_json_patch.py)."""
    admin("apply", "-f", str(next(p for p in crd_files() if p.name == "policy.karmada.io_propagationpolicies.yaml")))
    admin("wait", "--for=condition=Established", "crd/propagationpolicies.policy.karmada.io", "--timeout=10s")
    policy = {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": "replace-adds", "namespace": "default"},
        "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}]},
    }
    admin("apply", "-f", "-", stdin=json.dumps(policy))
    replace = '[{"op":"replace","path":"/spec/propagateDeps","value":true}]'
    admin("patch", "propagationpolicy", "replace-adds", "--type=json", "-p", replace)
    patched = json.loads(admin("get", "propagationpolicy", "replace-adds", "-o", "json").stdout)
    assert patched["spec"]["propagateDeps"] is True
    past_the_end = '[{"op":"replace","path":"/spec/resourceSelectors/1","value":{"apiVersion":"v1","kind":"Secret"}}]'
    failed = admin("patch", "propagationpolicy", "replace-adds", "--type=json", "-p", past_the_end, check=False)
    assert failed.returncode == 1
    assert "replace operation does not apply: doc is missing key: /spec/resourceSelectors/1" in failed.stderr
    no_parent = '[{"op":"replace","path":"/spec/failover/application","value":{}}]'
    failed = admin("patch", "propagationpolicy", "replace-adds", "--type=json", "-p", no_parent, check=False)
    assert failed.returncode == 1
    assert "replace operation does not apply: doc is missing path: /spec/failover/application" in failed.stderr


def test_custom_resource_strict_validation_and_defaults(admin: Kubectl) -> None:
    for path in crd_files():
        admin("apply", "-f", str(path))
    policy: dict[str, Any] = {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": "typo"},
        "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}], "placment": {}},
    }
    failed = admin("apply", "-f", "-", stdin=json.dumps(policy), check=False)
    assert failed.returncode == 1 and 'strict decoding error: unknown field "spec.placment"' in failed.stderr
    del policy["spec"]["placment"]
    policy["spec"]["placement"] = {"replicaScheduling": {}}
    admin("apply", "-f", "-", stdin=json.dumps(policy))
    spec = json.loads(admin("get", "pp", "typo", "-o", "json").stdout)["spec"]
    assert spec["priority"] == 0 and spec["conflictResolution"] == "Abort"
    assert spec["placement"]["replicaScheduling"]["replicaSchedulingType"] == "Divided"
    policy["spec"]["placement"]["replicaScheduling"]["replicaSchedulingType"] = "Dup"
    invalid = admin("apply", "-f", "-", stdin=json.dumps(policy), check=False)
    assert (
        "spec.placement.replicaScheduling.replicaSchedulingType: "
        'Unsupported value: "Dup": supported values: "Duplicated", "Divided"'
    ) in invalid.stderr


def test_certificate_approve_signs_client_certificates(admin: Kubectl, localkube: ServerThread) -> None:
    import base64

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    request = (
        x509.CertificateSigningRequestBuilder()
        .subject_name(
            x509.Name(
                [x509.NameAttribute(NameOID.ORGANIZATION_NAME, "team"), x509.NameAttribute(NameOID.COMMON_NAME, "bob")]
            )
        )
        .sign(key, hashes.SHA256())
    )
    csr = {
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": "bob"},
        "spec": {
            "request": base64.b64encode(request.public_bytes(serialization.Encoding.PEM)).decode(),
            "signerName": "kubernetes.io/kube-apiserver-client",
            "usages": ["digital signature", "client auth"],
            "expirationSeconds": 3600,
        },
    }
    admin("apply", "-f", "-", stdin=json.dumps(csr))
    stored = json.loads(admin("get", "csr", "bob", "-o", "json").stdout)
    assert stored["spec"]["username"] == "kubernetes-admin" and "system:masters" in stored["spec"]["groups"]
    admin("certificate", "approve", "bob")
    deadline = time.monotonic() + 5
    certificate = ""
    while time.monotonic() < deadline and not certificate:
        certificate = admin("get", "csr", "bob", "-o", "jsonpath={.status.certificate}").stdout
        time.sleep(0.1)
    issued = x509.load_pem_x509_certificate(base64.b64decode(certificate))
    assert issued.subject.rfc4514_string() == "CN=bob,O=team"
    assert 3500 < (issued.not_valid_after_utc - issued.not_valid_before_utc).total_seconds() - 300 <= 3600
    conditions = json.loads(admin("get", "csr", "bob", "-o", "json").stdout)["status"]["conditions"]
    assert conditions[0]["type"] == "Approved" and conditions[0]["reason"] == "KubectlApprove"


def test_create_token_for_a_service_account(admin: Kubectl, localkube: ServerThread, workdir: Path) -> None:
    admin("create", "serviceaccount", "robot")
    admin("create", "rolebinding", "robot-view", "--clusterrole=view", "--serviceaccount=default:robot")
    token = admin("create", "token", "robot", "--duration=10m").stdout.strip()
    assert token.count(".") == 2
    config = workdir / "robot.kubeconfig"
    config.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "l", "cluster": {"server": localkube.url, "insecure-skip-tls-verify": True}}],
                "users": [{"name": "robot", "user": {"token": token}}],
                "contexts": [{"name": "l", "context": {"cluster": "l", "user": "robot", "namespace": "default"}}],
                "current-context": "l",
            }
        )
    )
    robot = Kubectl(config, workdir / "cache")
    who = robot("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}").stdout
    assert who == "system:serviceaccount:default:robot"
    assert robot("auth", "can-i", "list", "configmaps").stdout.strip() == "yes"
    assert robot("auth", "can-i", "create", "configmaps", check=False).stdout.strip() == "no"


def test_errors_keep_the_server_serving(admin: Kubectl) -> None:
    bad_name = admin("create", "configmap", "Bad_Name", check=False)
    assert 'metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain' in bad_name.stderr
    dup = admin("create", "configmap", "dup")
    assert dup.returncode == 0
    again = admin("create", "configmap", "dup", check=False)
    assert 'configmaps "dup" already exists' in again.stderr
    applied = admin(
        "create", "-f", "-", stdin='{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"}}', check=False
    )
    assert (
        'Error from server (AlreadyExists): error when creating "STDIN": configmaps "dup" already exists'
        in applied.stderr
    )
    assert admin("get", "--raw", "/healthz").stdout == "ok"
    unknown = admin("get", "widgets", check=False)
    assert unknown.returncode == 1


def test_explain_custom_resources(admin: Kubectl) -> None:
    for path in crd_files():
        admin("apply", "-f", str(path))
    out = admin("explain", "propagationpolicies.spec.placement.replicaScheduling").stdout
    assert "replicaSchedulingType" in out and "weightPreference" in out


def test_explain_built_in_kinds(admin: Kubectl) -> None:
    out = admin("explain", "deployment.spec.strategy").stdout
    assert "KIND:       Deployment" in out and "rollingUpdate" in out and "Recreate" in out
    out = admin("explain", "pods.spec.containers.ports", "--recursive").stdout
    assert "containerPort" in out and "hostIP" in out


TYPO_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  replicass: 2
  selector: {{matchLabels: {{app: typo}}}}
  template:
    metadata: {{labels: {{app: typo}}}}
    spec:
      containers: [{{name: c, image: nginx, imagePullPolicyy: Always}}]
"""


def test_unknown_fields_of_built_in_kinds(admin: Kubectl) -> None:
    strict = admin("apply", "-f", "-", stdin=TYPO_DEPLOYMENT.format(name="strict"), check=False)
    assert strict.returncode == 1
    assert (
        'strict decoding error: unknown field "spec.replicass", '
        'unknown field "spec.template.spec.containers[0].imagePullPolicyy"'
    ) in strict.stderr
    warned = admin("apply", "--validate=warn", "-f", "-", stdin=TYPO_DEPLOYMENT.format(name="warned"))
    assert 'Warning: unknown field "spec.replicass"' in warned.stderr
    admin("apply", "--validate=false", "-f", "-", stdin=TYPO_DEPLOYMENT.format(name="ignored"))
    stored = json.loads(admin("get", "deployment", "ignored", "-o", "json").stdout)
    assert "replicass" not in stored["spec"], "unknown fields are dropped like the Go decoder does"
    assert stored["spec"]["replicas"] == 1


def test_apply_a_list_with_client_side_validation(admin: Kubectl) -> None:
    items = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "listed"}, "data": {"x": "1"}},
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "listed"}, "stringData": {"y": "2"}},
    ]
    listed = json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
    out = admin("apply", "-f", "-", stdin=listed).stdout
    assert "configmap/listed created" in out and "secret/listed created" in out
    typo = json.dumps({"apiVersion": "v1", "kind": "List", "items": [{**items[0], "dataa": {}}]})
    refused = admin("apply", "-f", "-", stdin=typo, check=False)
    assert refused.returncode == 1
    assert 'unknown field "dataa" in io.k8s.api.core.v1.ConfigMap' in refused.stderr


def test_crd_with_cel_rules_is_refused(admin: Kubectl) -> None:
    widgets = crd(
        "example.com",
        "Widget",
        {
            "type": "object",
            "x-kubernetes-validations": [{"rule": "self.spec.a > 0"}],
            "properties": {"spec": {"type": "object", "properties": {"a": {"type": "integer"}}}},
        },
        list_kind=False,
    )
    refused = admin("apply", "-f", "-", stdin=json.dumps(widgets), check=False)
    assert refused.returncode == 1 and "CEL validation rules are not supported" in refused.stderr
