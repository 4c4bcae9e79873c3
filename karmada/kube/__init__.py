"""The Kubernetes plumbing every program shares: configuration, one async HTTP
client, resources by kind, watch caches, work queues, leader election, events.

This is the only package that talks HTTP to API servers.
"""

from karmada.kube.client import KubeClient, KubeError, Request, object_path
from karmada.kube.config import (
    ClusterConfig,
    ConfigError,
    Credentials,
    from_kubeconfig,
    from_kubeconfig_bytes,
    in_cluster,
)
from karmada.kube.events import EventRecorder
from karmada.kube.informer import Informer
from karmada.kube.leaderelection import LeaderElector
from karmada.kube.resources import Resource, ResourceMapper, UnknownKind
from karmada.kube.workqueue import ShutDown, WorkQueue

__all__ = [
    "ClusterConfig",
    "ConfigError",
    "Credentials",
    "EventRecorder",
    "Informer",
    "KubeClient",
    "KubeError",
    "LeaderElector",
    "Request",
    "Resource",
    "ResourceMapper",
    "ShutDown",
    "UnknownKind",
    "WorkQueue",
    "from_kubeconfig",
    "from_kubeconfig_bytes",
    "in_cluster",
    "object_path",
]
