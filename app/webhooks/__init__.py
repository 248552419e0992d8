"""Signed webhooks: endpoints an organization registers, events written in the same
transaction as the change that causes them (an outbox), and their deliveries."""
