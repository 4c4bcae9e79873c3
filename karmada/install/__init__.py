"""Installing Karmada into a control-plane API server (``kubectl karmada init``)
and removing it again (``deinit``)."""

from karmada.install.init import FIELD_MANAGER, InitOptions, deinit, init

__all__ = ["FIELD_MANAGER", "InitOptions", "deinit", "init"]
