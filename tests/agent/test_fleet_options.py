"""``karmada-agent --fleet FILE`` and ``--clusters N``: which agents they make,
with which flags, and the errors that name the bad entry and field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent.cli import build_parser, main
from agent.fleet import Backoff, FleetError, agent_options
from agent.options import Options


def fleet(tmp_path: Path, document: Any, *argv: str) -> list[Options]:
    path = tmp_path / "fleet.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    parser = build_parser()
    return agent_options(parser, parser.parse_args(["--fleet", str(path), *argv]))


def test_each_entry_sets_its_flags_over_the_command_line(tmp_path: Path) -> None:
    agents = fleet(
        tmp_path,
        {
            "agents": [
                {"cluster-name": "member1", "kubeconfig": "/m1/admin.kubeconfig", "cluster-zones": ["a", "b"]},
                {
                    "cluster-name": "member2",
                    "karmada-kubeconfig": "/m2/agent.kubeconfig",
                    "cluster-api-endpoint": "https://127.0.0.1:41002",
                    "leader-elect": False,
                    "concurrent-work-syncs": 2,
                    "cluster-status-update-frequency": "1m",
                    "controllers": "*,-certRotation",
                },
            ]
        },
        "--kubeconfig=/d/{cluster}/admin.kubeconfig",
        "--cluster-region=eu",
        "--cluster-lease-duration=20s",
    )
    first, second = agents
    assert (first.cluster_name, first.kubeconfig) == ("member1", "/m1/admin.kubeconfig")
    assert first.cluster_zones == ["a", "b"]
    assert first.leader_elect is True and first.cluster_status_update_frequency == 10.0
    assert second.kubeconfig == "/d/member2/admin.kubeconfig"  # {cluster} in a process-wide flag
    assert second.karmada_kubeconfig == "/m2/agent.kubeconfig"
    assert second.cluster_api_endpoint == "https://127.0.0.1:41002"
    assert (second.leader_elect, second.concurrent_work_syncs, second.cluster_status_update_frequency) == (False, 2, 60)
    assert second.controllers == ("clusterStatus", "execution", "workStatus")
    assert first.cluster_region == second.cluster_region == "eu"
    assert first.cluster_lease_duration == second.cluster_lease_duration == 20.0


def test_clusters_makes_named_agents_with_their_own_paths() -> None:
    parser = build_parser()
    args = parser.parse_args(
        [
            "--clusters=3",
            "--cluster-name-prefix=sim-",
            "--kubeconfig=/d/{cluster}/admin.kubeconfig",
            "--karmada-kubeconfig=/d/{cluster}/karmada-agent.kubeconfig",
        ]
    )
    agents = agent_options(parser, args)
    assert [a.cluster_name for a in agents] == ["sim-1", "sim-2", "sim-3"]
    assert agents[2].kubeconfig == "/d/sim-3/admin.kubeconfig"
    assert agents[2].karmada_kubeconfig == "/d/sim-3/karmada-agent.kubeconfig"


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("{not json", "fleet file .*: not JSON"),
        ("[]", r'want an object \{"agents"'),
        ({"agents": []}, '"agents" must be a non-empty list'),
        ({"agent": [{"cluster-name": "m1"}]}, 'unknown field "agent"'),
        ({"agents": ["m1"]}, r"agents\[0\] must be an object"),
        ({"agents": [{"kubeconfig": "/k"}]}, r'agents\[0\]: "cluster-name" is required'),
        ({"agents": [{"cluster-name": "M_1"}]}, r'agents\[0\] \(M_1\): "cluster-name" must be lower-case'),
        ({"agents": [{"cluster-name": "m1"}, {"cluster-name": "m1"}]}, r"agents\[1\] \(m1\): .* appears twice"),
        ({"agents": [{"cluster-name": "m1", "kubconfig": "/k"}]}, r'agents\[0\] \(m1\): unknown flag "kubconfig"'),
        ({"agents": [{"cluster-name": "m1", "--kubeconfig": "/k"}]}, 'unknown flag "--kubeconfig"'),
        ({"agents": [{"cluster-name": "m1", "metrics-bind-address": ":9"}]}, "a flag of the process"),
        ({"agents": [{"cluster-name": "m1", "leader-elect": "maybe"}]}, r'"leader-elect": invalid boolean "maybe"'),
        ({"agents": [{"cluster-name": "m1", "cluster-lease-duration": "40"}]}, '"cluster-lease-duration": '),
        ({"agents": [{"cluster-name": "m1", "controllers": "bogus"}]}, 'unknown controller "bogus"'),
        ({"agents": [{"cluster-name": "m1", "concurrent-work-syncs": "x"}]}, '"concurrent-work-syncs": invalid'),
        ({"agents": [{"cluster-name": "m1", "kubeconfig": {"path": "/k"}}]}, '"kubeconfig": want a string'),
    ],
)
def test_a_bad_fleet_file_is_refused_naming_the_entry_and_field(tmp_path: Path, document: Any, message: str) -> None:
    with pytest.raises(FleetError, match=message):
        fleet(tmp_path, document)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--clusters=2", "--fleet=/f.json"], "exclusive"),
        (["--clusters=2", "--cluster-name=member1", "--kubeconfig=/{cluster}"], "each agent has its own name"),
        (["--clusters=2", "--kubeconfig=/one.kubeconfig"], r"needs \{cluster\} in --kubeconfig"),
        (["--clusters=2", "--cluster-name-prefix=Member", "--kubeconfig=/{cluster}"], "must be lower-case"),
    ],
)
def test_bad_fleet_flags_are_refused(argv: list[str], message: str) -> None:
    parser = build_parser()
    with pytest.raises(FleetError, match=message):
        agent_options(parser, parser.parse_args(argv))


def test_the_program_exits_2_with_the_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps({"agents": [{"cluster-name": "m1", "clusters": 3}]}))
    assert main(["--fleet", str(path)]) == 2
    assert 'agents[0] (m1): "clusters" is a flag of the process' in capsys.readouterr().err


def test_one_agent_still_needs_its_cluster_name() -> None:
    with pytest.raises(SystemExit) as exited:
        main([])
    assert exited.value.code == 2


def test_backoff_doubles_to_its_maximum_and_resets_after_a_long_run() -> None:
    backoff = Backoff(initial=1.0, maximum=8.0, reset_after=60.0)
    delays = [backoff.next(0.0) for _ in range(5)]
    for delay, base in zip(delays, [1, 2, 4, 8, 8], strict=True):
        assert 0.8 * base <= delay <= 1.2 * base
    assert backoff.next(61.0) <= 1.2
