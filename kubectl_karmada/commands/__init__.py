"""One module per command group; each exposes ``add(subparsers)``.

Command modules import only argparse-level helpers at load time; the library
(pydantic, aiohttp, cryptography) is imported inside each command's run
function, so ``--help`` and argument errors answer in well under 100 ms.
"""
