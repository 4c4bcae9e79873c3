"""A request answered later than ``SLOW_REQUEST`` is logged as kube-apiserver traces one:
method, path, client and total time, never the body or the credentials."""

from __future__ import annotations

import logging

import pytest

import localkube.server
from tests.servers import Kubectl


def test_a_slow_answer_is_logged_with_its_path_client_and_time(
    admin: Kubectl, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(localkube.server, "SLOW_REQUEST", 0.0)  # every answer is "slow"
    with caplog.at_level(logging.WARNING, logger="localkube"):
        admin("create", "configmap", "slow-probe", "--from-literal=secret-value=hunter2")
    lines = [r.getMessage() for r in caplog.records if "slow request" in r.getMessage()]
    created = [line for line in lines if '"POST /api/v1/namespaces/default/configmaps"' in line]
    assert created, lines
    assert "user-agent:kubectl" in created[0] and "status:201" in created[0] and "(total time: 0." in created[0]
    assert not any("hunter2" in line or "Bearer" in line for line in lines)
