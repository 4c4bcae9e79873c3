"""Turning failures into kubectl-style messages and exit code 1."""

from __future__ import annotations

import sys
from collections.abc import Callable, Coroutine
from typing import Any


class CommandError(Exception):
    """A failure whose message is already written for the user."""


def run_async(main: Callable[[], Coroutine[Any, Any, int]]) -> int:
    """Run a command's coroutine; print ``error: ...`` and return 1 on a known failure."""
    import asyncio

    from karmada.kube import ConfigError, KubeError

    try:
        return asyncio.run(main())
    except KubeError as exc:
        if exc.status:
            print(f"Error from server ({exc.reason or 'Unknown'}): {exc.message}", file=sys.stderr)
        else:
            print(f"error: {exc.message}", file=sys.stderr)
    except (CommandError, ConfigError, ValueError, TimeoutError, LookupError) as exc:
        print(f"error: {exc}", file=sys.stderr)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
    return 1
