"""The simulated shell of a simulated container: what ``kubectl exec`` runs.

A handful of commands, each given the container's environment and a few files:
``echo [-n]``, ``env``, ``printenv [NAME]``, ``hostname``, ``pwd``, ``whoami``,
``cat [FILE...]`` (``/etc/hostname``, ``/etc/hosts``, ``/etc/resolv.conf``,
the service account's ``namespace``; stdin when no file is named),
``true``, ``false``, ``sleep N``, ``exit [N]`` and ``sh``/``bash`` (``-c
SCRIPT``, or commands read from stdin line by line until ``exit`` or the end
of stdin). Scripts split on ``;``, ``&&``, ``||`` and newlines, quote as
POSIX shells do and expand ``$NAME``, ``${NAME}`` and ``$?`` outside single
quotes. Nothing else of a shell (pipes, redirections, globs) exists.

A command the container does not have fails as a container runtime fails to
start it (:class:`NotFound`, which the exec handler reports through the error
channel as an internal error, as containerd's does); inside ``sh`` it is
``sh: NAME: not found`` with exit code 127.
"""

from __future__ import annotations

import asyncio
import re
import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

Write = Callable[[bytes], Awaitable[None]]
ReadLine = Callable[[], Awaitable[str | None]]

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SHELLS = ("sh", "bash", "ash", "dash")
MAX_SLEEP = 3600.0  # a simulated sleep longer than this is cut short
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*)|(\?))")


class NotFound(Exception):
    """The container has no such executable (the runtime could not start it)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


class _Exit(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


@dataclass
class Container:
    """What a command sees of its container."""

    env: list[tuple[str, str]]
    hostname: str
    files: dict[str, str] = field(default_factory=dict)


def expand(text: str, env: dict[str, str], status: int) -> str:
    """``$NAME``, ``${NAME}`` and ``$?`` replaced, except inside single quotes."""
    out: list[str] = []
    quoted = False
    start = 0
    for i, char in enumerate(text):
        if char == "'":
            piece = text[start:i]
            out.append(piece if quoted else _expand_part(piece, env, status))
            out.append(char)
            start = i + 1
            quoted = not quoted
    piece = text[start:]
    out.append(piece if quoted else _expand_part(piece, env, status))
    return "".join(out)


def _expand_part(text: str, env: dict[str, str], status: int) -> str:
    def value(match: re.Match[str]) -> str:
        if match.group(3):
            return str(status)
        return env.get(match.group(1) or match.group(2), "")

    return _VARIABLE.sub(value, text)


def split_statements(line: str) -> list[tuple[str, str]]:
    """One line's commands as text, each with the operator that joins it to the one before
    (``""`` first and after ``;``, else ``&&`` or ``||``); quotes and backslashes protect
    operators, and an unquoted ``#`` starting a word comments out the rest."""
    out: list[tuple[str, str]] = []
    joiner, start, quote, i = "", 0, "", 0
    while i < len(line):
        char = line[i]
        if quote:
            if char == quote:
                quote = ""
            elif char == "\\" and quote == '"':
                i += 1
        elif char == "\\":
            i += 1
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == start or line[i - 1].isspace()):
            break
        elif char == ";" or line.startswith(("&&", "||"), i):
            out.append((joiner, line[start:i]))
            joiner = "" if char == ";" else line[i : i + 2]
            i += 0 if char == ";" else 1
            start = i + 1
        i += 1
    out.append((joiner, line[start:i]))
    return [(j, text) for j, text in out if text.strip()]


def words(text: str, env: dict[str, str], status: int) -> list[str]:
    """A command's words: variables expanded, then split and unquoted as sh does."""
    return shlex.split(expand(text, env, status))  # ValueError: an unterminated quote


class Shell:
    """Runs commands in one simulated container; output goes through ``out``/``err``."""

    def __init__(self, container: Container, out: Write, err: Write, read_line: ReadLine) -> None:
        self.container = container
        self.env = dict(container.env)
        self.out = out
        self.err = err
        self.read_line = read_line
        self.status = 0

    async def run(self, argv: list[str]) -> int:
        """Run one command as exec starts it (no shell around it): its exit code."""
        try:
            return await self._command(argv, in_shell=False)
        except _Exit as done:
            return done.code

    async def script(self, text: str) -> int:
        """Run a script (``sh -c``); ``exit`` ends it through :class:`_Exit`."""
        for line in text.splitlines():
            for joiner, statement in split_statements(line):
                if (joiner == "&&" and self.status != 0) or (joiner == "||" and self.status == 0):
                    continue
                try:
                    argv = words(statement, self.env, self.status)
                except ValueError:
                    await self.err(b"sh: syntax error: unterminated quoted string\n")
                    self.status = 2
                    return self.status
                self.status = await self._command(argv, in_shell=True)
        return self.status

    async def interactive(self, prompt: str = "") -> int:
        """``sh`` reading stdin: each line a script, until ``exit`` or the end of stdin."""
        try:
            while True:
                if prompt:
                    await self.out(prompt.encode())
                line = await self.read_line()
                if line is None:
                    return self.status
                await self.script(line)
        except _Exit as done:
            return done.code

    async def _command(self, argv: list[str], in_shell: bool) -> int:
        if not argv:
            return 0
        name = argv[0].rsplit("/", 1)[-1]
        args = argv[1:]
        handler = getattr(self, f"_cmd_{name}", None)
        if name in SHELLS:
            return await self._sh(args)
        if handler is None:
            if in_shell:
                await self.err(f"sh: {argv[0]}: not found\n".encode())
                return 127
            raise NotFound(argv[0])
        code: int = await handler(args)
        return code

    async def _sh(self, args: list[str]) -> int:
        if args[:1] == ["-c"]:
            if len(args) < 2:
                await self.err(b"sh: -c requires an argument\n")
                return 2
            try:
                return await self.script(args[1])
            except _Exit as done:
                return done.code
        if args and not args[0].startswith("-"):
            await self.err(f"sh: can't open '{args[0]}': No such file or directory\n".encode())
            return 2
        inner = Shell(self.container, self.out, self.err, self.read_line)
        inner.env = self.env
        return await inner.interactive()

    # -- the commands ----------------------------------------------------------------
    async def _cmd_echo(self, args: list[str]) -> int:
        newline = True
        if args[:1] == ["-n"]:
            newline, args = False, args[1:]
        await self.out((" ".join(args) + ("\n" if newline else "")).encode())
        return 0

    async def _cmd_env(self, args: list[str]) -> int:
        await self.out("".join(f"{k}={v}\n" for k, v in self.env.items()).encode())
        return 0

    async def _cmd_printenv(self, args: list[str]) -> int:
        if not args:
            return await self._cmd_env(args)
        code = 0
        for name in args:
            if name in self.env:
                await self.out(f"{self.env[name]}\n".encode())
            else:
                code = 1
        return code

    async def _cmd_hostname(self, args: list[str]) -> int:
        await self.out(f"{self.container.hostname}\n".encode())
        return 0

    async def _cmd_pwd(self, args: list[str]) -> int:
        await self.out(b"/\n")
        return 0

    async def _cmd_whoami(self, args: list[str]) -> int:
        await self.out(b"root\n")
        return 0

    async def _cmd_true(self, args: list[str]) -> int:
        return 0

    async def _cmd_false(self, args: list[str]) -> int:
        return 1

    async def _cmd_exit(self, args: list[str]) -> int:
        code = self.status
        if args:
            try:
                code = int(args[0]) & 0xFF
            except ValueError:
                await self.err(f"sh: exit: Illegal number: {args[0]}\n".encode())
                code = 2
        raise _Exit(code)

    async def _cmd_sleep(self, args: list[str]) -> int:
        if not args:
            await self.err(b"sleep: missing operand\n")
            return 1
        try:
            seconds = float(args[0].rstrip("s"))
        except ValueError:
            await self.err(f"sleep: invalid number '{args[0]}'\n".encode())
            return 1
        await asyncio.sleep(min(max(seconds, 0.0), MAX_SLEEP))
        return 0

    async def _cmd_cat(self, args: list[str]) -> int:
        if not args:
            while (line := await self.read_line()) is not None:
                await self.out(f"{line}\n".encode())
            return 0
        code = 0
        for path in args:
            content = self.container.files.get(path)
            if content is None:
                await self.err(f"cat: {path}: No such file or directory\n".encode())
                code = 1
            else:
                await self.out(content.encode())
        return code
