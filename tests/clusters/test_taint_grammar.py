"""The ``taint`` argument grammar as a table, against kubectl's ``parseTaints``,
``parseTaint`` and ``Complete``/``Validate`` (k8s.io/kubectl pkg/cmd/taint) and
apimachinery's qualified-name and label-value messages."""

from __future__ import annotations

import pytest

from karmada.clusters.taints import TaintChange, TaintError, parse_taints, split_arguments

NAME_RULE = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
VALUE_RULE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
PREFIX_RULE = (
    "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def add(key: str, value: str, effect: str) -> TaintChange:
    return TaintChange(key, value, effect, remove=False)


def remove(key: str, effect: str = "") -> TaintChange:
    return TaintChange(key, "", effect, remove=True)


@pytest.mark.parametrize(
    ("specs", "changes"),
    [
        (["dedicated=batch:NoSchedule"], [add("dedicated", "batch", "NoSchedule")]),
        (
            ["gpu:NoExecute", "spot:PreferNoSchedule"],
            [add("gpu", "", "NoExecute"), add("spot", "", "PreferNoSchedule")],
        ),
        (["foobar=:NoSchedule"], [add("foobar", "", "NoSchedule")]),
        (["example.com/gpu=a100:NoSchedule"], [add("example.com/gpu", "a100", "NoSchedule")]),
        (["a" * 63 + "=" + "v" * 63 + ":NoSchedule"], [add("a" * 63, "v" * 63, "NoSchedule")]),
        # removals: key-, key:Effect-, and (the seed documents' form) key=value:Effect-, value ignored
        (["dedicated-"], [remove("dedicated")]),
        (["dedicated:NoSchedule-"], [remove("dedicated", "NoSchedule")]),
        (["maintenance=true:NoSchedule-"], [remove("maintenance", "NoSchedule")]),
        (["qux=:NoSchedule-"], [remove("qux", "NoSchedule")]),
        # the same key with another effect is neither a duplicate nor a conflict
        (["a=1:NoSchedule", "a:NoExecute-"], [add("a", "1", "NoSchedule"), remove("a", "NoExecute")]),
        (["a=1:NoSchedule", "a=2:NoExecute"], [add("a", "1", "NoSchedule"), add("a", "2", "NoExecute")]),
    ],
)
def test_accepted(specs: list[str], changes: list[TaintChange]) -> None:
    assert parse_taints(specs) == changes


@pytest.mark.parametrize(
    ("specs", "message"),
    [
        ([""], f"invalid taint spec: , name part must be non-empty; name part {NAME_RULE}"),
        (["foo"], "invalid taint spec: foo"),
        (["foo=abc"], f"invalid taint spec: foo=abc, name part {NAME_RULE}"),
        (["foo=abc=xyz:NoSchedule"], "invalid taint spec: foo=abc=xyz:NoSchedule"),
        (["foo=abc:xyz:NoSchedule"], "invalid taint spec: foo=abc:xyz:NoSchedule"),
        (["foo=abc:invalid_effect"], "invalid taint effect: invalid_effect, unsupported taint effect"),
        (["foo:invalid_effect-"], "invalid taint effect: invalid_effect, unsupported taint effect"),
        (["foo:"], "invalid taint effect: , unsupported taint effect"),
        (["foo=bar:NoExcute"], "invalid taint effect: NoExcute, unsupported taint effect"),
        (["k=bad value:NoSchedule"], f"invalid taint spec: k=bad value:NoSchedule, {VALUE_RULE}"),
        (
            ["k=" + "v" * 64 + ":NoSchedule"],
            f"invalid taint spec: k={'v' * 64}:NoSchedule, must be no more than 63 bytes",
        ),
        (
            ["nospecialchars^@=banana:NoSchedule"],
            f"invalid taint spec: nospecialchars^@=banana:NoSchedule, name part {NAME_RULE}",
        ),
        (
            ["a" * 64 + ":NoSchedule"],
            f"invalid taint spec: {'a' * 64}:NoSchedule, name part must be no more than 63 bytes",
        ),
        (["/k:NoSchedule"], "invalid taint spec: /k:NoSchedule, prefix part must be non-empty"),
        (["Example.com/k:NoSchedule"], f"invalid taint spec: Example.com/k:NoSchedule, {PREFIX_RULE}"),
        (["a/b/c:NoSchedule"], "invalid taint spec: a/b/c:NoSchedule, a valid label key must consist of"),
        (["k\n:NoSchedule"], "invalid taint spec: k\n:NoSchedule, name part"),
        (["k=v\n:NoSchedule"], "invalid taint spec: k=v\n:NoSchedule, a valid label must be"),
        (
            ["foo=bar:NoSchedule", "foo=barz:NoSchedule"],
            "duplicated taints with the same key and effect: {foo barz NoSchedule <nil>}",
        ),
        (
            ["foo=:NoSchedule", "foo=:NoSchedule-"],
            "can not both modify and remove the following taint(s) in the same command: foo=NoSchedule",
        ),
        (
            ["foo=x:NoSchedule", "foo-"],
            "can not both modify and remove the following taint(s) in the same command: foo=",
        ),
    ],
)
def test_refused(specs: list[str], message: str) -> None:
    with pytest.raises(TaintError) as refused:
        parse_taints(specs)
    assert str(refused.value).startswith(message)


@pytest.mark.parametrize(
    ("args", "split"),
    [
        (["clusters", "m1", "a:NoSchedule"], (["clusters", "m1"], ["a:NoSchedule"])),
        (["clusters", "m1", "m2", "a-", "b=c:NoExecute"], (["clusters", "m1", "m2"], ["a-", "b=c:NoExecute"])),
    ],
)
def test_split_arguments(args: list[str], split: tuple[list[str], list[str]]) -> None:
    assert split_arguments(args) == split


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["clusters", "m1"], "at least one taint update is required"),
        (["a:NoSchedule"], "one or more resources must be specified as <resource> <name>"),
        (["clusters", "a:NoSchedule", "m1"], "all resources must be specified before taint changes: m1"),
    ],
)
def test_split_arguments_refused(args: list[str], message: str) -> None:
    with pytest.raises(TaintError, match=message):
        split_arguments(args)
