"""What happens to decisions after they are made: kept claims deleted when their verification's
``retention_days`` have passed, and VERIFIED individuals' credentials checked again against
their status lists while the claims are kept. Run by the job queue on a schedule."""
