"""``kubectl karmada local``: a whole pull-mode Karmada on 127.0.0.1 from
local processes (localkube API servers, the control plane, one agent per
member), running in the background with its state, kubeconfigs and logs in
one directory."""

from pathlib import Path

DEFAULT_DIR = Path.home() / ".karmada-local"
"""Where ``local up`` keeps its state unless told otherwise: a directory of its own,
so no real kubeconfig is ever overwritten."""

__all__ = ["DEFAULT_DIR"]
