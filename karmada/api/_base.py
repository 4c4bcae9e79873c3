"""The base of every API model, and the small typed vocabulary the models share.

Models are wire-first: they validate the JSON Kubernetes stores and serialise
back exactly what they were given. Three rules make that hold:

* Fields are read and written by their JSON names (``apiVersion``,
  ``proxyURL``); Python code may also use the snake_case names.
* Serialisation (:meth:`KubeModel.to_dict`) emits only fields that were set,
  drops fields set to ``None`` (Go's ``omitempty`` on pointers: a null and an
  absent field mean the same to the API server), and keeps unknown fields, so
  an object written by a newer Karmada survives a read-modify-write.
* Validation is strict, as the API server's schema check is: ``"5"`` is not an
  integer and ``1`` is not a string.

The annotations below (:class:`Format`, :class:`CRDExtra`, :func:`crd_default`
and the special types) carry what the CRD generator needs to emit the same
OpenAPI schema Karmada ships; pydantic ignores them or enforces them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    PlainValidator,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import CoreSchema, core_schema

from karmada.api.errors import APIValidationError, FieldError, from_pydantic


@dataclass(frozen=True)
class Format:
    """The OpenAPI ``format`` of a field (``int32``, ``int64``, ``date-time``)."""

    name: str


@dataclass(frozen=True, eq=False)  # identity hash: typing hashes Annotated metadata
class CRDExtra:
    """Extra OpenAPI keywords for one field's schema (list/map types, bounds)."""

    keywords: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Pattern:
    """A regular expression a string must match; validated, and emitted as ``pattern``.

    ``what`` names the expected form in error messages ("a CamelCase reason").
    """

    regex: str
    what: str

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        check = _check_pattern(self.regex, self.what)
        return core_schema.no_info_after_validator_function(check, handler(source))


@dataclass(frozen=True)
class PreserveUnknown:
    """Free-form JSON: the schema keeps whatever is inside.

    ``object_only`` emits ``type: object`` too (``runtime.RawExtension``);
    otherwise any JSON value is allowed (``apiextensionsv1.JSON``).
    """

    object_only: bool


@dataclass(frozen=True)
class IntOrString:
    """Marks a quantity: ``x-kubernetes-int-or-string`` with Kubernetes' pattern."""


CRD_DEFAULT_KEY = "x-crd-default"


def crd_default(value: Any) -> Any:
    """A field default that the CRD schema also declares.

    The API server fills these in on create, so a controller reading the field
    of an object that lacks it sees the same value it would after a round trip
    through the server. Fields without this marker have no schema default even
    when the Python attribute has one.
    """
    return Field(default=value, json_schema_extra={CRD_DEFAULT_KEY: True})


def _check_pattern(regex: str, what: str) -> Any:
    compiled = re.compile(regex)

    def check(value: str) -> str:
        if not compiled.fullmatch(value):
            raise ValueError(f"must match {what}")
        return value

    return check


# Kubernetes' resource.Quantity: an integer, or a string such as "100m", "1Gi", "1e3".
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
    r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
_QUANTITY_RE = re.compile(QUANTITY_PATTERN)


def _validate_quantity(value: object) -> int | str:
    if isinstance(value, bool):
        raise ValueError("must be a quantity (an integer or a string such as 100m or 1Gi)")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _QUANTITY_RE.match(value):
        return value
    raise ValueError("must be a quantity (an integer or a string such as 100m or 1Gi)")


Quantity = Annotated[int | str, IntOrString(), PlainValidator(_validate_quantity)]
"""A Kubernetes quantity, kept exactly as written (``100m`` stays ``100m``)."""

ResourceList = dict[str, Quantity]
"""``corev1.ResourceList``: resource name to quantity."""


def _in_range(bits: int) -> Any:
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1

    def check(value: int) -> int:
        if not low <= value <= high:
            raise ValueError(f"must fit in a {bits}-bit signed integer")
        return value

    return check


# Range checks are validators, not Field(ge=...), so that the CRD generator
# emits minimum/maximum only where a field declares them itself.
Int32 = Annotated[int, Format("int32"), AfterValidator(_in_range(32))]
Int64 = Annotated[int, Format("int64"), AfterValidator(_in_range(64))]

# RFC 3339 timestamps stay strings so they round-trip byte for byte.
Time = Annotated[
    str,
    Format("date-time"),
    AfterValidator(
        _check_pattern(
            r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})",
            "an RFC 3339 date-time such as 2024-01-02T15:04:05Z",
        )
    ),
]

RawJSON = Annotated[Any, PreserveUnknown(object_only=False)]
"""Any JSON value, preserved verbatim (``apiextensionsv1.JSON``)."""

RawObject = Annotated[dict[str, Any], PreserveUnknown(object_only=True)]
"""A JSON object preserved verbatim (``runtime.RawExtension``), e.g. a manifest."""


class KubeModel(BaseModel):
    """Base of every API struct: JSON names, strict types, lossless round trip."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=True,
        serialize_by_alias=True,
        extra="allow",
        strict=True,
        loc_by_alias=True,
        # a field's docstring is its description: the CRDs carry Karmada's API docs, which
        # ``kubectl explain`` shows
        use_attribute_docstrings=True,
    )

    # Extra OpenAPI keywords for this struct's schema (e.g. atomic map type).
    crd_extra: ClassVar[dict[str, Any]] = {}

    @model_serializer(mode="wrap")
    def _omit_none(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if not isinstance(data, dict):
            return data
        for name, info in type(self).model_fields.items():
            key = info.alias or name
            if key in data and data[key] is None:
                del data[key]
        return data

    @classmethod
    def from_dict(cls, data: Any, *, path: str = "") -> Self:
        """Validate JSON data; errors name each bad field by its JSON path.

        ``path`` prefixes every error path, for models validated as part of a
        larger object (``spec.placement``).
        """
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise from_pydantic(exc, prefix=path) from None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: only what was set, by JSON names, unknown fields kept."""
        result: dict[str, Any] = self.model_dump(mode="json", exclude_unset=True)
        return result

    def unknown_fields(self, path: str = "") -> list[str]:
        """JSON paths of fields this model does not know (kept, but not typed).

        The API server prunes these from Karmada's CRDs, so a user's YAML that
        has any is most likely a typo; callers that want kubectl's strict field
        validation turn them into errors.
        """
        found: list[str] = [_join(path, key) for key in (self.model_extra or {})]
        for name, info in type(self).model_fields.items():
            found.extend(_unknown_in(getattr(self, name), _join(path, info.alias or name)))
        return found


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _unknown_in(value: Any, path: str) -> list[str]:
    if isinstance(value, KubeModel):
        return value.unknown_fields(path)
    if isinstance(value, list):
        return [p for i, item in enumerate(value) for p in _unknown_in(item, f"{path}[{i}]")]
    if isinstance(value, dict):
        return [p for key, item in value.items() for p in _unknown_in(item, f"{path}.{key}")]
    return []


def reject_unknown_fields(model: KubeModel, path: str = "") -> None:
    """Raise :class:`APIValidationError` if ``model`` carries unknown fields."""
    unknown = model.unknown_fields(path)
    if unknown:
        raise APIValidationError([FieldError(p, "unknown field") for p in unknown])


class KubeObject(KubeModel):
    """A top-level kind: ``apiVersion`` and ``kind`` are always serialised.

    Subclasses declare ``api_version``, ``kind`` (as one-value literals with
    defaults, so Python code need not repeat them), ``metadata`` and their own
    fields.
    """

    @model_validator(mode="after")
    def _always_typed(self) -> Self:
        self.__pydantic_fields_set__.update(("api_version", "kind"))
        return self
