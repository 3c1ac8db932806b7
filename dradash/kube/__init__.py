"""Live capture from a Kubernetes API server (no Django imports): client, discovery, capture."""

from __future__ import annotations
