"""Live event streams: an organization's event log read as Server-Sent Events."""
