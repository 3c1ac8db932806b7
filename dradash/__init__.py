"""dradash: a dashboard for Kubernetes Dynamic Resource Allocation.

The Celery app (dradash.celery) is loaded by the snapshots app when Django starts, not here,
so that the pure core (dradash.dra) imports without Django or Celery.
"""
