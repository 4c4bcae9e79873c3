"""The fleet file and ``--clusters N``: pure parsing, as tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from localkube.fleet import ClusterSpec, FleetError, numbered, parse_fleet

BASE = Path("/fleets/one")


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ({"clusters": [{"name": "m1", "port": 0}]}, [ClusterSpec("m1", 0)]),
        (
            {
                "clusters": [
                    {
                        "name": "member1",
                        "port": 41001,
                        "dataDir": "/abs/member1",
                        "kubeconfigOut": "member1/admin.kubeconfig",
                        "nodeNamePrefix": "member1",
                    },
                    {"name": "member2", "port": 0},
                    {"name": "member3", "port": 0},
                ]
            },
            [
                ClusterSpec("member1", 41001, Path("/abs/member1"), BASE / "member1/admin.kubeconfig", "member1"),
                ClusterSpec("member2", 0),
                ClusterSpec("member3", 0),
            ],
        ),
    ],
)
def test_good_fleet_files(document: Any, expected: list[ClusterSpec]) -> None:
    assert parse_fleet(document, BASE, "f.json") == expected


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([], 'f.json: must be an object with exactly one field, "clusters"'),
        ({"clusters": [], "x": 1}, 'f.json: must be an object with exactly one field, "clusters"'),
        ({"clusters": []}, "f.json: clusters: must be a non-empty list"),
        ({"clusters": ["m1"]}, "f.json: clusters[0]: must be an object"),
        ({"clusters": [{"port": 0}]}, "f.json: clusters[0]: name: required, a string"),
        (
            {"clusters": [{"name": "Member_1", "port": 0}]},
            'f.json: clusters[0] ("Member_1"): name: must be a lowercase',
        ),
        ({"clusters": [{"name": "m1", "port": "41001"}]}, 'clusters[0] ("m1"): port: required, an integer from 0'),
        ({"clusters": [{"name": "m1", "port": True}]}, 'clusters[0] ("m1"): port: required, an integer'),
        ({"clusters": [{"name": "m1", "port": 70000}]}, 'clusters[0] ("m1"): port: required, an integer'),
        ({"clusters": [{"name": "m1", "port": 0, "dataDir": ""}]}, '("m1"): dataDir: must be a non-empty path'),
        ({"clusters": [{"name": "m1", "port": 0, "kubeconfigOut": 3}]}, '("m1"): kubeconfigOut: must be a non-empty'),
        ({"clusters": [{"name": "m1", "port": 0, "nodeNamePrefix": "N"}]}, '("m1"): nodeNamePrefix: must be a lower'),
        ({"clusters": [{"name": "m1", "port": 0, "ports": 1}]}, '("m1"): ports: unknown field (known: name, port,'),
        (
            {"clusters": [{"name": "m1", "port": 0}, {"name": "m1", "port": 0}]},
            'clusters[1] ("m1"): name: m1 is already clusters[0]\'s',
        ),
        (
            {"clusters": [{"name": "m1", "port": 41001}, {"name": "m2", "port": 41001}]},
            'clusters[1] ("m2"): port: 41001 is already clusters[0]\'s',
        ),
        (
            {
                "clusters": [
                    {"name": "m1", "port": 0, "dataDir": "d"},
                    {"name": "m2", "port": 0, "dataDir": "/fleets/one/d"},
                ]
            },
            'clusters[1] ("m2"): dataDir: /fleets/one/d is already clusters[0]\'s',
        ),
    ],
)
def test_bad_fleet_files_name_the_entry_and_field(document: Any, message: str) -> None:
    with pytest.raises(FleetError) as caught:
        parse_fleet(document, BASE, "f.json")
    assert message in str(caught.value)


def test_two_clusters_on_any_free_port_are_not_a_conflict() -> None:
    specs = parse_fleet({"clusters": [{"name": "a", "port": 0}, {"name": "b", "port": 0}]}, BASE)
    assert [s.port for s in specs] == [0, 0]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((2, "member", 41001, None, None), [ClusterSpec("member1", 41001), ClusterSpec("member2", 41002)]),
        (
            (2, "edge", 0, Path("/d"), Path("/k")),
            [
                ClusterSpec("edge1", 0, Path("/d/edge1"), Path("/k/edge1.kubeconfig")),
                ClusterSpec("edge2", 0, Path("/d/edge2"), Path("/k/edge2.kubeconfig")),
            ],
        ),
    ],
)
def test_numbered_clusters(args: Any, expected: list[ClusterSpec]) -> None:
    assert numbered(*args) == expected


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0, "member", 0, None, None), "--clusters: must be at least 1"),
        ((2, "Member", 0, None, None), "--cluster-name-prefix: Member2 must be a lowercase RFC 1123 label"),
        ((10, "m", 65530, None, None), "--port: 65530 + 10 clusters passes port 65535"),
    ],
)
def test_bad_numbered_clusters(args: Any, message: str) -> None:
    with pytest.raises(FleetError, match=message.replace("+", r"\+")):
        numbered(*args)
