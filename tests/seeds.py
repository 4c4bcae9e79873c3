"""The YAML examples of the seed documents (``../shared/seeds``), found in the files themselves.

The repository keeps its own copies of them (``tests/api/seed_yaml``, see
``tests/api/seed_examples.py``); this module finds the examples in the seed
documents, when they are at hand, so a test can check the copies still equal them.

Two shapes occur. Some documents keep their YAML indented: those blocks are
extracted directly. Others were flattened to one line when they were
published (newlines and indentation lost, section numbers glued on): for
those, ``tests/api/seed_yaml/flattened`` holds the re-indented YAML, and
:func:`flattened_runs` finds every example in the seed text so a test can
check each is covered by a reconstruction that flattens back to the very same
text.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def seeds_dir() -> Path | None:
    """``$KARMADA_SEEDS_DIR``, else ``../shared/seeds`` beside the checkout."""
    configured = os.environ.get("KARMADA_SEEDS_DIR")
    candidate = Path(configured) if configured else REPO_ROOT.parent / "shared" / "seeds"
    return candidate if candidate.is_dir() else None


def seed_files() -> list[Path]:
    """Every seed document, sorted."""
    directory = seeds_dir()
    return sorted(directory.glob("*.txt")) if directory else []


@dataclass(frozen=True)
class SeedBlock:
    """One YAML example found in a seed document."""

    seed: str
    line: int
    text: str

    @property
    def id(self) -> str:
        return f"{self.seed}:{self.line}"


_TOP_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9]*:( .*)?$")
_YAML_LINE = re.compile(r"^(\s+\S.*|---|[A-Za-z][A-Za-z0-9.]*:( .*)?)$")


def indented_blocks(path: Path) -> list[SeedBlock]:
    """YAML blocks that kept their line structure: a run of YAML-looking lines
    starting with a top-level ``key:`` line and holding at least one indented line."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[SeedBlock] = []
    i = 0
    while i < len(lines):
        if _TOP_KEY.match(lines[i]) and not _has_cjk(lines[i]):
            j = i + 1
            while j < len(lines) and _YAML_LINE.match(lines[j]) and not _has_cjk(lines[j]):
                j += 1
            block = lines[i:j]
            if any(line.startswith(" ") for line in block):
                blocks.append(SeedBlock(path.stem.split("_")[0], i + 1, "\n".join(block) + "\n"))
            i = j
        else:
            i += 1
    return blocks


def _has_cjk(text: str) -> bool:
    return any(ord(ch) > 0x2E80 for ch in text)


def normalize(text: str) -> str:
    """Collapse every whitespace run to one space: the flattened form."""
    return re.sub(r"\s+", " ", text).strip()


# Keys a flattened example starts with (the examples are Karmada objects or fragments of one).
_START = re.compile(r"(?<![\w.])(apiVersion|placement|spec|replicaScheduling|resourceSelectors): ")


def flattened_runs(path: Path) -> list[str]:
    """Every flattened YAML example of a seed: an ASCII run starting at a known
    top-level key and holding at least two ``key: value`` pairs.

    The run may carry a glued section number at its end ("...Duplicated3.4");
    a reconstruction covers the run when its flattened text is a prefix of it.
    """
    text = normalize(path.read_text(encoding="utf-8"))
    runs: list[str] = []
    for match in re.finditer(r"[\x20-\x7e]+", text):
        run = match.group()
        start = _START.search(run)
        if not start:
            continue
        candidate = run[start.start() :].strip()
        if len(re.findall(r"[\w.\-/]+: ", candidate)) >= 2:
            runs.append(candidate)
    return runs


def is_flattened(path: Path) -> bool:
    """A seed whose YAML lost its newlines (it has no indented YAML block)."""
    return not indented_blocks(path)
