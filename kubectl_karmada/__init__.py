"""The kubectl plugin (``kubectl karmada ...``): argument parsing and output only;
the work each command starts lives in ``karmada``, ``controlplane`` and ``agent``."""
