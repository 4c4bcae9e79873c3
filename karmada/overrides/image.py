"""Container image references: parse, change one component, print.

Follows the Docker distribution grammar Karmada uses
(``[registry/]repository[:tag][@digest]``). As in Karmada, a reference with
both a tag and a digest keeps only the tag; the registry is the first path
component when it contains ``.`` or ``:`` or is ``localhost``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ALNUM = r"[a-z0-9]+"
_SEPARATOR = r"(?:[._]|__|[-]+)"
_PATH_COMPONENT = rf"{_ALNUM}(?:{_SEPARATOR}{_ALNUM})*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9a-fA-F]{32,}"
_REFERENCE = re.compile(
    rf"^(?P<name>(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*)"
    rf"(?::(?P<tag>{_TAG}))?(?:@(?P<digest>{_DIGEST}))?$"
)
_ANCHORED_TAG = re.compile(rf"^{_TAG}$")
_ANCHORED_DIGEST = re.compile(rf"^{_DIGEST}$")
NAME_TOTAL_LENGTH_MAX = 255


class ImageError(ValueError):
    """Not a valid image reference."""


@dataclass
class Image:
    """The components of an image reference."""

    registry: str
    repository: str
    tag: str = ""
    digest: str = ""

    def __str__(self) -> str:
        full = f"{self.registry}/{self.repository}" if self.registry else self.repository
        if self.tag:
            return f"{full}:{self.tag}"
        if self.digest:
            return f"{full}@{self.digest}"
        return full

    @property
    def tag_or_digest(self) -> str:
        """The tag, else the digest."""
        return self.tag or self.digest

    def set_tag_or_digest(self, value: str) -> None:
        """A tag-shaped value sets the tag, a digest-shaped one the digest; others are ignored."""
        if _ANCHORED_TAG.match(value):
            self.tag, self.digest = value, ""
        elif _ANCHORED_DIGEST.match(value):
            self.digest, self.tag = value, ""

    def remove_tag_or_digest(self) -> None:
        """Drop the tag if there is one, else the digest."""
        if self.tag:
            self.tag = ""
        else:
            self.digest = ""


def parse_image(reference: str) -> Image:
    """Split an image reference; raises :class:`ImageError` when it is malformed."""
    match = _REFERENCE.match(reference)
    if not match:
        if reference and reference.lower() != reference and _REFERENCE.match(reference.lower()):
            raise ImageError(f"repository name must be lowercase: {reference!r}")
        raise ImageError(f"invalid reference format: {reference!r}")
    name = match.group("name")
    if len(name) > NAME_TOTAL_LENGTH_MAX:
        raise ImageError(f"repository name must not be more than {NAME_TOTAL_LENGTH_MAX} characters")
    first, slash, rest = name.partition("/")
    if slash and (any(ch in first for ch in ".:") or first == "localhost"):
        registry, repository = first, rest
    else:
        registry, repository = "", name
    tag = match.group("tag") or ""
    return Image(registry, repository, tag, "" if tag else match.group("digest") or "")


def override_image(reference: str, component: str, operator: str, value: str) -> str:
    """Apply one image overrider to a reference (Karmada's ``overrideImage``)."""
    image = parse_image(reference)
    if component == "Registry":
        if operator == "add":
            image.registry += value
        elif operator == "replace":
            image.registry = value
        elif operator == "remove":
            image.registry = ""
    elif component == "Repository":
        if operator == "add":
            image.repository += value
        elif operator == "replace":
            image.repository = value
        elif operator == "remove":
            image.repository = ""
    elif component == "Tag":
        if operator == "add":
            image.set_tag_or_digest(image.tag_or_digest + value)
        elif operator == "replace":
            image.set_tag_or_digest(value)
        elif operator == "remove":
            image.remove_tag_or_digest()
    return str(image)
