"""Admission webhooks in localkube: a real webhook server (aiohttp over TLS with a test CA),
configurations and requests through the real kubectl, kube-apiserver's messages end to end."""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from localkube.namespace_deletion import CONDITIONS
from localkube.pki import CertificateAuthority, cert_pem
from tests.localkube.test_namespace_deletion import conditions_of, namespace_object
from tests.programs import free_port
from tests.pullmode import wait_for
from tests.servers import Kubectl, Raw, ServerThread

SERVICE_HOST = "hooks.webhooks.svc"
EXTERNAL_NAME_HOST = "hooks.external-hooks.svc"


class HookServer:
    """An admission webhook server; each path behaves as its first word says."""

    def __init__(self, directory: Path) -> None:
        self.ca = CertificateAuthority.create()
        cert, key = self.ca.issue_server(["127.0.0.1", "localhost", SERVICE_HOST, EXTERNAL_NAME_HOST])
        (directory / "hook.crt").write_bytes(cert)
        (directory / "hook.key").write_bytes(key)
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.context.load_cert_chain(directory / "hook.crt", directory / "hook.key")
        self.reviews: dict[str, list[dict[str, Any]]] = defaultdict(list)
        # path -> what to do (in this server's thread) when a review arrives there
        self.on_review: dict[str, Any] = {}
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.port = 0
        # TLS connections accepted
        self.accepted = 0

    @property
    def open(self) -> int:
        """Connections still open."""
        return len(self.runner.server.connections) if self.runner.server else 0

    @property
    def ca_bundle(self) -> str:
        return base64.b64encode(cert_pem(self.ca.cert)).decode()

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.port}/{path}"

    async def handle(self, request: web.Request) -> web.Response:
        path = request.match_info["path"]
        review = await request.json()
        req = review["request"]
        self.reviews[path].append(req)
        if path in self.on_review:
            self.on_review.pop(path)(req)
        response: dict[str, Any] = {"uid": req["uid"], "allowed": True}
        obj = req.get("object") or req.get("oldObject") or {}
        name = (obj.get("metadata") or {}).get("name", "")
        if path.startswith("deny"):
            response = {
                "uid": req["uid"],
                "allowed": False,
                "status": {"code": 403, "message": f"{req['kind']['kind']} {name} is not welcome"},
            }
        elif path.startswith("warn"):
            response["warnings"] = [f"be careful with {name}"]
        elif path.startswith("mutate"):
            labels = (obj.get("metadata") or {}).get("labels")
            patch = (
                [{"op": "add", "path": "/metadata/labels/mutated", "value": "true"}]
                if labels
                else [{"op": "add", "path": "/metadata/labels", "value": {"mutated": "true"}}]
            )
            if labels and labels.get("mutated") == "true":
                patch = []
            if patch:
                response["patchType"] = "JSONPatch"
                response["patch"] = base64.b64encode(json.dumps(patch).encode()).decode()
        elif path.startswith("scale-to-two"):
            replicas = [{"op": "replace", "path": "/spec/replicas", "value": 2}]
            response["patchType"] = "JSONPatch"
            response["patch"] = base64.b64encode(json.dumps(replicas).encode()).decode()
        elif path.startswith("slow"):
            await asyncio.sleep(3)
        elif path.startswith("badpatch"):
            response["patch"] = base64.b64encode(b"[]").decode()  # a patch without patchType
        return web.json_response({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})

    def start(self) -> HookServer:
        self.thread.start()

        async def serve() -> None:
            app = web.Application()
            app.router.add_post("/{path}", self.handle)
            self.runner = web.AppRunner(app, access_log=None)
            await self.runner.setup()
            handler = self.runner.server
            assert handler is not None

            def connection() -> Any:
                self.accepted += 1
                return handler()

            loop = asyncio.get_running_loop()
            self.listener = await loop.create_server(connection, "127.0.0.1", 0, ssl=self.context)
            self.port = self.listener.sockets[0].getsockname()[1]

        asyncio.run_coroutine_threadsafe(serve(), self.loop).result(10)
        return self

    def stop(self) -> None:
        async def close() -> None:
            self.listener.close()
            # a localkube still running keeps connections alive: cut them and let their sockets
            # close before the loop does
            server = self.runner.server
            transports = [handler.transport for handler in server.connections] if server else []
            await self.runner.cleanup()
            for transport in transports:
                if transport is not None:
                    transport.abort()
            for _ in range(3):
                await asyncio.sleep(0)

        asyncio.run_coroutine_threadsafe(close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


@pytest.fixture(scope="module")
def hooks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HookServer]:
    server = HookServer(tmp_path_factory.mktemp("hooks")).start()
    yield server
    server.stop()


def webhook(name: str, url: str, ca_bundle: str, test: str, **extra: Any) -> dict[str, Any]:
    hook: dict[str, Any] = {
        "name": name,
        "clientConfig": {"url": url, "caBundle": ca_bundle},
        "rules": [
            {
                "operations": ["CREATE", "UPDATE", "DELETE"],
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "resources": ["configmaps"],
            }
        ],
        "namespaceSelector": {"matchLabels": {"webhook-test": test}},
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    }
    hook.update(extra)
    return hook


def configuration(kind: str, name: str, *hooks: dict[str, Any]) -> str:
    return json.dumps(
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": kind,
            "metadata": {"name": name},
            "webhooks": list(hooks),
        }
    )


def apply(admin: Kubectl, kind: str, name: str, *hooks: dict[str, Any]) -> None:
    admin("apply", "-f", "-", stdin=configuration(kind, name, *hooks))


def namespace(admin: Kubectl, test: str) -> str:
    name = f"wh-{test}"
    admin("create", "namespace", name)
    admin("label", "namespace", name, f"webhook-test={test}")
    return name


def configmap(name: str, ns: str, labels: dict[str, str] | None = None) -> str:
    meta: dict[str, Any] = {"name": name, "namespace": ns}
    if labels:
        meta["labels"] = labels
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": "v"}})


def test_denial_reaches_kubectl_as_kube_apiserver_words_it(admin: Kubectl, hooks: HookServer) -> None:
    ns = namespace(admin, "deny")
    apply(
        admin,
        "ValidatingWebhookConfiguration",
        "deny",
        webhook("deny.localkube.test", hooks.url("deny"), hooks.ca_bundle, "deny"),
    )
    refused = admin("apply", "-f", "-", stdin=configmap("blocked", ns), check=False)
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        'Error from server: error when creating "STDIN": admission webhook "deny.localkube.test" denied the request: '
        "ConfigMap blocked is not welcome"
    )
    assert admin("get", "cm", "blocked", "-n", ns, check=False).returncode == 1
    # a namespace the selector does not pick is not the webhook's business
    admin("create", "namespace", "wh-elsewhere")
    admin("apply", "-f", "-", stdin=configmap("welcome", "wh-elsewhere"))
    admin("delete", "validatingwebhookconfiguration", "deny")


def test_dead_webhook_fails_closed_or_open(admin: Kubectl, hooks: HookServer) -> None:
    ns = namespace(admin, "dead")
    port = free_port()
    url = f"https://127.0.0.1:{port}/dead"
    apply(admin, "ValidatingWebhookConfiguration", "dead", webhook("dead.localkube.test", url, hooks.ca_bundle, "dead"))
    refused = admin("create", "configmap", "one", "-n", ns, check=False)
    assert refused.stderr.strip() == (
        'error: failed to create configmap: Internal error occurred: failed calling webhook "dead.localkube.test": '
        f'failed to call webhook: Post "https://127.0.0.1:{port}/dead?timeout=10s": '
        f"dial tcp 127.0.0.1:{port}: connect: connection refused"
    )
    apply(
        admin,
        "ValidatingWebhookConfiguration",
        "dead",
        webhook("dead.localkube.test", url, hooks.ca_bundle, "dead", failurePolicy="Ignore"),
    )
    admin("create", "configmap", "one", "-n", ns)
    admin("delete", "validatingwebhookconfiguration", "dead")


def test_timeout(admin: Kubectl, hooks: HookServer) -> None:
    ns = namespace(admin, "slow")
    apply(
        admin,
        "ValidatingWebhookConfiguration",
        "slow",
        webhook("slow.localkube.test", hooks.url("slow"), hooks.ca_bundle, "slow", timeoutSeconds=1),
    )
    refused = admin("create", "configmap", "late", "-n", ns, check=False)
    assert refused.stderr.strip() == (
        'error: failed to create configmap: Internal error occurred: failed calling webhook "slow.localkube.test": '
        f'failed to call webhook: Post "https://127.0.0.1:{hooks.port}/slow?timeout=1s": context deadline exceeded'
    )
    admin("delete", "validatingwebhookconfiguration", "slow")


def test_ca_bundle_is_verified(admin: Kubectl, hooks: HookServer) -> None:
    ns = namespace(admin, "ca")
    other = base64.b64encode(cert_pem(CertificateAuthority.create().cert)).decode()
    apply(
        admin, "ValidatingWebhookConfiguration", "ca", webhook("ca.localkube.test", hooks.url("allow-ca"), other, "ca")
    )
    refused = admin("create", "configmap", "x", "-n", ns, check=False)
    assert "tls: failed to verify certificate: x509: certificate signed by unknown authority" in refused.stderr
    assert 'failed calling webhook "ca.localkube.test"' in refused.stderr
    assert not hooks.reviews["allow-ca"]
    admin("delete", "validatingwebhookconfiguration", "ca")


def test_mutation_then_validation_and_review_bodies(admin: Kubectl, hooks: HookServer) -> None:
    ns = namespace(admin, "mutate")
    apply(
        admin,
        "MutatingWebhookConfiguration",
        "mutate",
        webhook("mutate.localkube.test", hooks.url("mutate"), hooks.ca_bundle, "mutate"),
    )
    apply(
        admin,
        "ValidatingWebhookConfiguration",
        "record",
        webhook("record.localkube.test", hooks.url("allow-record"), hooks.ca_bundle, "mutate"),
    )
    admin("apply", "-f", "-", stdin=configmap("changed", ns))
    labels = json.loads(admin("get", "cm", "changed", "-n", ns, "-o", "json").stdout)["metadata"]["labels"]
    assert labels == {"mutated": "true"}
    mutated, validated = hooks.reviews["mutate"][-1], hooks.reviews["allow-record"][-1]
    # the mutating webhook sees the object before BeforeCreate; the validating one the final object
    assert "uid" not in mutated["object"]["metadata"] and mutated["object"]["metadata"]["creationTimestamp"] is None
    assert validated["object"]["metadata"]["labels"] == {"mutated": "true"} and validated["object"]["metadata"]["uid"]
    assert mutated["uid"] != validated["uid"]
    assert validated["kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
    assert validated["resource"] == {"group": "", "version": "v1", "resource": "configmaps"}
    assert validated["requestKind"] == validated["kind"] and validated["requestResource"] == validated["resource"]
    assert (validated["name"], validated["namespace"], validated["operation"]) == ("changed", ns, "CREATE")
    assert validated["userInfo"]["username"] == "kubernetes-admin"
    assert "system:masters" in validated["userInfo"]["groups"]
    assert validated["oldObject"] is None and validated["dryRun"] is False
    assert validated["options"]["kind"] == "CreateOptions"
    assert validated["options"]["fieldManager"] == "kubectl-client-side-apply"
    admin("label", "cm", "changed", "-n", ns, "extra=1")
    update = hooks.reviews["allow-record"][-1]
    assert update["operation"] == "UPDATE" and update["oldObject"]["metadata"]["labels"] == {"mutated": "true"}
    assert update["object"]["metadata"]["labels"] == {"mutated": "true", "extra": "1"}
    assert update["options"]["kind"] == "UpdateOptions"
    admin("delete", "cm", "changed", "-n", ns)
    deleted = hooks.reviews["allow-record"][-1]
    assert deleted["operation"] == "DELETE" and deleted["object"] is None
    assert deleted["oldObject"]["metadata"]["name"] == "changed"
    assert deleted["options"]["kind"] == "DeleteOptions" and deleted["options"]["propagationPolicy"] == "Background"
    admin("delete", "mutatingwebhookconfiguration", "mutate")
    admin("delete", "validatingwebhookconfiguration", "record")


def test_object_selector(admin: Kubectl, hooks: HookServer) -> None:
    ns = namespace(admin, "objsel")
    apply(
        admin,
        "ValidatingWebhookConfiguration",
        "objsel",
        webhook(
            "objsel.localkube.test",
            hooks.url("deny-objsel"),
            hooks.ca_bundle,
            "objsel",
            objectSelector={"matchLabels": {"guarded": "yes"}},
        ),
    )
    admin("apply", "-f", "-", stdin=configmap("free", ns))
    refused = admin("apply", "-f", "-", stdin=configmap("kept", ns, {"guarded": "yes"}), check=False)
    assert 'admission webhook "objsel.localkube.test" denied the request: ConfigMap kept is not welcome' in (
        refused.stderr
    )
    # the old object's labels count too: removing the label is refused as well
    admin("label", "cm", "free", "-n", ns, "guarded=no")
    assert [r["name"] for r in hooks.reviews["deny-objsel"]] == ["kept"]
    admin("delete", "validatingwebhookconfiguration", "objsel")


def test_dry_run_reaches_webhook_and_stores_nothing(admin: Kubectl, hooks: HookServer) -> None:
    ns = namespace(admin, "dry")
    apply(
        admin,
        "ValidatingWebhookConfiguration",
        "dry",
        webhook("dry.localkube.test", hooks.url("allow-dry"), hooks.ca_bundle, "dry", sideEffects="NoneOnDryRun"),
    )
    admin("create", "configmap", "trial", "-n", ns, "--dry-run=server")
    review = hooks.reviews["allow-dry"][-1]
    assert review["dryRun"] is True and review["options"]["dryRun"] == ["All"]
    assert admin("get", "cm", "trial", "-n", ns, check=False).returncode == 1
    admin("create", "configmap", "kept", "-n", ns)
    admin("delete", "configmap", "kept", "-n", ns, "--dry-run=server")
    review = hooks.reviews["allow-dry"][-1]
    assert review["operation"] == "DELETE" and review["dryRun"] is True
    assert review["options"]["dryRun"] == ["All"]
    admin("get", "cm", "kept", "-n", ns)  # still there
    admin("delete", "validatingwebhookconfiguration", "dry")


def test_warnings_shown_by_kubectl(admin: Kubectl, hooks: HookServer) -> None:
    ns = namespace(admin, "warn")
    apply(
        admin,
        "ValidatingWebhookConfiguration",
        "warn",
        webhook("warn.localkube.test", hooks.url("warn"), hooks.ca_bundle, "warn"),
    )
    created = admin("create", "configmap", "noisy", "-n", ns)
    assert "Warning: be careful with noisy" in created.stderr
    admin("delete", "validatingwebhookconfiguration", "warn")


def test_reinvocation_if_needed(admin: Kubectl, hooks: HookServer) -> None:
    ns = namespace(admin, "again")
    apply(
        admin,
        "MutatingWebhookConfiguration",
        "a-again",
        webhook(
            "again.localkube.test", hooks.url("allow-again"), hooks.ca_bundle, "again", reinvocationPolicy="IfNeeded"
        ),
    )
    apply(
        admin,
        "MutatingWebhookConfiguration",
        "b-again",
        webhook("mutate-again.localkube.test", hooks.url("mutate-again"), hooks.ca_bundle, "again"),
    )
    admin("create", "configmap", "twice", "-n", ns)
    calls = hooks.reviews["allow-again"]
    assert len(calls) == 2  # once, then again after the second webhook changed the object
    assert calls[1]["object"]["metadata"]["labels"] == {"mutated": "true"}
    assert len(hooks.reviews["mutate-again"]) == 1
    admin("delete", "mutatingwebhookconfiguration", "a-again", "b-again")


def test_invalid_answer_fails_closed(admin: Kubectl, hooks: HookServer) -> None:
    ns = namespace(admin, "badpatch")
    apply(
        admin,
        "MutatingWebhookConfiguration",
        "badpatch",
        webhook("badpatch.localkube.test", hooks.url("badpatch"), hooks.ca_bundle, "badpatch"),
    )
    refused = admin("create", "configmap", "x", "-n", ns, check=False)
    assert refused.stderr.strip() == (
        'error: failed to create configmap: Internal error occurred: failed calling webhook "badpatch.localkube.test": '
        "received invalid webhook response: webhook returned response.patch but not response.patchType"
    )
    admin("delete", "mutatingwebhookconfiguration", "badpatch")


def test_service_reference_resolved_on_loopback(admin: Kubectl, hooks: HookServer) -> None:
    ns = namespace(admin, "svc")
    admin("create", "namespace", "webhooks")
    admin("create", "service", "clusterip", "hooks", "-n", "webhooks", f"--tcp=443:{hooks.port}")
    hook = webhook("svc.localkube.test", "", hooks.ca_bundle, "svc")
    hook["clientConfig"] = {
        "service": {"namespace": "webhooks", "name": "hooks", "path": "/deny-svc"},
        "caBundle": hooks.ca_bundle,
    }
    admin("apply", "-f", "-", stdin=configuration("ValidatingWebhookConfiguration", "svc", hook))
    refused = admin("create", "configmap", "via-service", "-n", ns, check=False)
    assert 'admission webhook "svc.localkube.test" denied the request: ConfigMap via-service is not welcome' in (
        refused.stderr
    )
    stored = json.loads(admin("get", "validatingwebhookconfiguration", "svc", "-o", "json").stdout)
    assert stored["webhooks"][0]["clientConfig"]["service"]["port"] == 443
    admin("delete", "validatingwebhookconfiguration", "svc")


def test_external_name_service_dialed_at_its_name_and_the_reference_port(admin: Kubectl, hooks: HookServer) -> None:
    # how Karmada's API server reaches karmada-webhook in the host cluster: an ExternalName
    # Service; the port is the reference's (no targetPort), the certificate checked for the Service
    ns = namespace(admin, "extname")
    admin("create", "namespace", "external-hooks")
    admin("create", "service", "externalname", "hooks", "-n", "external-hooks", "--external-name=localhost")
    hook = webhook("extname.localkube.test", "", hooks.ca_bundle, "extname")
    reference = {"namespace": "external-hooks", "name": "hooks", "port": hooks.port, "path": "/deny-extname"}
    hook["clientConfig"] = {"service": reference, "caBundle": hooks.ca_bundle}
    admin("apply", "-f", "-", stdin=configuration("ValidatingWebhookConfiguration", "extname", hook))
    refused = admin("create", "configmap", "via-external-name", "-n", ns, check=False)
    assert 'admission webhook "extname.localkube.test" denied the request' in refused.stderr, refused.stderr
    # the server name is the Service's, not the external name: a certificate for it alone fails
    admin("create", "service", "externalname", "other", "-n", "external-hooks", "--external-name=localhost")
    reference["name"] = "other"
    admin("apply", "-f", "-", stdin=configuration("ValidatingWebhookConfiguration", "extname", hook))
    failed = admin("create", "configmap", "via-other", "-n", ns, check=False)
    assert failed.stderr.strip().endswith(
        "tls: failed to verify certificate: x509: certificate is not valid for other.external-hooks.svc"
    ), failed.stderr
    admin("delete", "validatingwebhookconfiguration", "extname")


def test_configurations_defaulted_and_validated(admin: Kubectl, hooks: HookServer) -> None:
    apply(
        admin,
        "MutatingWebhookConfiguration",
        "defaults",
        webhook("defaults.localkube.test", hooks.url("allow-defaults"), hooks.ca_bundle, "none"),
    )
    stored = json.loads(admin("get", "mutatingwebhookconfiguration", "defaults", "-o", "json").stdout)["webhooks"][0]
    assert (stored["failurePolicy"], stored["matchPolicy"], stored["timeoutSeconds"]) == ("Fail", "Equivalent", 10)
    assert stored["reinvocationPolicy"] == "Never" and stored["objectSelector"] == {}
    assert stored["rules"][0]["scope"] == "*"
    admin("delete", "mutatingwebhookconfiguration", "defaults")
    bad = webhook("short.name", "http://127.0.0.1:1/x", "", "none", timeoutSeconds=40)
    del bad["sideEffects"]
    refused = admin("apply", "-f", "-", stdin=configuration("ValidatingWebhookConfiguration", "bad", bad), check=False)
    assert refused.stderr.strip() == (
        'The ValidatingWebhookConfiguration "bad" is invalid: \n'
        '* webhooks[0].name: Invalid value: "short.name": should be a domain with at least three segments separated '
        "by dots\n"
        "* webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun\n"
        "* webhooks[0].timeoutSeconds: Invalid value: 40: the timeout value must be between 1 and 30 seconds\n"
        "* webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired "
        "format: https://host[/path]"
    )
    cel = webhook("cel.localkube.test", hooks.url("allow"), "", "none")
    cel["matchConditions"] = [{"name": "always", "expression": "true"}]
    refused = admin("apply", "-f", "-", stdin=configuration("ValidatingWebhookConfiguration", "cel", cel), check=False)
    assert "webhooks[0].matchConditions: Forbidden: matchConditions (CEL expressions) are not supported" in (
        refused.stderr
    )


def test_webhooks_see_a_proxy_request_as_connect(admin: Kubectl, hooks: HookServer, localkube: ServerThread) -> None:
    ns = namespace(admin, "connect")
    hook = webhook("connect.localkube.test", hooks.url("deny-connect"), hooks.ca_bundle, "connect")
    hook["rules"] = [
        {"operations": ["CONNECT"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["services/proxy"]}
    ]
    admin("apply", "-f", "-", stdin=configuration("ValidatingWebhookConfiguration", "connect", hook))
    admin("create", "service", "clusterip", "web", "-n", ns, "--tcp=80:80")
    refused = admin("get", "--raw", f"/api/v1/namespaces/{ns}/services/web/proxy/path", check=False)
    assert 'admission webhook "connect.localkube.test" denied the request' in refused.stderr
    review = hooks.reviews["deny-connect"][-1]
    assert review["operation"] == "CONNECT" and review["subResource"] == "proxy"
    assert review["object"] == {"kind": "ServiceProxyOptions", "apiVersion": "v1", "path": "/path"}
    assert review["options"] is None
    assert review["kind"] == {"group": "", "version": "v1", "kind": "ServiceProxyOptions"}
    assert review["resource"] == {"group": "", "version": "v1", "resource": "services"}
    admin("delete", "validatingwebhookconfiguration", "connect")


HPA_V1 = """\
apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata: {name: %s, namespace: %s}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 3
  targetCPUUtilizationPercentage: 50
"""


def test_match_policy_equivalent_converts_exact_skips(admin: Kubectl, hooks: HookServer) -> None:
    ns = namespace(admin, "equiv")
    v2_only = {
        "rules": [
            {
                "operations": ["CREATE"],
                "apiGroups": ["autoscaling"],
                "apiVersions": ["v2"],
                "resources": ["horizontalpodautoscalers"],
            }
        ]
    }
    equivalent = webhook("equiv.localkube.test", hooks.url("mutate-equiv"), hooks.ca_bundle, "equiv", **v2_only)
    exact = webhook("exact.localkube.test", hooks.url("allow-exact"), hooks.ca_bundle, "equiv", **v2_only)
    exact["matchPolicy"] = "Exact"
    apply(admin, "MutatingWebhookConfiguration", "equiv", equivalent, exact)
    admin("apply", "-f", "-", stdin=HPA_V1 % ("scaler", ns))
    review = hooks.reviews["mutate-equiv"][-1]
    assert review["kind"] == {"group": "autoscaling", "version": "v2", "kind": "HorizontalPodAutoscaler"}
    assert review["requestKind"] == {"group": "autoscaling", "version": "v1", "kind": "HorizontalPodAutoscaler"}
    assert review["resource"]["version"] == "v2" and review["requestResource"]["version"] == "v1"
    assert review["object"]["apiVersion"] == "autoscaling/v2"
    assert review["object"]["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 50
    assert not hooks.reviews["allow-exact"]
    # the patch made in v2 is kept when the object is read back in v1
    stored = json.loads(
        admin("get", "horizontalpodautoscalers.v1.autoscaling", "scaler", "-n", ns, "-o", "json").stdout
    )
    assert stored["metadata"]["labels"] == {"mutated": "true"} and stored["apiVersion"] == "autoscaling/v1"
    admin("delete", "mutatingwebhookconfiguration", "equiv")


DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %s}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
"""


def test_server_side_apply_of_a_deployment_is_mutated_and_defaulted(admin: Kubectl, hooks: HookServer) -> None:
    ns = namespace(admin, "ssa")
    hook = webhook("ssa.localkube.test", hooks.url("mutate-ssa"), hooks.ca_bundle, "ssa")
    hook["rules"][0].update(apiGroups=["apps"], resources=["deployments"])
    apply(admin, "MutatingWebhookConfiguration", "ssa", hook)
    admin("apply", "--server-side", "-f", "-", stdin=DEPLOYMENT % ns)
    review = hooks.reviews["mutate-ssa"][-1]
    # the webhook sees the defaulted object, as kube-apiserver sends it
    assert review["object"]["spec"]["strategy"]["type"] == "RollingUpdate"
    assert review["operation"] == "CREATE" and review["options"]["kind"] == "CreateOptions"
    assert review["options"]["fieldManager"] == "kubectl"
    stored = json.loads(admin("get", "deploy", "web", "-n", ns, "-o", "json").stdout)
    assert stored["metadata"]["labels"] == {"mutated": "true"}
    assert stored["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] == "Always"
    assert stored["metadata"]["generation"] == 1 and stored["metadata"]["uid"]
    admin("delete", "mutatingwebhookconfiguration", "ssa")


def test_namespace_selector_reads_a_namespace_s_own_labels(admin: Kubectl, hooks: HookServer) -> None:
    hook = webhook("ns.localkube.test", hooks.url("deny-ns"), hooks.ca_bundle, "nsself")
    hook["rules"] = [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["namespaces"]}]
    apply(admin, "ValidatingWebhookConfiguration", "nsself", hook)
    admin("create", "namespace", "plain-ns")
    labelled = json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": "guarded-ns", "labels": {"webhook-test": "nsself"}},
        }
    )
    refused = admin("apply", "-f", "-", stdin=labelled, check=False)
    assert 'admission webhook "ns.localkube.test" denied the request: Namespace guarded-ns is not welcome' in (
        refused.stderr
    )
    review = hooks.reviews["deny-ns"][-1]
    assert "namespace" not in review and review["name"] == "guarded-ns"
    admin("delete", "validatingwebhookconfiguration", "nsself")


def test_write_starts_over_when_its_object_changes_while_webhooks_answer(
    admin: Kubectl, hooks: HookServer, localkube: ServerThread
) -> None:
    ns = namespace(admin, "retry")
    admin("create", "configmap", "contended", "-n", ns, "--from-literal=k=0")
    apply(
        admin,
        "ValidatingWebhookConfiguration",
        "retry",
        webhook("retry.localkube.test", hooks.url("allow-retry"), hooks.ca_bundle, "retry"),
    )
    api = localkube.server.api
    configmaps = api.registry.lookup("", "v1", "configmaps")
    assert configmaps is not None

    def meanwhile(review: dict[str, Any]) -> None:
        # another writer changes the object while the webhook is being asked about the label
        def touch() -> None:
            current = api.stored(configmaps, ns, "contended")
            assert current is not None
            changed = json.loads(json.dumps(current))
            changed["data"]["other"] = "writer"
            api.write_internal(configmaps, changed, current, "")

        localkube.run_sync(touch)

    hooks.on_review["allow-retry"] = meanwhile
    admin("label", "cm", "contended", "-n", ns, "tier=web")
    calls = [r for r in hooks.reviews["allow-retry"] if r["operation"] == "UPDATE"]
    assert len(calls) == 2  # asked again about the object as the other writer left it
    assert calls[1]["oldObject"]["data"] == {"k": "0", "other": "writer"}
    stored = json.loads(admin("get", "cm", "contended", "-n", ns, "-o", "json").stdout)
    assert stored["data"] == {"k": "0", "other": "writer"} and stored["metadata"]["labels"] == {"tier": "web"}
    admin("delete", "validatingwebhookconfiguration", "retry")


def test_status_subresource_update(admin: Kubectl, hooks: HookServer) -> None:
    ns = namespace(admin, "status")
    hook = webhook("status.localkube.test", hooks.url("allow-status"), hooks.ca_bundle, "status")
    hook["rules"] = [
        {"operations": ["UPDATE"], "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments/status"]}
    ]
    apply(admin, "ValidatingWebhookConfiguration", "status", hook)
    admin("apply", "-f", "-", stdin=DEPLOYMENT % ns)
    assert not hooks.reviews["allow-status"]  # the main resource is not deployments/status
    admin(
        "patch", "deploy", "web", "-n", ns, "--subresource=status", "--type=merge",
        "-p", '{"status":{"observedGeneration":1}}',
    )  # fmt: skip
    review = hooks.reviews["allow-status"][-1]
    assert review["subResource"] == "status" and review["requestSubResource"] == "status"
    assert review["kind"] == {"group": "apps", "version": "v1", "kind": "Deployment"}
    assert review["object"]["status"]["observedGeneration"] == 1
    admin("delete", "validatingwebhookconfiguration", "status")


def test_configurations_themselves_are_exempt(admin: Kubectl, hooks: HookServer) -> None:
    everything = webhook("all.localkube.test", hooks.url("deny-all"), hooks.ca_bundle, "none")
    everything["rules"] = [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}]
    everything["namespaceSelector"] = {}
    apply(admin, "ValidatingWebhookConfiguration", "all", everything)
    # a webhook refusing every write still lets the configurations be changed and removed
    admin("label", "validatingwebhookconfiguration", "all", "changed=yes")
    refused = admin("create", "namespace", "refused-ns", check=False)
    assert 'admission webhook "all.localkube.test" denied the request' in refused.stderr
    admin("delete", "validatingwebhookconfiguration", "all")
    assert all(r["resource"]["resource"] != "validatingwebhookconfigurations" for r in hooks.reviews["deny-all"])


def test_scale_subresource_sends_a_scale(admin: Kubectl, hooks: HookServer) -> None:
    ns = namespace(admin, "scale")
    hook = webhook("scale.localkube.test", hooks.url("scale-to-two"), hooks.ca_bundle, "scale")
    hook["rules"] = [
        {"operations": ["UPDATE"], "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments/scale"]}
    ]
    apply(admin, "MutatingWebhookConfiguration", "scale", hook)
    admin("apply", "-f", "-", stdin=DEPLOYMENT % ns)
    admin("scale", "deploy", "web", "-n", ns, "--replicas=5")
    review = hooks.reviews["scale-to-two"][-1]
    assert review["kind"] == review["requestKind"] == {"group": "autoscaling", "version": "v1", "kind": "Scale"}
    assert review["resource"] == {"group": "apps", "version": "v1", "resource": "deployments"}
    assert review["subResource"] == "scale" and review["operation"] == "UPDATE"
    assert review["object"]["kind"] == "Scale" and review["object"]["spec"]["replicas"] == 5
    assert review["oldObject"]["spec"]["replicas"] == 1
    # the webhook's patch of the Scale decides the Deployment's replicas
    assert admin("get", "deploy", "web", "-n", ns, "-o", "jsonpath={.spec.replicas}").stdout == "2"
    admin("delete", "mutatingwebhookconfiguration", "scale")


def test_eviction_is_admitted_as_a_create_of_its_eviction(admin: Kubectl, hooks: HookServer, raw: Raw) -> None:
    ns = namespace(admin, "evict")
    hook = webhook("evict.localkube.test", hooks.url("deny-evict"), hooks.ca_bundle, "evict")
    hook["rules"] = [
        {"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods/eviction"]}
    ]
    apply(admin, "ValidatingWebhookConfiguration", "evict", hook)
    admin("run", "victim", "-n", ns, "--image=nginx")
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "victim", "namespace": ns}}
    code, body, _ = asyncio.run(raw.request("POST", f"/api/v1/namespaces/{ns}/pods/victim/eviction", eviction))
    assert (code, body["message"]) == (
        403,
        'admission webhook "evict.localkube.test" denied the request: Eviction victim is not welcome',
    )
    review = hooks.reviews["deny-evict"][-1]
    assert review["kind"] == review["requestKind"] == {"group": "policy", "version": "v1", "kind": "Eviction"}
    assert review["resource"] == {"group": "", "version": "v1", "resource": "pods"}
    assert review["subResource"] == "eviction" and review["object"]["kind"] == "Eviction"
    admin("get", "pod", "victim", "-n", ns)  # not evicted
    admin("delete", "validatingwebhookconfiguration", "evict")


def test_validating_webhooks_are_called_in_parallel(admin: Kubectl, hooks: HookServer) -> None:
    ns = namespace(admin, "parallel")
    slow = [
        webhook(f"slow-{i}.localkube.test", hooks.url(f"slow-{i}"), hooks.ca_bundle, "parallel", timeoutSeconds=8)
        for i in (1, 2)
    ]
    apply(admin, "ValidatingWebhookConfiguration", "parallel", *slow)
    started = time.monotonic()
    admin("create", "configmap", "patient", "-n", ns)
    elapsed = time.monotonic() - started
    assert len(hooks.reviews["slow-1"]) == len(hooks.reviews["slow-2"]) == 1
    assert elapsed < 5.5  # two 3 s webhooks one after the other would take 6 s
    admin("delete", "validatingwebhookconfiguration", "parallel")


def test_writes_reuse_a_kept_alive_connection_closed_when_localkube_stops(tmp_path: Path) -> None:
    hooks = HookServer(tmp_path).start()  # its own, to count only this localkube's connections
    server: ServerThread | None = ServerThread().start()
    try:
        assert server is not None
        admin = Kubectl(server.kubeconfig(tmp_path), tmp_path / "cache")
        ns = namespace(admin, "reuse")
        apply(
            admin,
            "ValidatingWebhookConfiguration",
            "reuse",
            webhook("reuse.localkube.test", hooks.url("reuse"), hooks.ca_bundle, "reuse"),
        )
        for i in range(8):
            admin("create", "-f", "-", stdin=configmap(f"cm{i}", ns))
        assert len(hooks.reviews["reuse"]) == 8
        assert (hooks.accepted, hooks.open) == (1, 1)
        server.stop()
        server = None
        deadline = time.monotonic() + 5
        while hooks.open and time.monotonic() < deadline:
            time.sleep(0.02)
        assert hooks.open == 0
    finally:
        if server is not None:
            server.stop()
        hooks.stop()


def test_a_changed_configuration_applies_to_the_next_write(admin: Kubectl, hooks: HookServer) -> None:
    # the rules are matched once per configuration version: a change of rules counts at once
    ns = namespace(admin, "rules-change")
    deny = webhook("deny.localkube.test", hooks.url("deny"), hooks.ca_bundle, "rules-change")
    secrets_only = {**deny, "rules": [{**deny["rules"][0], "resources": ["secrets"]}]}
    apply(admin, "ValidatingWebhookConfiguration", "rules-change", secrets_only)
    admin("apply", "-f", "-", stdin=configmap("before", ns))  # not the webhook's business yet
    apply(admin, "ValidatingWebhookConfiguration", "rules-change", deny)
    refused = admin("apply", "-f", "-", stdin=configmap("after", ns), check=False)
    assert refused.returncode == 1 and "ConfigMap after is not welcome" in refused.stderr
    admin("delete", "validatingwebhookconfiguration", "rules-change")
    admin("apply", "-f", "-", stdin=configmap("after", ns))  # no configuration, no webhook


def test_a_refused_delete_keeps_the_namespace_terminating_until_allowed(admin: Kubectl, hooks: HookServer) -> None:
    ns = namespace(admin, "ns-refused")
    protect = webhook(
        "protect.localkube.test",
        hooks.url("deny-ns-content"),
        hooks.ca_bundle,
        "ns-refused",
        rules=[{"operations": ["DELETE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
        objectSelector={"matchLabels": {"protected": "yes"}},
    )
    apply(admin, "ValidatingWebhookConfiguration", "protect", protect)
    admin("apply", "-f", "-", stdin=configmap("keep", ns, {"protected": "yes"}))
    admin("create", "secret", "generic", "goes", "-n", ns, "--from-literal=k=v")
    admin("delete", "namespace", ns, "--wait=false")
    refused = (
        "True",
        "ContentDeletionFailed",
        'Failed to delete all resource types, 1 remaining: admission webhook "protect.localkube.test" '
        "denied the request: ConfigMap keep is not welcome",
    )
    terminating = wait_for(
        lambda: (
            (found := namespace_object(admin, ns))
            and conditions_of(found).get("NamespaceDeletionContentFailure") == refused
            and found
        ),
        what="the refusal in the namespace's conditions",
    )
    assert terminating["status"]["phase"] == "Terminating"
    conditions = conditions_of(terminating)
    assert list(conditions) == list(CONDITIONS)
    # the refused resource's pass ends before it is counted; nothing else is left
    assert conditions["NamespaceContentRemaining"] == ("False", "ContentRemoved", "All content successfully removed")
    assert conditions["NamespaceDeletionDiscoveryFailure"][0] == "False"
    # other resources went; the refusal ended the configmaps' pass (kube-root-ca.crt sorts after it)
    assert admin("get", "secret", "goes", "-n", ns, check=False).returncode == 1
    names = admin("get", "configmaps", "-n", ns, "-o", "name").stdout.split()
    assert names == ["configmap/keep", "configmap/kube-root-ca.crt"]
    # admitted as an item of the controller's deletecollection: no name, the controller's identity
    review = hooks.reviews["deny-ns-content"][-1]
    assert review["operation"] == "DELETE" and "name" not in review and review["namespace"] == ns
    assert review["oldObject"]["metadata"]["name"] == "keep"
    assert review["userInfo"]["username"] == "system:serviceaccount:kube-system:namespace-controller"
    assert review["options"]["propagationPolicy"] == "Background"
    asked = len(hooks.reviews["deny-ns-content"])
    wait_for(lambda: len(hooks.reviews["deny-ns-content"]) > asked, what="a retry")
    admin("label", "configmap", "keep", "-n", ns, "protected-")
    wait_for(lambda: namespace_object(admin, ns) is None, timeout=90, what="the namespace to go")
    admin("delete", "validatingwebhookconfiguration", "protect")


async def test_a_delete_collection_admits_each_item_without_a_name(admin: Kubectl, hooks: HookServer, raw: Raw) -> None:
    """As kube-apiserver: every item of a collection delete is admitted (DELETE, its old object)
    with the collection request's attributes, which name nothing; a refused item stays."""
    ns = namespace(admin, "collection")
    admin("apply", "-f", "-", stdin=configmap("a-free", ns))
    admin("apply", "-f", "-", stdin=configmap("b-kept", ns, {"guarded": "yes"}))
    apply(
        admin,
        "ValidatingWebhookConfiguration",
        "collection",
        webhook(
            "collection.localkube.test",
            hooks.url("deny-collection"),
            hooks.ca_bundle,
            "collection",
            objectSelector={"matchLabels": {"guarded": "yes"}},
        ),
    )
    status, body, _ = await raw.request("DELETE", f"/api/v1/namespaces/{ns}/configmaps")
    assert status == 403, body
    assert 'admission webhook "collection.localkube.test" denied the request' in body["message"]
    (review,) = hooks.reviews["deny-collection"]
    assert review["operation"] == "DELETE" and "name" not in review and review["namespace"] == ns
    assert review["oldObject"]["metadata"]["name"] == "b-kept"
    assert admin("get", "cm", "b-kept", "-n", ns, check=False).returncode == 0
    assert admin("get", "cm", "a-free", "-n", ns, check=False).returncode == 1  # items go one by one
    admin("delete", "validatingwebhookconfiguration", "collection")


def test_each_call_is_timed_in_kube_apiservers_histogram(admin: Kubectl, hooks: HookServer) -> None:
    ns = namespace(admin, "timed")
    apply(
        admin,
        "ValidatingWebhookConfiguration",
        "timed",
        webhook("timed-deny.localkube.test", hooks.url("deny"), hooks.ca_bundle, "timed"),
        webhook("timed-warn.localkube.test", hooks.url("warn"), hooks.ca_bundle, "timed"),
    )
    admin("apply", "-f", "-", stdin=configmap("refused", ns), check=False)
    admin("delete", "validatingwebhookconfiguration", "timed")
    text = admin("get", "--raw", "/metrics").stdout
    name = "apiserver_admission_webhook_admission_duration_seconds"
    assert f"# TYPE {name} histogram" in text
    denied = f'{name}_count{{name="timed-deny.localkube.test",operation="CREATE",rejected="true",type="validate"}} 1'
    assert denied in text
    # kube-apiserver's buckets, cumulative up to +Inf
    labels = 'name="timed-deny.localkube.test",operation="CREATE",rejected="true",type="validate"'
    assert f'{name}_bucket{{{labels},le="25"}} 1' in text
    assert f'{name}_bucket{{{labels},le="+Inf"}} 1' in text
