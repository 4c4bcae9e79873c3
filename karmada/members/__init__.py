"""Working a member cluster from outside it: applying its Works, reflecting
their status, and reporting its health and summaries on its Cluster. The
pull-mode agent (``agent/``) runs this for its own cluster; the control plane
(``controlplane/push_*.py``) runs it for each Push cluster it can reach."""
