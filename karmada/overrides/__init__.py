"""Per-cluster overrides: which rules apply, and each overrider's exact effect."""

# Submodules load on first use: the agent needs only jsonpatch (for interpreter webhooks' patches),
# and the engine loads the pydantic API models.
from typing import TYPE_CHECKING

from karmada.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from karmada.overrides.engine import (
        AppliedRule,
        OverrideError,
        OverrideResult,
        apply_overrides,
        matching_rules,
    )
    from karmada.overrides.image import Image, ImageError, override_image, parse_image
    from karmada.overrides.jsonpatch import Operation, PatchError, apply_patch

_LAZY = {
    "AppliedRule": "karmada.overrides.engine",
    "OverrideError": "karmada.overrides.engine",
    "OverrideResult": "karmada.overrides.engine",
    "apply_overrides": "karmada.overrides.engine",
    "matching_rules": "karmada.overrides.engine",
    "Image": "karmada.overrides.image",
    "ImageError": "karmada.overrides.image",
    "override_image": "karmada.overrides.image",
    "parse_image": "karmada.overrides.image",
    "Operation": "karmada.overrides.jsonpatch",
    "PatchError": "karmada.overrides.jsonpatch",
    "apply_patch": "karmada.overrides.jsonpatch",
}


__getattr__ = lazy_exports(__name__, _LAZY)


__all__ = [
    "AppliedRule",
    "Image",
    "ImageError",
    "Operation",
    "OverrideError",
    "OverrideResult",
    "PatchError",
    "apply_overrides",
    "apply_patch",
    "matching_rules",
    "override_image",
    "parse_image",
]
