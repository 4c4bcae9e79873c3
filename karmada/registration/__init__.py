"""Pull-mode registration of member clusters: bootstrap tokens on the control
plane, discovery of the control plane through ``cluster-info``, and the
``register``/``unregister`` flows run against a member cluster."""
