"""Karmada's cluster proxy (``/apis/cluster.karmada.io/v1alpha1/clusters/NAME/proxy/...``):
who the caller is (:mod:`.callers`), whether they may reach the cluster
(:mod:`.access`), and the HTTP server that forwards to a member through its
agent's tunnel or, for Push members, directly (:mod:`.server`)."""
