"""The one customization-aware interpreter the control plane's controllers share.

It follows the ResourceInterpreterCustomizations through the shared informer,
so a customization applied, changed or deleted takes effect on the next
interpretation, with no restart.
"""

from __future__ import annotations

from weakref import WeakKeyDictionary

from karmada.interpreter.customized import CustomizedInterpreter
from karmada.kube.informer_factory import InformerFactory
from karmada.kube.resources import RESOURCE_INTERPRETER_CUSTOMIZATIONS

_shared: WeakKeyDictionary[InformerFactory, CustomizedInterpreter] = WeakKeyDictionary()


def interpreter_for(informers: InformerFactory) -> CustomizedInterpreter:
    """The interpreter of this control plane (made, and its customizations watched, on first use)."""
    found = _shared.get(informers)
    if found is None:
        found = CustomizedInterpreter()
        found.watched = informers.informer(RESOURCE_INTERPRETER_CUSTOMIZATIONS)
        found.watched.add_handler(found.on_event)
        _shared[informers] = found
    return found
