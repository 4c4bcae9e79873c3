"""Everyday use without flags: a newcomer in a fresh HOME runs ``kubectl karmada local up``,
uses the ``export KUBECONFIG=...`` line it prints, applies the first example with plain
kubectl, and ``kubectl karmada get deploy -A --all-clusters`` lists it with its clusters;
with no kubeconfig at all the plugin falls back to the sandbox's and says so; a real
``~/.kube/config`` always wins over the sandbox."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.examples.sandbox import LocalSandbox, wait_until
from tests.kubectl_karmada.inspection_helpers import table
from tests.seeds import REPO_ROOT
from tests.servers import Plugin

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def _sh(sandbox: LocalSandbox, line: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", line],
        capture_output=True,
        text=True,
        env=env or sandbox.env,
        timeout=180,
        cwd=REPO_ROOT,
        check=False,
    )


def test_newcomer_needs_no_kubeconfig_flag(tmp_path: Path) -> None:
    sandbox = LocalSandbox(tmp_path)
    up = _sh(sandbox, "kubectl karmada local up")
    try:
        assert up.returncode == 0, up.stderr
        # piped: no progress lines, only the summary and what to do next
        assert "registered (token, CSR approved)" not in up.stdout + up.stderr
        assert "all 3 members Ready" in up.stdout
        export = re.search(r"^\s*(export KUBECONFIG=\S+)$", up.stdout, re.MULTILINE)
        assert export is not None, up.stdout
        assert export.group(1) == f"export KUBECONFIG={tmp_path / '.karmada-local' / 'karmada.config'}"
        applied = _sh(sandbox, f"{export.group(1)} && kubectl apply -f examples/static-weight/")
        assert applied.returncode == 0, applied.stderr

        def listed() -> list[list[str]]:
            got = _sh(sandbox, f"{export.group(1)} && kubectl karmada get deploy -A --all-clusters")
            assert got.returncode == 0, got.stderr
            return [r for r in table(got.stdout)[1:] if r[0] == "default"]

        wait_until(
            lambda: (
                [(r[1], r[2], r[3]) for r in listed()] == [("nginx", "member1", "2/2"), ("nginx", "member2", "4/4")]
            ),
            "nginx listed in member1 (2/2) and member2 (4/4)",
            60,
            last=listed,
        )
        # no KUBECONFIG, no ~/.kube/config: the sandbox's control plane, announced on stderr in one line
        bare = _sh(sandbox, "kubectl karmada get deploy -A --all-clusters")
        assert bare.returncode == 0
        notes = [line for line in bare.stderr.splitlines() if "sandbox" in line]
        assert notes == [
            f"using the sandbox's control plane: {tmp_path / '.karmada-local' / 'karmada.config'} "
            "(no --kubeconfig, $KUBECONFIG or ~/.kube/config)"
        ]
        assert ("nginx", "member2") in {(r[1], r[2]) for r in table(bare.stdout)[1:]}
        # with KUBECONFIG set nothing is announced
        quiet = _sh(sandbox, f"{export.group(1)} && kubectl karmada top clusters")
        assert quiet.returncode == 0 and quiet.stderr == ""
        assert [r[0] for r in table(quiet.stdout)[1:]] == ["member1", "member2", "member3"]
        # a real ~/.kube/config wins: the plugin goes where kubectl would, and fails there
        kube = tmp_path / ".kube"
        kube.mkdir(exist_ok=True)  # kubectl keeps its cache there
        (kube / "config").write_text(
            "apiVersion: v1\nkind: Config\ncurrent-context: gone\nclusters: [{name: gone, cluster: {server: 'https://127.0.0.1:1'}}]\n"
            "contexts: [{name: gone, context: {cluster: gone, user: u}}]\nusers: [{name: u, user: {token: x}}]\n"
        )
        elsewhere = _sh(sandbox, "kubectl karmada get deploy")
        assert elsewhere.returncode == 1 and "sandbox" not in elsewhere.stderr
        assert elsewhere.stderr.startswith("error: ")
    finally:
        _sh(sandbox, "kubectl karmada local down")


def test_register_help_says_which_cluster_each_kubeconfig_means() -> None:
    register = Plugin(None)("register", "--help").stdout
    assert "kubeconfig of the MEMBER cluster, not the control plane" in " ".join(register.split())
    unregister = " ".join(Plugin(None)("unregister", "--help").stdout.split())
    assert "kubeconfig of the MEMBER cluster, not the control plane" in unregister
    assert (
        "--control-plane-kubeconfig PATH, --karmada-kubeconfig PATH kubeconfig of the Karmada control plane"
        in unregister
    )


@pytest.mark.skipif(shutil.which("script") is None, reason="util-linux script (a terminal for the test) is missing")
def test_local_up_shows_progress_on_a_terminal(tmp_path: Path) -> None:
    directory = tmp_path / "sandbox"
    sandbox = LocalSandbox(tmp_path)
    command = f"kubectl karmada local up --dir {directory} --members 1 --nodes-per-member 1 --timeout 2m"
    # script(1) gives the command a terminal and copies what it shows to our stdout
    shown = _sh(sandbox, f"script -qec {shlex.quote(command)} /dev/null")
    try:
        assert shown.returncode == 0, shown.stdout + shown.stderr
        assert "member1: registered (token, CSR approved) and its agent started" in shown.stdout
        assert "all 1 members Ready" in shown.stdout
    finally:
        _sh(sandbox, f"kubectl karmada local down --dir {directory}")
