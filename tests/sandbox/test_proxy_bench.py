"""A tiny run of benchmarks/proxy_bench.py (run as the program it is): a 2-member sandbox, GETs
through the cluster proxy and direct, a few concurrent clients, 5 held ``logs -f`` streams, a
watch of 200 ConfigMaps through the proxy beside a direct one and a held one, and the agent's
memory with a few idle streams. It checks that every part ran and delivered everything, not
the figures (a shared machine's timings are no test)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(150)]

RUN = ["--quick", "--gets", "50", "--seconds", "1", "--log-streams", "5", "--watch-events", "200"]
RUN += ["--idle-streams", "5", "--settle", "0", "--hold", "0.5"]


def test_a_tiny_proxy_bench_run(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    command = [sys.executable, "-m", "benchmarks.proxy_bench", *RUN, "--json", str(out)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=140, check=False)
    report = run.stdout + run.stderr[-4000:]
    assert run.returncode == 0, report
    figures = json.loads(out.read_text())
    assert figures["get_count"] == 50, report
    assert figures["get_proxy_p99_ms"] > 0 and figures["get_direct_p99_ms"] > 0, report
    assert figures["load_proxy_requests_per_s"] > 0 and figures["load_direct_requests_per_s"] > 0, report
    assert figures["logs_streams_with_new_lines"] == 5, report
    assert figures["watch_held_events_received"] == 200, report
    assert figures["watch_proxy_events_per_s"] > 0 and figures["watch_replay_proxy_events_per_s"] > 0, report
    assert figures["mem_agent_tunnel_idle_mib"] > 0 and figures["mem_agent_no_tunnel_mib"] > 0, report
    assert figures["mem_r1_agent_fds_open"] >= 4, report  # an idle stream is a connection of the agent's
    assert figures["processes_restarted_or_gone"] == 0, report
    assert "goal: added p99 under 5 ms" in run.stdout, report
