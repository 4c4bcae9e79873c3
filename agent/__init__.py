"""The member-cluster agent: registers its cluster, heartbeats with a Lease, and
pulls and applies its Works over outbound HTTPS only."""
