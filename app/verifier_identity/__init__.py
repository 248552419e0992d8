"""Each organization's own verifier identity: its access certificate and registration."""
