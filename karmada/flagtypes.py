"""argparse types shared by the programs' flags: Go-style durations, Go-style
booleans, and Karmada's ``--controllers`` list (``*``, ``name``, ``-name``)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from karmada.durations import parse_duration

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")


def duration(text: str) -> float:
    """``10s``, ``1m30s``, ``0`` as seconds."""
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def boolean(text: str) -> bool:
    """``true``/``false`` (and 1/0, yes/no), as Go's flag package accepts them."""
    lowered = text.lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError(f'invalid boolean "{text}"')


def controllers(known: tuple[str, ...]) -> Callable[[str], tuple[str, ...]]:
    """A parser for ``--controllers``: ``*`` enables all, ``name`` one, ``-name`` disables one."""

    def parse(text: str) -> tuple[str, ...]:
        selected: list[str] = []
        for item in (part.strip() for part in text.split(",") if part.strip()):
            name = item.lstrip("-")
            if item == "*":
                selected.extend(c for c in known if c not in selected)
            elif name not in known:
                raise argparse.ArgumentTypeError(f'unknown controller "{name}"; known: {", ".join(known)}')
            elif item.startswith("-"):
                selected = [c for c in selected if c != name]
            elif name not in selected:
                selected.append(name)
        return tuple(selected)

    return parse


def comma_list(text: str) -> list[str]:
    """``a,b`` as ``["a", "b"]`` (empty items dropped)."""
    return [item.strip() for item in text.split(",") if item.strip()]


def options_from(cls: type[T], args: argparse.Namespace) -> T:
    """A dataclass of options filled from parsed flags with the same names (others keep defaults)."""
    import dataclasses  # not at load: it costs the CLI's --help ~10 ms (inspect)

    values: dict[str, Any] = {
        field.name: getattr(args, field.name) for field in dataclasses.fields(cls) if hasattr(args, field.name)
    }
    return cls(**values)
