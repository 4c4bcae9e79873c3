"""Each package's ``__all__`` names exactly what it exports (httpx's habit)."""

from __future__ import annotations

import importlib

import pytest

PACKAGES = ["karmada", "karmada.api", "karmada.overrides", "karmada.pki", "karmada.validation", "manifests"]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_honest(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert len(set(exported)) == len(exported)
    for symbol in exported:
        assert hasattr(module, symbol), f"{name}.__all__ names missing {symbol}"
    public = {
        attr
        for attr, value in vars(module).items()
        if not attr.startswith("_")
        and getattr(value, "__module__", "").startswith(name)
        and not isinstance(value, type(module))
    }
    assert public <= set(exported), f"{name} exports undeclared names: {sorted(public - set(exported))}"


@pytest.mark.parametrize("name", ["karmada.api", "karmada.overrides", "karmada.pki"])
def test_a_lazy_package_refuses_an_unknown_name_as_a_module_does(name: str) -> None:
    module = importlib.import_module(name)
    with pytest.raises(AttributeError, match=f"module '{name}' has no attribute 'nothing_here'"):
        module.nothing_here  # noqa: B018
