"""Trust sources an organization keeps: PEM anchors, ETSI trusted lists (and the EU List of
Trusted Lists), Lists of Trusted Entities and VICALs, refreshed by a job, the last good copy
kept. ``app.trust.lists`` reads the lists; this package fetches, keeps and serves them."""
