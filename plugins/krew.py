"""The krew archive of the plugin: the launcher ``kubectl-karmada`` and the LICENSE notice,
packed deterministically (fixed names, modes and times), so ``karmada.yaml``'s sha256 is
that of the archive built from this directory; ``--check`` says whether they agree.

    python plugins/krew.py            # writes build/kubectl-karmada.tar.gz, prints its sha256
    python plugins/krew.py --check    # exit 1 when karmada.yaml's sha256 is not the archive's
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import re
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ARCHIVE_NAME = "kubectl-karmada.tar.gz"
MEMBERS = (("kubectl-karmada", 0o755), ("LICENSE", 0o644))


def archive_bytes() -> bytes:
    """The tar.gz, byte for byte the same on every machine."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, mode in MEMBERS:
            data = (HERE / name).read_bytes()
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), mode, 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    packed = io.BytesIO()
    with gzip.GzipFile(fileobj=packed, mode="wb", mtime=0, filename="") as gz:
        gz.write(raw.getvalue())
    return packed.getvalue()


def manifest_sha256s(text: str) -> list[str]:
    """Every platform's ``sha256`` in the manifest text."""
    return re.findall(r"^\s*sha256:\s*\"?([0-9a-f]+)\"?\s*$", text, re.MULTILINE)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare with karmada.yaml instead of writing")
    args = parser.parse_args()
    data = archive_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if args.check:
        wrong = [s for s in manifest_sha256s((HERE / "karmada.yaml").read_text(encoding="utf-8")) if s != digest]
        if wrong:
            print(f"error: karmada.yaml has sha256 {wrong[0]}, the archive is {digest}", file=sys.stderr)
            return 1
        return 0
    out = HERE.parent / "build" / ARCHIVE_NAME  # build/ is git-ignored
    out.parent.mkdir(exist_ok=True)
    out.write_bytes(data)
    print(f"{out}\nsha256: {digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
