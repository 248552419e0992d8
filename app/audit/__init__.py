"""The audit trail: who changed which record, when and from where (append-only)."""
