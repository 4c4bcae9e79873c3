"""karmada-webhook's flags (Karmada's names and defaults) and the JSONPatch it answers with:
applied by an RFC 6902 implementation, the patch turns the request's object into the mutated one."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from karmada.overrides.jsonpatch import Operation, apply_patch
from karmada.validation import json_patch
from webhook.cli import build_parser

FLAG_CASES = [
    ([], False),
    (["--allow-no-execute-taint-policy"], True),
    (["--allow-no-execute-taint-policy=true"], True),
    (["--allow-no-execute-taint-policy=false"], False),
]


@pytest.mark.parametrize(("argv", "allowed"), FLAG_CASES)
def test_allow_no_execute_taint_policy_flag(argv: list[str], allowed: bool) -> None:
    assert build_parser().parse_args(argv).allow_no_execute_taint_policy is allowed


def test_karmadas_defaults() -> None:
    args = build_parser().parse_args([])
    assert (args.bind_address, args.secure_port) == ("0.0.0.0", 8443)
    assert (args.cert_dir, args.tls_cert_file_name, args.tls_private_key_file_name) == (
        "/tmp/k8s-webhook-server/serving-certs",
        "tls.crt",
        "tls.key",
    )


_keys = st.sampled_from(["a", "b", "c/d", "e~f", "spec", ""])
_json: Any = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_keys, _json, max_size=4), st.dictionaries(_keys, _json, max_size=4))
def test_the_patch_turns_before_into_after(before: dict[str, Any], after: dict[str, Any]) -> None:
    operations = [Operation(op["op"], op["path"], op.get("value")) for op in json_patch(before, after)]
    assert apply_patch(before, operations) == after
