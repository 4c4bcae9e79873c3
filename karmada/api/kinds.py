"""Every Karmada kind we serve: its model and its REST identity.

One table drives CRD generation, the CLI's printing and the controllers'
resource access, so a kind's plural or short name is written down once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from karmada.api._base import KubeObject
from karmada.api.binding import ClusterResourceBinding, ResourceBinding
from karmada.api.cluster import Cluster
from karmada.api.interpreter import ResourceInterpreterCustomization, ResourceInterpreterWebhookConfiguration
from karmada.api.override import ClusterOverridePolicy, OverridePolicy
from karmada.api.policy import ClusterPropagationPolicy, PropagationPolicy
from karmada.api.taint_policy import ClusterTaintPolicy
from karmada.api.work import Work

Scope = Literal["Namespaced", "Cluster"]

KARMADA_CATEGORY = "karmada-io"


@dataclass(frozen=True)
class PrinterColumn:
    """An ``additionalPrinterColumns`` entry (priority 1 = only with ``-o wide``)."""

    name: str
    json_path: str
    type: str = "string"
    priority: int = 0


AGE = PrinterColumn("AGE", ".metadata.creationTimestamp", "date")


@dataclass(frozen=True)
class KindInfo:
    """A kind's model and how the API server serves it."""

    model: type[KubeObject]
    group: str
    version: str
    kind: str
    plural: str
    scope: Scope
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    status_subresource: bool = False
    printer_columns: tuple[PrinterColumn, ...] = field(default_factory=tuple)

    @property
    def api_version(self) -> str:
        """``group/version``."""
        return f"{self.group}/{self.version}"

    @property
    def singular(self) -> str:
        """The lower-case kind, as Kubernetes derives it."""
        return self.kind.lower()

    @property
    def crd_name(self) -> str:
        """``<plural>.<group>``, the CRD's object name."""
        return f"{self.plural}.{self.group}"

    @property
    def namespaced(self) -> bool:
        """Whether objects of this kind live in a namespace."""
        return self.scope == "Namespaced"


def _condition_column(name: str, condition: str) -> PrinterColumn:
    return PrinterColumn(name, f'.status.conditions[?(@.type=="{condition}")].status')


_POLICY_COLUMNS = (
    PrinterColumn("CONFLICT-RESOLUTION", ".spec.conflictResolution"),
    PrinterColumn("PRIORITY", ".spec.priority"),
    AGE,
)
_BINDING_COLUMNS = (
    _condition_column("SCHEDULED", "Scheduled"),
    _condition_column("FULLYAPPLIED", "FullyApplied"),
    AGE,
)

KINDS: tuple[KindInfo, ...] = (
    KindInfo(
        Cluster,
        "cluster.karmada.io",
        "v1alpha1",
        "Cluster",
        "clusters",
        "Cluster",
        status_subresource=True,
        printer_columns=(
            PrinterColumn("VERSION", ".status.kubernetesVersion"),
            PrinterColumn("MODE", ".spec.syncMode"),
            _condition_column("READY", "Ready"),
            AGE,
            PrinterColumn("ZONES", ".spec.zones", priority=1),
            PrinterColumn("REGION", ".spec.region", priority=1),
            PrinterColumn("PROVIDER", ".spec.provider", priority=1),
            PrinterColumn("API-ENDPOINT", ".spec.apiEndpoint", priority=1),
            PrinterColumn("PROXY-URL", ".spec.proxyURL", priority=1),
        ),
    ),
    KindInfo(
        PropagationPolicy,
        "policy.karmada.io",
        "v1alpha1",
        "PropagationPolicy",
        "propagationpolicies",
        "Namespaced",
        ("pp",),
        (KARMADA_CATEGORY,),
        printer_columns=_POLICY_COLUMNS,
    ),
    KindInfo(
        ClusterPropagationPolicy,
        "policy.karmada.io",
        "v1alpha1",
        "ClusterPropagationPolicy",
        "clusterpropagationpolicies",
        "Cluster",
        ("cpp",),
        (KARMADA_CATEGORY,),
        printer_columns=_POLICY_COLUMNS,
    ),
    KindInfo(
        OverridePolicy,
        "policy.karmada.io",
        "v1alpha1",
        "OverridePolicy",
        "overridepolicies",
        "Namespaced",
        ("op",),
        (KARMADA_CATEGORY,),
    ),
    KindInfo(
        ClusterOverridePolicy,
        "policy.karmada.io",
        "v1alpha1",
        "ClusterOverridePolicy",
        "clusteroverridepolicies",
        "Cluster",
        ("cop",),
        (KARMADA_CATEGORY,),
    ),
    KindInfo(
        ClusterTaintPolicy,
        "policy.karmada.io",
        "v1alpha1",
        "ClusterTaintPolicy",
        "clustertaintpolicies",
        "Cluster",
    ),
    KindInfo(
        ResourceBinding,
        "work.karmada.io",
        "v1alpha2",
        "ResourceBinding",
        "resourcebindings",
        "Namespaced",
        ("rb",),
        (KARMADA_CATEGORY,),
        status_subresource=True,
        printer_columns=_BINDING_COLUMNS,
    ),
    KindInfo(
        ClusterResourceBinding,
        "work.karmada.io",
        "v1alpha2",
        "ClusterResourceBinding",
        "clusterresourcebindings",
        "Cluster",
        ("crb",),
        (KARMADA_CATEGORY,),
        status_subresource=True,
        printer_columns=_BINDING_COLUMNS,
    ),
    KindInfo(
        Work,
        "work.karmada.io",
        "v1alpha1",
        "Work",
        "works",
        "Namespaced",
        ("wk",),
        (KARMADA_CATEGORY,),
        status_subresource=True,
        printer_columns=(
            PrinterColumn("WORKLOAD-KIND", ".spec.workload.manifests[*].kind"),
            _condition_column("APPLIED", "Applied"),
            AGE,
        ),
    ),
    KindInfo(
        ResourceInterpreterCustomization,
        "config.karmada.io",
        "v1alpha1",
        "ResourceInterpreterCustomization",
        "resourceinterpretercustomizations",
        "Cluster",
        ("ric",),
        (KARMADA_CATEGORY,),
        printer_columns=(
            PrinterColumn("TARGET-API-VERSION", ".spec.target.apiVersion"),
            PrinterColumn("TARGET-KIND", ".spec.target.kind"),
            AGE,
        ),
    ),
    KindInfo(
        ResourceInterpreterWebhookConfiguration,
        "config.karmada.io",
        "v1alpha1",
        "ResourceInterpreterWebhookConfiguration",
        "resourceinterpreterwebhookconfigurations",
        "Cluster",
        (),
        (KARMADA_CATEGORY,),
    ),
)

_BY_GVK = {(k.api_version, k.kind): k for k in KINDS}


def kind_info(api_version: str, kind: str) -> KindInfo | None:
    """The served kind with this apiVersion and kind, if it is one of Karmada's."""
    return _BY_GVK.get((api_version, kind))
