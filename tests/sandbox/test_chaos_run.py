"""A short chaos run (benchmarks/chaos_bench.py, run as the program it is): a 3-member
sandbox, 20 Deployments with their ConfigMaps under Divided, Duplicated and failover
policies, 3 rounds of seeded faults under churn; after convergence no member holds a lost,
duplicated, stale or orphaned copy, and every faulted program came back through its
supervisor. The seed's rounds kill the webhook, partition an agent and step an agent's clock
(held until the agent renewed its Lease on the stepped clock). Without libfaketime the run is
``--no-clock``, whose seeded plan differs (tests/controlplane/test_agent_clock_jump.py then skips,
saying what to install)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from karmada.sandbox.clock import library

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

RUN = ["--members", "3", "--deployments", "20", "--rounds", "3", "--seed", "3", "--churn", "4"]
RUN += ["--hold-scale", "0.1", "--converge-timeout", "60"]
RUN += [] if library() is not None else ["--no-clock"]


def test_a_short_chaos_run_loses_nothing(tmp_path: Path) -> None:
    out = tmp_path / "summary.json"
    command = [sys.executable, "-m", "benchmarks.chaos_bench", *RUN, "--json", str(out)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=280, check=False)
    report = run.stdout + run.stderr[-4000:]
    assert run.returncode == 0, report
    summary = json.loads(out.read_text())
    assert [r["fault"] for r in summary["rounds"]], "the seeded plan ran its rounds"
    assert summary["final"] == {"lost": 0, "duplicated": 0, "stale": 0, "orphaned": 0}, report
    assert summary["final_unbound"] == [], report
    assert summary["final_not_ready"] == [], report
    assert summary["manual"] == [], report
    assert all(r["converged"] is not None for r in summary["rounds"]), report
