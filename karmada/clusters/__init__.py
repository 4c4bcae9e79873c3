"""Pure rules about Cluster objects: the defaults and mutations Karmada's
aggregated API server applies, conditions, taints (kubectl syntax, cordon,
the automatic not-ready/unreachable taints), and the status an agent reports.
Functions take and return plain dicts (the wire form) and never do I/O."""
