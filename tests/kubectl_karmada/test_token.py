"""``kubectl karmada token``: tokens kube-apiserver accepts, commands users can paste."""

from __future__ import annotations

import json
import re
import shlex
import time
from pathlib import Path

from karmada.pki import BootstrapToken, ca_cert_hash
from tests.servers import Kubectl, Plugin, ServerThread


def test_create_list_and_delete(plugin: Plugin, admin: Kubectl) -> None:
    plugin("init", "--apiserver", "external")
    token = plugin("token", "create", "--description", "for member1").stdout.strip()
    assert re.fullmatch(r"[a-z0-9]{6}\.[a-z0-9]{16}", token)
    token_id, secret = token.split(".")
    listed = plugin("token", "list").stdout
    assert listed.splitlines()[0].split() == [
        "TOKEN",
        "ID",
        "TTL",
        "EXPIRES",
        "USAGES",
        "DESCRIPTION",
        "EXTRA",
        "GROUPS",
    ]
    assert token_id in listed and secret not in listed and "23h" in listed and "for member1" in listed
    as_json = json.loads(plugin("token", "list", "-o", "json").stdout)["items"]
    mine = next(item for item in as_json if item["id"] == token_id)
    assert mine["usages"] == ["authentication", "signing"]
    assert mine["groups"] == ["system:bootstrappers:karmada:default-cluster-token"]
    assert plugin("token", "list", "-o", "jsonpath={.items[*].id}").stdout.split().count(token_id) == 1
    stored = json.loads(admin("get", "secret", f"bootstrap-token-{token_id}", "-n", "kube-system", "-o", "json").stdout)
    assert stored["type"] == "bootstrap.kubernetes.io/token"
    forever = plugin("token", "create", "--ttl", "0").stdout.strip()
    assert "<forever>" in plugin("token", "list").stdout
    assert plugin("token", "delete", token_id).stdout.strip() == f'bootstrap token "{token_id}" deleted'
    assert plugin("token", "delete", forever).returncode == 0
    missing = plugin("token", "delete", token_id, check=False)
    assert missing.returncode == 1 and f'bootstrap token "{token_id}" not found' in missing.stderr


def test_tokens_authenticate_with_bootstrap_rights_only(
    plugin: Plugin, admin: Kubectl, localkube: ServerThread, workdir: Path
) -> None:
    plugin("init", "--apiserver", "external")
    token = BootstrapToken.parse(plugin("token", "create").stdout)
    config = workdir / "bootstrap.kubeconfig"
    config.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "k", "cluster": {"server": localkube.url, "insecure-skip-tls-verify": True}}],
                "users": [{"name": "b", "user": {"token": token.value}}],
                "contexts": [{"name": "k", "context": {"cluster": "k", "user": "b"}}],
                "current-context": "k",
            }
        )
    )
    bootstrap = Kubectl(config, workdir / "cache")
    who = json.loads(bootstrap("auth", "whoami", "-o", "json").stdout)["status"]["userInfo"]
    assert who["username"] == f"system:bootstrap:{token.id}"
    assert "system:bootstrappers:karmada:default-cluster-token" in who["groups"]
    assert bootstrap("auth", "can-i", "create", "certificatesigningrequests").stdout.strip() == "yes"
    for verb, resource in [("list", "secrets"), ("create", "clusters.cluster.karmada.io"), ("get", "works")]:
        assert bootstrap("auth", "can-i", verb, resource, "-A", check=False).stdout.strip() == "no"
    # the bootstrap signer publishes a JWS for the new token in cluster-info
    deadline = time.monotonic() + 5
    data: dict[str, str] = {}
    while time.monotonic() < deadline and f"jws-kubeconfig-{token.id}" not in data:
        data = json.loads(admin("get", "cm", "cluster-info", "-n", "kube-public", "-o", "json").stdout)["data"]
        time.sleep(0.1)
    assert f"jws-kubeconfig-{token.id}" in data


def test_print_register_command(plugin: Plugin, localkube: ServerThread) -> None:
    plugin("init", "--apiserver", "external")
    line = plugin("token", "create", "--print-register-command", "--ttl", "1h").stdout.strip()
    words = shlex.split(line)
    assert words[:3] == ["kubectl", "karmada", "register"]
    assert words[3] == localkube.url.removeprefix("https://")
    assert words[4] == "--token" and BootstrapToken.parse(words[5])
    assert words[6:] == ["--discovery-token-ca-cert-hash", ca_cert_hash(localkube.server.ca_pem())]


def test_the_register_command_names_the_published_cluster_proxy(plugin: Plugin, admin: Kubectl) -> None:
    plugin("init", "--apiserver", "external")
    published = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: karmada-cluster-proxy\n  namespace: karmada-system\n"
    )
    published += "data:\n  server: https://proxy.example:32444\n"
    admin("apply", "-f", "-", stdin=published)
    try:
        words = shlex.split(plugin("token", "create", "--print-register-command").stdout)
        assert words[-2:] == ["--cluster-proxy-server", "https://proxy.example:32444"]
    finally:
        admin("delete", "configmap", "karmada-cluster-proxy", "-n", "karmada-system")
