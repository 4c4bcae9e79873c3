"""Generate ``zero_fields.json``: the fields Go's JSON encoder always writes, per definition.

kube-apiserver answers with Go structs encoded by ``encoding/json`` rules: a field
tagged ``omitempty`` is left out when empty, every other field is written, and a
struct-valued field is written even with ``omitempty`` (the encoder never treats
a struct as empty). So ``POST /api/v1/nodes`` with only a name answers with
``spec: {}`` and a ``status`` whose ``nodeInfo`` lists every string as ``""``.

This reads the Go type declarations of Kubernetes' published modules (checkouts
of k8s.io/api, k8s.io/apimachinery and k8s.io/apiextensions-apiserver at the
release localkube mirrors) and writes, for each OpenAPI definition that the
kubernetes-validate schemas know, the always-written fields and their zero value:
``""``, ``0``, ``false``, ``null`` (nil pointer, slice, map or a zero
``metav1.Time``) or ``"@<definition>"`` for a nested struct (filled in turn)::

    python -m localkube.gen_zero_fields ../api ../apimachinery ../apiextensions-apiserver \
        --label "v0.32.0" > localkube/zero_fields.json

The output holds facts about the API (field names and zero values), not code.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Types with their own MarshalJSON: (package, name) -> what their zero value encodes to.
# They are structs, so they are written even under omitempty.
OWN_ENCODING: dict[tuple[str, str], Any] = {
    ("k8s.io/apimachinery/pkg/apis/meta/v1", "Time"): None,
    ("k8s.io/apimachinery/pkg/apis/meta/v1", "MicroTime"): None,
    ("k8s.io/apimachinery/pkg/apis/meta/v1", "Duration"): "0s",
    ("k8s.io/apimachinery/pkg/apis/meta/v1", "FieldsV1"): None,
    ("k8s.io/apimachinery/pkg/api/resource", "Quantity"): "0",
    ("k8s.io/apimachinery/pkg/util/intstr", "IntOrString"): 0,
    ("k8s.io/apimachinery/pkg/runtime", "RawExtension"): None,
    ("k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1", "JSON"): None,
}
BASIC_ZEROS: dict[str, Any] = {"string": "", "bool": False}
NUMBERS = re.compile(r"u?int(8|16|32|64)?|float(32|64)|byte|rune")

_TYPE_LINE = re.compile(r"^type (\w+) (.+)$")
_STRUCT_START = re.compile(r"^type (\w+) struct \{\s*$")
_EMPTY_STRUCT = re.compile(r"^type (\w+) struct ?\{\}")
_FIELD = re.compile(r"^\s+(\w+)\s+([^\s`]+)\s+`([^`]*)`")
_EMBEDDED = re.compile(r"^\s+([\w.*]+)\s*(`([^`]*)`)?\s*$")
_JSON_TAG = re.compile(r'json:"([^"]*)"')
_IMPORT = re.compile(r'^\s*(?:(\w+)\s+)?"([^"]+)"\s*$')


@dataclass
class GoField:
    json_name: str  # "" for an embedded (inlined) struct
    type_expr: str
    omitempty: bool


@dataclass
class GoPackage:
    path: str
    structs: dict[str, list[GoField]] = field(default_factory=dict)
    named: dict[str, str] = field(default_factory=dict)  # type X <underlying>
    imports: dict[str, str] = field(default_factory=dict)  # alias -> package path
    aliases: dict[str, str] = field(default_factory=dict)  # type X = <other>


def definition_name(package: str, name: str) -> str:
    """kube-openapi's naming: ``k8s.io/api/core/v1`` + ``Node`` -> ``io.k8s.api.core.v1.Node``."""
    host, _, rest = package.partition("/")
    return ".".join([*reversed(host.split(".")), *rest.split("/"), name])


def _module_path(root: Path) -> str:
    for line in (root / "go.mod").read_text().splitlines():
        if line.startswith("module "):
            return line.split()[1]
    raise ValueError(f"{root}/go.mod names no module")


def _source_files(directory: Path) -> list[Path]:
    return [
        p
        for p in sorted(directory.glob("*.go"))
        if not (p.name.endswith("_test.go") or p.name.startswith(("zz_generated", "generated.")) or "swagger" in p.name)
    ]


def parse_package(path: str, files: list[Path]) -> GoPackage:
    package = GoPackage(path)
    for file in files:
        _parse_file(package, file.read_text(encoding="utf-8"))
    return package


def _parse_file(package: GoPackage, text: str) -> None:
    lines = text.splitlines()
    index = 0
    in_imports = False
    while index < len(lines):
        line = lines[index]
        index += 1
        if line.startswith("import ("):
            in_imports = True
            continue
        if in_imports:
            if line.startswith(")"):
                in_imports = False
            else:
                _note_import(package, line)
            continue
        if line.startswith("import "):
            _note_import(package, line[len("import ") :])
            continue
        empty = _EMPTY_STRUCT.match(line)
        if empty:
            package.structs[empty.group(1)] = []
            continue
        start = _STRUCT_START.match(line)
        if start:
            fields, index = _parse_struct(lines, index)
            package.structs[start.group(1)] = fields
            continue
        named = _TYPE_LINE.match(line)
        if named and named.group(2).startswith("="):
            package.aliases[named.group(1)] = named.group(2)[1:].split("//")[0].strip()
        elif named and not named.group(2).startswith(("struct", "interface")):
            package.named[named.group(1)] = named.group(2).split("//")[0].strip()


def _note_import(package: GoPackage, line: str) -> None:
    found = _IMPORT.match(line)
    if found:
        target = found.group(2)
        package.imports[found.group(1) or target.rsplit("/", 1)[-1]] = target


def _parse_struct(lines: list[str], index: int) -> tuple[list[GoField], int]:
    fields: list[GoField] = []
    depth = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if line.lstrip().startswith("//") or not line.strip():
            continue
        if depth == 0 and line.startswith("}"):
            break
        if line.split("//")[0].rstrip().endswith("struct {"):
            depth += 1  # an anonymous struct type: the API types' fields use none
            continue
        if depth:
            depth -= line.strip().startswith("}")
            continue
        named = _FIELD.match(line)
        if named:
            tag = _JSON_TAG.search(named.group(3))
            if tag is not None and not tag.group(1).startswith("-"):
                name, *options = tag.group(1).split(",")
                fields.append(GoField(name, named.group(2), "omitempty" in options))
            continue
        embedded = _EMBEDDED.match(line.split("` //")[0] + ("`" if "` //" in line else ""))
        if embedded:
            tag = _JSON_TAG.search(embedded.group(3) or "")
            name, *options = (tag.group(1) if tag else "").split(",")
            if name != "-":
                fields.append(GoField(name, embedded.group(1), "omitempty" in options))
    return fields, index


class Resolver:
    """Zero values of Go type expressions across the parsed packages."""

    def __init__(self, packages: dict[str, GoPackage], known: set[str]) -> None:
        self.packages = packages
        self.known = known

    def _locate(self, package: GoPackage, expr: str) -> tuple[str, str]:
        if "." in expr:
            alias, _, name = expr.partition(".")
            where = package.imports.get(alias, alias)
        else:
            where, name = package.path, expr
        target = self.packages.get(where)
        if target is not None and name in target.aliases:
            return self._locate(target, target.aliases[name])
        return where, name

    def zero(self, package: GoPackage, expr: str) -> tuple[Any, bool]:
        """(zero value as written, written even under omitempty)."""
        if expr.startswith(("*", "[]", "map[")) or expr in ("interface{}", "any"):
            return None, False
        if expr in BASIC_ZEROS:
            return BASIC_ZEROS[expr], False
        if NUMBERS.fullmatch(expr):
            return 0, False
        where, name = self._locate(package, expr)
        if (where, name) in OWN_ENCODING:
            return OWN_ENCODING[(where, name)], True
        target = self.packages.get(where)
        if target is None:
            raise KeyError(f"type {where}.{name} is in no parsed module")
        if name in target.structs:
            return "@" + definition_name(where, name), True
        if name in target.named:
            return self.zero(target, target.named[name])
        raise KeyError(f"type {where}.{name} not found")

    def fields(self, package: GoPackage, struct: str) -> dict[str, Any]:
        """The always-written fields of one struct, embedded structs inlined."""
        out: dict[str, Any] = {}
        for go_field in package.structs[struct]:
            if not go_field.json_name:
                where, name = self._locate(package, go_field.type_expr.lstrip("*"))
                if go_field.type_expr.startswith("*"):
                    continue  # an embedded pointer is nil unless set
                out.update(self.fields(self.packages[where], name))
                continue
            value, always = self.zero(package, go_field.type_expr)
            if always or not go_field.omitempty:
                if isinstance(value, str) and value.startswith("@") and value[1:] not in self.known:
                    value = {}  # a struct kube-openapi does not publish: written as an empty object
                out[go_field.json_name] = value
        return out


def generate(roots: list[Path], known: set[str]) -> dict[str, dict[str, Any]]:
    packages: dict[str, GoPackage] = {}
    for root in roots:
        module = _module_path(root)
        for directory in sorted({p.parent for p in root.rglob("*.go")}):
            relative = directory.relative_to(root).as_posix()
            path = module if relative == "." else f"{module}/{relative}"
            files = _source_files(directory)
            if files:
                packages[path] = parse_package(path, files)
    resolver = Resolver(packages, known)
    table: dict[str, dict[str, Any]] = {}
    for path, package in packages.items():
        for struct in package.structs:
            name = definition_name(path, struct)
            if name not in known or (path, struct) in OWN_ENCODING:
                continue
            fields = resolver.fields(package, struct)
            if fields:
                table[name] = dict(sorted(fields.items()))
    return dict(sorted(table.items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("roots", nargs="+", type=Path, help="checkouts of Kubernetes Go modules (with go.mod)")
    parser.add_argument("--label", default="", help="the release the checkouts are at, recorded in the output")
    args = parser.parse_args(argv)
    from localkube.builtin_schemas import definitions

    table = generate(args.roots, set(definitions()))
    document = {"source": args.label, "definitions": table}
    sys.stdout.write(json.dumps(document, indent=1, sort_keys=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
