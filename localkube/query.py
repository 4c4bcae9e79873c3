"""Numeric query parameters, parsed as kube-apiserver's parameter codec and
storage parse them (Go's ``strconv``), with a 400 for a value they cannot
parse: ``limit=abc`` is a 400 there too; ``resourceVersion=abc`` is a 500 in
kube-apiserver (its storage layer's plain error), a 400 with the same text here.
"""

from __future__ import annotations

import re

from multidict import MultiMapping

from localkube.errors import bad_request

INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1
_SIGNED = re.compile(r"[+-]?[0-9]+")
_UNSIGNED = re.compile(r"[0-9]+")


def int_param(query: MultiMapping[str], name: str) -> int | None:
    """An int64 parameter (Go's ``strconv.ParseInt(s, 10, 64)``), or None when absent or empty."""
    text = query.get(name, "")
    if not text:
        return None
    if not _SIGNED.fullmatch(text):
        raise bad_request(f'strconv.ParseInt: parsing "{text}": invalid syntax')
    value = int(text)
    if not -INT64_MAX - 1 <= value <= INT64_MAX:
        raise bad_request(f'strconv.ParseInt: parsing "{text}": value out of range')
    return value


def parse_resource_version(text: str) -> int:
    """A resourceVersion as storage parses it (``strconv.ParseUint``); "" and "0" are 0."""
    if text in ("", "0"):
        return 0
    if not _UNSIGNED.fullmatch(text):
        problem = "invalid syntax"
    elif int(text) > UINT64_MAX:
        problem = "value out of range"
    else:
        return int(text)
    raise bad_request(f'resourceVersion: Invalid value: "{text}": strconv.ParseUint: parsing "{text}": {problem}')


def resource_version_param(query: MultiMapping[str]) -> int | None:
    """The ``resourceVersion`` parameter: None when absent, empty or "0"."""
    return parse_resource_version(query.get("resourceVersion", "")) or None


__all__ = ["int_param", "parse_resource_version", "resource_version_param"]
