"""Per-cluster overrides: which rules apply, and each overrider's exact effect."""

from karmada.overrides.engine import (
    AppliedRule,
    OverrideError,
    OverrideResult,
    apply_overrides,
    matching_rules,
)
from karmada.overrides.image import Image, ImageError, override_image, parse_image
from karmada.overrides.jsonpatch import Operation, PatchError, apply_patch

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
