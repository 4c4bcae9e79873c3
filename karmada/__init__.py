"""The library shared by the control plane, the agent and the kubectl plugin.

``karmada.api`` holds Karmada's API as typed models; later packages add the
Kubernetes plumbing (``karmada.kube``), per-kind knowledge
(``karmada.interpreter``) and PKI (``karmada.pki``).
"""

from karmada.version import __version__

__all__ = ["__version__"]
