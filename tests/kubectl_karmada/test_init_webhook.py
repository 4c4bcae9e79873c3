"""``kubectl karmada init`` registering karmada-webhook: certificates, the two webhook
configurations with Karmada's names and rules, and the deployed webhook."""

from __future__ import annotations

import base64
import json
import stat
from pathlib import Path

from cryptography import x509

from tests.servers import Kubectl, Plugin


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_init_registers_a_webhook_served_by_url(plugin: Plugin, admin: Kubectl, tmp_path: Path) -> None:
    certs = tmp_path / "webhook"
    out = plugin(
        "init", "--apiserver", "external", "--webhook-url", "https://127.0.0.1:9443", "--webhook-cert-dir", str(certs)
    ).stdout
    assert "mutatingwebhookconfiguration/mutating-config applied" in out
    assert "validatingwebhookconfiguration/validating-config applied" in out
    assert _mode(certs) == 0o700
    assert sorted(p.name for p in certs.iterdir()) == ["ca.crt", "ca.key", "tls.crt", "tls.key"]
    assert all(_mode(p) == 0o600 for p in certs.iterdir())
    validating = json.loads(admin("get", "validatingwebhookconfiguration", "validating-config", "-o", "json").stdout)
    hooks = {h["name"]: h for h in validating["webhooks"]}
    policy = hooks["propagationpolicy.karmada.io"]
    assert policy["clientConfig"]["url"] == "https://127.0.0.1:9443/validate-propagationpolicy"
    assert base64.b64decode(policy["clientConfig"]["caBundle"]) == (certs / "ca.crt").read_bytes()
    assert policy["failurePolicy"] == "Fail" and policy["sideEffects"] == "None" and policy["timeoutSeconds"] == 3
    assert policy["rules"] == [
        {
            "operations": ["CREATE", "UPDATE"],
            "apiGroups": ["policy.karmada.io"],
            "apiVersions": ["*"],
            "resources": ["propagationpolicies"],
            "scope": "Namespaced",
        }
    ]
    protection = hooks["resourcedeletionprotection.karmada.io"]
    assert protection["rules"][0]["operations"] == ["DELETE"] and protection["rules"][0]["resources"] == ["*"]
    assert (
        protection["objectSelector"]["matchExpressions"][0]["key"] == "resourcetemplate.karmada.io/deletion-protected"
    )
    assert hooks["resourceinterpretercustomization.karmada.io"]["timeoutSeconds"] == 10
    assert hooks["resourcebinding.karmada.io"]["sideEffects"] == "NoneOnDryRun"
    assert hooks["cluster.karmada.io"]["failurePolicy"] == "Fail"  # an outage lets no agent change through
    mutating = json.loads(admin("get", "mutatingwebhookconfiguration", "mutating-config", "-o", "json").stdout)
    mutating_hooks = {h["name"]: h for h in mutating["webhooks"]}
    assert mutating_hooks["resourcebinding.karmada.io"]["rules"][0]["operations"] == ["CREATE"]
    assert mutating_hooks["work.karmada.io"]["clientConfig"]["url"] == "https://127.0.0.1:9443/mutate-work"
    # the serving certificate names loopback and the Service
    cert = x509.load_pem_x509_certificate((certs / "tls.crt").read_bytes())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "karmada-webhook.karmada-system.svc" in names.get_values_for_type(x509.DNSName)
    # running init again keeps the CA: the configurations do not change
    before = (certs / "ca.crt").read_bytes()
    plugin(
        "init", "--apiserver", "external", "--webhook-url", "https://127.0.0.1:9443", "--webhook-cert-dir", str(certs)
    )
    assert (certs / "ca.crt").read_bytes() == before
    plugin("deinit")  # the API server is shared by this module's tests


def test_init_without_a_webhook_registers_none(plugin: Plugin, admin: Kubectl) -> None:
    plugin("init", "--apiserver", "external")
    assert admin("get", "validatingwebhookconfiguration,mutatingwebhookconfiguration", "-o", "name").stdout == ""
    plugin("deinit")


def test_init_deploy_runs_the_webhook_behind_its_service(plugin: Plugin, admin: Kubectl) -> None:
    plugin("init", "--apiserver", "external", "--deploy", "--controlplane-image", "registry.example/karmada-py:1.0")
    deployment = json.loads(admin("get", "deploy", "karmada-webhook", "-n", "karmada-system", "-o", "json").stdout)
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "registry.example/karmada-py:1.0"
    assert container["command"][0] == "karmada-webhook"
    assert deployment["spec"]["template"]["spec"]["volumes"][0]["secret"]["secretName"] == "karmada-webhook-cert"
    service = json.loads(admin("get", "service", "karmada-webhook", "-n", "karmada-system", "-o", "json").stdout)
    assert service["spec"]["ports"][0]["port"] == 443 and service["spec"]["ports"][0]["targetPort"] == 8443
    secret = json.loads(admin("get", "secret", "karmada-webhook-cert", "-n", "karmada-system", "-o", "json").stdout)
    assert sorted(secret["data"]) == ["ca.crt", "ca.key", "tls.crt", "tls.key"]
    validating = json.loads(admin("get", "validatingwebhookconfiguration", "validating-config", "-o", "json").stdout)
    client = validating["webhooks"][0]["clientConfig"]
    assert client["service"] == {
        "name": "karmada-webhook",
        "namespace": "karmada-system",
        "path": "/validate-propagationpolicy",
        "port": 443,
    }
    assert client["caBundle"] == secret["data"]["ca.crt"]
    # again: the Secret's CA is reused
    plugin("init", "--apiserver", "external", "--deploy")
    again = json.loads(admin("get", "secret", "karmada-webhook-cert", "-n", "karmada-system", "-o", "json").stdout)
    assert again["data"]["ca.crt"] == secret["data"]["ca.crt"]
    plugin("deinit")
    assert admin("get", "validatingwebhookconfiguration,mutatingwebhookconfiguration", "-o", "name").stdout == ""
