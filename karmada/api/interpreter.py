"""``config.karmada.io/v1alpha1`` ResourceInterpreterCustomization and
ResourceInterpreterWebhookConfiguration, and the dependency reference type the
interpreter returns."""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import Field

from karmada.api._base import Format, Int32, KubeModel, KubeObject
from karmada.api.meta import LabelSelector, ObjectMeta

CONFIG_GROUP_VERSION: Final = "config.karmada.io/v1alpha1"


class CustomizationTarget(KubeModel):
    """The kind the customization applies to."""

    api_version: str
    """APIVersion represents the API version of the target resource."""
    kind: str
    """Kind represents the Kind of target resources."""


class LuaScript(KubeModel):
    """A Lua script that defines the rule's function (see Karmada's contracts)."""

    lua_script: str
    """LuaScript holds the Lua script that is used to retain runtime values
    to the desired specification.

    The script should implement a function as follows:

    ```
      luaScript: >
          function Retain(desiredObj, observedObj)
              desiredObj.spec.fieldFoo = observedObj.spec.fieldFoo
              return desiredObj
          end
    ```

    The content of the LuaScript needs to be a whole function including both
    declaration and implementation.

    The parameters will be supplied by the system:
      - desiredObj: the object represents the configuration to be applied
          to the member cluster.
      - observedObj: the object represents the configuration that is observed
          from a specific member cluster.

    The returned object should be a retained configuration which will be
    applied to member cluster eventually.
    """


class CustomizationRules(KubeModel):
    """One optional Lua script per interpreter operation."""

    retention: LuaScript | None = None
    """Retention describes the desired behavior that Karmada should react on
    the changes made by member cluster components. This avoids system
    running into a meaningless loop that Karmada resource controller and
    the member cluster component continually applying opposite values of a field.
    For example, the "replicas" of Deployment might be changed by the HPA
    controller on member cluster. In this case, Karmada should retain the "replicas"
    and not try to change it.
    """
    replica_resource: LuaScript | None = None
    """ReplicaResource describes the rules for Karmada to discover the resource's
    replica as well as resource requirements.
    It would be useful for those CRD resources that declare workload types like
    Deployment.
    It is usually not needed for Kubernetes native resources(Deployment, Job) as
    Karmada knows how to discover info from them. But if it is set, the built-in
    discovery rules will be ignored.
    """
    component_resource: LuaScript | None = None
    """ComponentResource describes the rules for Karmada to discover the resource requirements
    for multiple components from the given object.
    This is designed for CRDs with multiple components (e.g., FlinkDeployment), but
    can also be used for single-component resources like Deployment.
    If implemented, the controller will use this to obtain per-component replica and resource
    requirements, and will not call ReplicaResource.
    If not implemented, the controller will fall back to ReplicaResource for backward compatibility.
    This will only be used when the feature gate 'MultiplePodTemplatesScheduling' is enabled.
    """
    replica_revision: LuaScript | None = None
    """ReplicaRevision describes the rules for Karmada to revise the resource's replica.
    It would be useful for those CRD resources that declare workload types like
    Deployment.
    It is usually not needed for Kubernetes native resources(Deployment, Job) as
    Karmada knows how to revise replicas for them. But if it is set, the built-in
    revision rules will be ignored.
    """
    status_reflection: LuaScript | None = None
    """StatusReflection describes the rules for Karmada to pick the resource's status.
    Karmada provides built-in rules for several standard Kubernetes types, see:
    https://karmada.io/docs/userguide/globalview/customizing-resource-interpreter/#interpretstatus
    If StatusReflection is set, the built-in rules will be ignored.
    """
    status_aggregation: LuaScript | None = None
    """StatusAggregation describes the rules for Karmada to aggregate status
    collected from member clusters to resource template.
    Karmada provides built-in rules for several standard Kubernetes types, see:
    https://karmada.io/docs/userguide/globalview/customizing-resource-interpreter/#aggregatestatus
    If StatusAggregation is set, the built-in rules will be ignored.
    """
    health_interpretation: LuaScript | None = None
    """HealthInterpretation describes the health assessment rules by which Karmada
    can assess the health state of the resource type.
    """
    dependency_interpretation: LuaScript | None = None
    """DependencyInterpretation describes the rules for Karmada to analyze the
    dependent resources.
    Karmada provides built-in rules for several standard Kubernetes types, see:
    https://karmada.io/docs/userguide/globalview/customizing-resource-interpreter/#interpretdependency
    If DependencyInterpretation is set, the built-in rules will be ignored.
    """


class ResourceInterpreterCustomizationSpec(KubeModel):
    """Target kind and its scripts."""

    target: CustomizationTarget
    """CustomizationTarget represents the resource type that the customization applies to."""
    customizations: CustomizationRules
    """Customizations describe the interpretation rules."""


class ResourceInterpreterCustomization(KubeObject):
    """Teaches Karmada about a kind with Lua: replicas, health, status, dependencies..."""

    api_version: Literal["config.karmada.io/v1alpha1"] = CONFIG_GROUP_VERSION
    """APIVersion defines the versioned schema of this representation of an object.
    Servers should convert recognized schemas to the latest internal value, and
    may reject unrecognized values.
    More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources
    """
    kind: Literal["ResourceInterpreterCustomization"] = "ResourceInterpreterCustomization"
    """Kind is a string value representing the REST resource this object represents.
    Servers may infer this from the endpoint the client submits requests to.
    Cannot be updated.
    In CamelCase.
    More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds
    """
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: ResourceInterpreterCustomizationSpec
    """Spec describes the configuration in detail."""


class DependentObjectReference(KubeModel):
    """An object a workload depends on: by name, or by labelSelector when name is empty."""

    api_version: str
    kind: str
    namespace: str | None = None
    name: str | None = None
    label_selector: LabelSelector | None = None


class ServiceReference(KubeModel):
    """A Service exposing a webhook (admissionregistration.k8s.io/v1 ServiceReference)."""

    namespace: str
    """namespace is the namespace of the service."""
    name: str
    """name is the name of the service."""
    path: str | None = None
    """path is an optional URL path which will be sent in any request to
    this service."""
    port: Int32 | None = None
    """port is the port on the service that hosts the webhook. Default to 443."""


class WebhookClientConfig(KubeModel):
    """How to reach a webhook: a URL or a Service, and the CA that signed its certificate."""

    url: str | None = None
    """url gives the location of the webhook, in standard URL form
    (`scheme://host:port/path`). Exactly one of `url` or `service`
    must be specified."""
    service: ServiceReference | None = None
    """service is a reference to the service for this webhook. Either
    `service` or `url` must be specified."""
    ca_bundle: Annotated[str, Format("byte")] | None = None
    """caBundle is a PEM encoded CA bundle which will be used to validate the webhook's server certificate.
    If unspecified, system trust roots on the apiserver are used."""


class RuleWithOperations(KubeModel):
    """The operations and the kinds a webhook answers for."""

    operations: list[str]
    """Operations is the operations the hook cares about.
    If '*' is present, the length of the slice must be one."""
    api_groups: list[str]
    """APIGroups is the API groups the resources belong to. '*' is all groups.
    If '*' is present, the length of the slice must be one."""
    api_versions: list[str]
    """APIVersions is the API versions the resources belong to. '*' is all versions.
    If '*' is present, the length of the slice must be one."""
    kinds: list[str]
    """Kinds is a list of resources this rule applies to.
    If '*' is present, the length of the slice must be one."""


class ResourceInterpreterWebhook(KubeModel):
    """One interpreter webhook and the operations and kinds it answers for."""

    name: str
    """Name is the full-qualified name of the webhook."""
    client_config: WebhookClientConfig
    """ClientConfig defines how to communicate with the hook (a URL, or a Service,
    which takes precedence when both are set)."""
    rules: list[RuleWithOperations] | None = None
    """Rules describes what operations on what resources the webhook cares about.
    The webhook cares about an operation if it matches any Rule."""
    timeout_seconds: Int32 | None = None
    """TimeoutSeconds specifies the timeout for this webhook.
    The timeout value must be between 1 and 30 seconds.
    Default to 10 seconds."""
    interpreter_context_versions: list[str]
    """InterpreterContextVersions is an ordered list of preferred `ResourceInterpreterContext`
    versions the Webhook expects. Karmada will try to use first version in
    the list which it supports."""


class ResourceInterpreterWebhookConfiguration(KubeObject):
    """Interpreter webhooks: a user's service answering interpreter operations for some kinds."""

    api_version: Literal["config.karmada.io/v1alpha1"] = CONFIG_GROUP_VERSION
    """APIVersion defines the versioned schema of this representation of an object.
    Servers should convert recognized schemas to the latest internal value, and
    may reject unrecognized values.
    More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources
    """
    kind: Literal["ResourceInterpreterWebhookConfiguration"] = "ResourceInterpreterWebhookConfiguration"
    """Kind is a string value representing the REST resource this object represents.
    Servers may infer this from the endpoint the client submits requests to.
    Cannot be updated.
    In CamelCase.
    More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds
    """
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    webhooks: list[ResourceInterpreterWebhook]
    """Webhooks is a list of webhooks and the affected resources and operations."""
