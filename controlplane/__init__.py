"""The Karmada control plane: detector, scheduler, binding, health, failover and
dependency controllers in one leader-elected asyncio process."""
