"""The detector's flags: Karmada's ``--feature-gates`` and ``--skipped-propagating-namespaces``."""

from __future__ import annotations

import argparse

import pytest

from controlplane.options import Options, add_flags, from_args


def parse(*argv: str) -> Options:
    parser = argparse.ArgumentParser()
    add_flags(parser)
    return from_args(parser.parse_args(list(argv)))


def test_defaults_are_karmadas() -> None:
    options = parse()
    assert options.skipped_propagating_namespaces == ("kube-.*",)
    assert not options.feature_enabled("PropagationPolicyPreemption")
    assert options.feature_enabled("PriorityBasedScheduling")
    assert "detector" in options.controllers


def test_gates_and_namespaces_from_flags() -> None:
    options = parse(
        "--feature-gates=PropagationPolicyPreemption=true,PriorityBasedScheduling=false",
        "--skipped-propagating-namespaces=kube-.*,tenant-[0-9]+",
    )
    assert options.feature_enabled("PropagationPolicyPreemption")
    assert not options.feature_enabled("PriorityBasedScheduling")
    assert options.skipped_propagating_namespaces == ("kube-.*", "tenant-[0-9]+")


@pytest.mark.parametrize("value", ["PropagationPolicyPreemption", "PropagationPolicyPreemption=maybe"])
def test_bad_gates_are_refused(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse(f"--feature-gates={value}")
    assert "feature-gates" in capsys.readouterr().err
