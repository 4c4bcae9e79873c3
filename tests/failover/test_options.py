"""The failover flags and gates of karmada-controlplane, with Karmada's names and defaults,
and which controllers start under them."""

from __future__ import annotations

import pytest

from controlplane.cli import build_parser
from controlplane.context import Context
from controlplane.controllers import REGISTRY
from controlplane.options import Options, from_args
from karmada.failover.pacing import EvictionPacer
from karmada.kube import EventRecorder, KubeClient
from karmada.kube.config import ClusterConfig
from karmada.kube.informer_factory import InformerFactory


def test_defaults_are_karmadas() -> None:
    options = from_args(build_parser().parse_args([]))
    assert options.enable_taint_manager is True
    assert options.enable_no_execute_taint_eviction is False
    assert options.no_execute_taint_eviction_purge_mode == "Gracefully"
    assert options.resource_eviction_rate == 0.5
    assert options.graceful_eviction_timeout == 600.0
    assert options.feature_enabled("Failover") is False
    assert options.feature_enabled("GracefulEviction") is True
    assert options.feature_enabled("StatefulFailoverInjection") is False
    for name in ("clustertaintpolicy", "gracefulEviction", "applicationFailover"):
        assert name in options.controllers


def test_flags() -> None:
    options = from_args(
        build_parser().parse_args(
            [
                "--enable-taint-manager=false",
                "--enable-no-execute-taint-eviction",
                "--no-execute-taint-eviction-purge-mode=Directly",
                "--resource-eviction-rate=0",
                "--graceful-eviction-timeout=30s",
                "--feature-gates=Failover=true",
            ]
        )
    )
    assert (options.enable_taint_manager, options.enable_no_execute_taint_eviction) == (False, True)
    assert options.no_execute_taint_eviction_purge_mode == "Directly"
    assert (options.resource_eviction_rate, options.graceful_eviction_timeout) == (0.0, 30.0)
    assert options.feature_enabled("Failover")


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["--no-execute-taint-eviction-purge-mode=Never"], 'unsupported purge mode "Never"'),
        (["--resource-eviction-rate=-1"], "must not be negative"),
        (["--resource-eviction-rate=fast"], 'invalid rate "fast"'),
    ],
)
def test_bad_values_are_refused(argv: list[str], error: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(argv)
    assert error in capsys.readouterr().err


async def _started(options: Options) -> dict[str, int]:
    client = KubeClient(ClusterConfig(server="https://127.0.0.1:1"))
    context = Context(client, InformerFactory(client), EventRecorder(client, "test"), options)
    counts = {name: len(REGISTRY[name](context)) for name in ("cluster", "clustertaintpolicy")}
    await client.close()
    return counts


@pytest.mark.parametrize(
    ("gates", "taint_manager", "expected"),
    [
        ({}, True, {"cluster": 1, "clustertaintpolicy": 0}),  # Failover off: neither runs
        ({"Failover": True}, True, {"cluster": 2, "clustertaintpolicy": 1}),
        ({"Failover": True}, False, {"cluster": 1, "clustertaintpolicy": 1}),
    ],
)
async def test_what_starts(gates: dict[str, bool], taint_manager: bool, expected: dict[str, int]) -> None:
    assert await _started(Options(feature_gates=gates, enable_taint_manager=taint_manager)) == expected


# claims at these times -> what each returns (Karmada: 3 workers per kind, each waiting 1/rate after an item)
PACING = [
    # rate 0.5: three go at once, the fourth when the first worker is free again
    (0.5, 3, [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 2.0]),
    (0.5, 3, [0.0, 0.0, 0.0, 1.5, 2.0, 2.0], [0.0, 0.0, 0.0, 0.5, 0.0, 0.0]),
    # a refused claim takes no lane: the next one at that time is refused the same way
    (0.5, 1, [0.0, 1.0, 1.0, 2.0, 2.0], [0.0, 1.0, 1.0, 0.0, 2.0]),
    (10.0, 3, [0.0, 0.0, 0.0, 0.0, 0.1], [0.0, 0.0, 0.0, 0.1, 0.0]),
    # rate 0: Karmada's maxEvictionDelay, 1800 s
    (0.0, 3, [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1800.0]),
]


@pytest.mark.parametrize(("rate", "workers", "times", "expected"), PACING)
def test_evictions_are_paced_as_karmadas_eviction_workers(
    rate: float, workers: int, times: list[float], expected: list[float]
) -> None:
    pacer = EvictionPacer(rate, workers)
    assert [round(pacer.claim(t), 6) for t in times] == expected


def test_a_pacer_needs_a_worker() -> None:
    with pytest.raises(ValueError, match="workers"):
        EvictionPacer(1.0, 0)
