"""karmada-scheduler's flags on karmada-controlplane, with Karmada's names and defaults."""

from __future__ import annotations

import pytest

from controlplane.cli import build_parser
from controlplane.options import from_args


@pytest.mark.parametrize(
    ("argv", "name", "empty"),
    [
        ([], "default-scheduler", False),
        (["--scheduler-name=my-scheduler"], "my-scheduler", False),
        (["--enable-empty-workload-propagation"], "default-scheduler", True),  # a Go bool flag alone is true
        (["--enable-empty-workload-propagation=true"], "default-scheduler", True),
        (["--enable-empty-workload-propagation=false"], "default-scheduler", False),
    ],
)
def test_scheduler_flags(argv: list[str], name: str, empty: bool) -> None:
    options = from_args(build_parser().parse_args(argv))
    assert (options.scheduler_name, options.enable_empty_workload_propagation) == (name, empty)
    assert "scheduler" in options.controllers


def test_a_bad_boolean_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--enable-empty-workload-propagation=maybe"])
    assert 'invalid boolean "maybe"' in capsys.readouterr().err
