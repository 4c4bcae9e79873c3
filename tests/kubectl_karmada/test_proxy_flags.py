"""``logs``/``exec``/``attach``: the plugin's own flags out, kubectl's left as given."""

from __future__ import annotations

import pytest

from kubectl_karmada.commands.proxy import split_flags
from kubectl_karmada.errors import CommandError


@pytest.mark.parametrize(
    ("argv", "own", "rest"),
    [
        (["pod", "-C", "m1"], {"--cluster": "m1"}, ["pod"]),
        (["-Cm1", "pod", "-f"], {"--cluster": "m1"}, ["pod", "-f"]),
        (["--cluster=m1", "pod", "-c", "web"], {"--cluster": "m1"}, ["pod", "-c", "web"]),
        (
            ["-it", "pod", "--cluster", "m1", "--", "sh", "-C", "x"],  # after --: the command's own
            {"--cluster": "m1"},
            ["-it", "pod", "--", "sh", "-C", "x"],
        ),
        (
            ["pod", "-C", "m1", "--cluster-proxy-server", "https://p:1", "--kubeconfig=/k", "--context", "c"],
            {"--cluster": "m1", "--cluster-proxy-server": "https://p:1", "--kubeconfig": "/k", "--context": "c"},
            ["pod"],
        ),
        (["pod", "-n", "apps", "--tail=5"], {}, ["pod", "-n", "apps", "--tail=5"]),
    ],
)
def test_split_flags(argv: list[str], own: dict[str, str], rest: list[str]) -> None:
    assert split_flags(argv) == (own, rest)


def test_a_flag_without_its_value() -> None:
    with pytest.raises(CommandError, match="--cluster"):
        split_flags(["pod", "--cluster"])
