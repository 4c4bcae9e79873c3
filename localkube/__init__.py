"""A single-process Kubernetes API server for laptops and CI.

localkube imports nothing from the rest of this project: it is a Kubernetes
API server, not a Karmada component, and the real kubectl is its judge.
"""

__version__ = "0.1.0"
