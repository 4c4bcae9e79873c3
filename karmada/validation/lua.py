"""Does a Lua script compile? (The ResourceInterpreterCustomization webhook refuses one that does not.)

Only compiles, never runs: a fresh runtime per check, no script code executed.
"""

from __future__ import annotations

import lupa


def compile_problem(script: str) -> str | None:
    """The Lua compiler's message for ``script``, or None when it compiles."""
    runtime = lupa.LuaRuntime(register_eval=False, register_builtins=False)
    try:
        runtime.compile(script)
    except lupa.LuaSyntaxError as exc:
        return str(exc)
    except lupa.LuaError as exc:
        return str(exc)
    return None
