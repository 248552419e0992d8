"""Running several Verity instances behind nginx (deploy/cluster.py, deploy/nginx/)."""
