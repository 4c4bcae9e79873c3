"""``config.karmada.io/v1alpha1`` ResourceInterpreterCustomization, and the
dependency reference type the interpreter returns."""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field

from karmada.api._base import KubeModel, KubeObject
from karmada.api.meta import LabelSelector, ObjectMeta

CONFIG_GROUP_VERSION: Final = "config.karmada.io/v1alpha1"


class CustomizationTarget(KubeModel):
    """The kind the customization applies to."""

    api_version: str
    kind: str


class LuaScript(KubeModel):
    """A Lua script that defines the rule's function (see Karmada's contracts)."""

    lua_script: str


class CustomizationRules(KubeModel):
    """One optional Lua script per interpreter operation."""

    retention: LuaScript | None = None
    replica_resource: LuaScript | None = None
    component_resource: LuaScript | None = None
    replica_revision: LuaScript | None = None
    status_reflection: LuaScript | None = None
    status_aggregation: LuaScript | None = None
    health_interpretation: LuaScript | None = None
    dependency_interpretation: LuaScript | None = None


class ResourceInterpreterCustomizationSpec(KubeModel):
    """Target kind and its scripts."""

    target: CustomizationTarget
    customizations: CustomizationRules


class ResourceInterpreterCustomization(KubeObject):
    """Teaches Karmada about a kind with Lua: replicas, health, status, dependencies..."""

    api_version: Literal["config.karmada.io/v1alpha1"] = CONFIG_GROUP_VERSION
    kind: Literal["ResourceInterpreterCustomization"] = "ResourceInterpreterCustomization"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: ResourceInterpreterCustomizationSpec


class DependentObjectReference(KubeModel):
    """An object a workload depends on: by name, or by labelSelector when name is empty."""

    api_version: str
    kind: str
    namespace: str | None = None
    name: str | None = None
    label_selector: LabelSelector | None = None
