"""Idempotency keys on the JSON creates: a retried create returns the first answer."""
