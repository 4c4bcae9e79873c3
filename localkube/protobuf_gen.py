"""Generate ``localkube/protobuf_fields.json``, the protobuf field table of the
built-in kinds, from checkouts of the Kubernetes API repositories.

    python -m localkube.protobuf_gen API_DIR [API_DIR ...] > localkube/protobuf_fields.json

Each API_DIR is a checkout of k8s.io/api, k8s.io/apimachinery or
k8s.io/apiextensions-apiserver (any repository holding ``generated.proto``
files next to the Go types they were generated from). A package's
``generated.proto`` gives each message's fields (number, type, repeated, map);
its Go types give what the wire format leaves out: the JSON name of each field
(matched by number: the two differ for e.g. ``x-kubernetes-*`` schema fields),
whether Go holds it as a pointer (a zero value then still counts), whether it
is ``omitempty``, and whether it is inlined into its parent's JSON (``json:""``,
as ``Volume.volumeSource``). ``register.go`` names the API group of a package.

The table is data, not code: field numbers are facts of the published API.
tests/localkube/test_protobuf.py checks the committed table is well-formed
(this generator needs the checkouts, which CI does not have).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

SCALARS = ("string", "int32", "int64", "bool", "bytes", "double", "float", "uint32", "uint64")
_FIELD = re.compile(r"^\s*(optional|repeated|required)\s+([\w.]+)\s+(\w+)\s*=\s*(\d+)")
_MAP = re.compile(r"^\s*map<\s*string\s*,\s*([\w.]+)\s*>\s+(\w+)\s*=\s*(\d+)")
_GO_TAGGED = re.compile(r"^\s*(?:(\w+)\s+)?([*\[\]\w.]+)\s+`([^`]*)`")
_SKIP_GO = ("_test.go", "generated.pb.go", "swagger_doc_generated.go")


def _go_files(directory: Path) -> list[Path]:
    return [
        f
        for f in sorted(directory.glob("*.go"))
        if not f.name.endswith(_SKIP_GO) and not f.name.startswith("zz_generated")
    ]


def go_fields(directory: Path) -> tuple[dict[str, dict[int, tuple[str, str]]], set[str]]:
    """Per struct: field number -> (JSON name, flags); and the names of slice types."""
    structs: dict[str, dict[int, tuple[str, str]]] = {}
    slices: set[str] = set()
    for path in _go_files(directory):
        current: dict[int, tuple[str, str]] | None = None
        for line in path.read_text().splitlines():
            start = re.match(r"^type (\w+) struct \{", line)
            if start:
                current = structs.setdefault(start.group(1), {})
                continue
            slice_type = re.match(r"^type (\w+) \[\]\w+\s*$", line)
            if slice_type:
                slices.add(slice_type.group(1))
                continue
            if line.startswith("}"):
                current = None
                continue
            match = _GO_TAGGED.match(line) if current is not None else None
            if match is None or current is None:
                continue
            tags = match.group(3)
            pb = re.search(r'protobuf:"([^"]*)"', tags)
            js = re.search(r'json:"([^"]*)"', tags)
            spec = pb.group(1).split(",") if pb else []
            if len(spec) < 2 or not spec[1].isdigit():
                continue
            number = int(spec[1])
            json_name, _, options = (js.group(1) if js else "").partition(",")
            flags = ""
            if match.group(2).startswith("*"):
                flags += "p"
            if "omitempty" in options.split(","):
                flags += "o"
            if json_name == "" or "inline" in options.split(","):
                flags += "i"
            current[number] = (json_name, flags)
    return structs, slices


def group_name(directory: Path) -> str | None:
    register = directory / "register.go"
    if not register.exists():
        return None
    match = re.search(r'GroupName\s*=\s*"([^"]*)"', register.read_text())
    return match.group(1) if match else None


def proto_messages(text: str) -> tuple[str, dict[str, list[tuple[int, str, str, str]]]]:
    """The package and, per message, (number, proto name, type, "r"/"m"/"") of each field."""
    package = re.search(r"^package ([\w.]+);", text, re.MULTILINE)
    assert package is not None, "a generated.proto names its package"
    pkg = package.group(1)
    messages: dict[str, list[tuple[int, str, str, str]]] = {}
    current: list[tuple[int, str, str, str]] | None = None
    for line in text.splitlines():
        start = re.match(r"^message (\w+) \{", line)
        if start:
            current = messages.setdefault(start.group(1), [])
            continue
        if line.startswith("}"):
            current = None
            continue
        if current is None:
            continue
        field = _FIELD.match(line)
        mapped = _MAP.match(line)
        if field:
            label, kind, name, number = field.groups()
            current.append((int(number), name, _qualify(kind, pkg), "r" if label == "repeated" else ""))
        elif mapped:
            kind, name, number = mapped.groups()
            current.append((int(number), name, _qualify(kind, pkg), "m"))
    return pkg, messages


def _qualify(kind: str, package: str) -> str:
    if kind in SCALARS:
        return kind
    if kind.startswith("."):
        return kind[1:]
    return f"{package}.{kind}"


def generate(roots: list[Path]) -> dict[str, Any]:
    groups: dict[str, str] = {}
    messages: dict[str, list[list[Any]]] = {}
    slices: list[str] = []
    for root in roots:
        for proto in sorted(root.rglob("generated.proto")):
            directory = proto.parent
            package, found = proto_messages(proto.read_text())
            structs, slice_types = go_fields(directory)
            group = group_name(directory)
            if group is not None and package.startswith(
                ("k8s.io.api.", "k8s.io.apiextensions_apiserver.", "k8s.io.kube_aggregator.")
            ):
                version = directory.name
                groups[f"{group}/{version}" if group else version] = package
            for name, fields in found.items():
                go = structs.get(name, {})
                entries: list[list[Any]] = []
                for number, proto_name, kind, label in sorted(fields):
                    json_name, flags = go.get(number, (proto_name, ""))
                    if "i" in flags:
                        json_name = ""
                    entries.append([number, json_name, kind, label + flags])
                messages[f"{package}.{name}"] = entries
                if name in slice_types and [e[3][:1] for e in entries] == ["r"]:
                    slices.append(f"{package}.{name}")
    return {
        "groups": dict(sorted(groups.items())),
        "slices": sorted(slices),
        "messages": dict(sorted(messages.items())),
    }


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    table = generate([Path(a) for a in argv])
    sys.stdout.write(json.dumps(table, separators=(",", ":"), sort_keys=False) + "\n")
    counts = {key: len(value) for key, value in table.items()}
    print(f"{counts['messages']} messages, {counts['groups']} group versions", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
