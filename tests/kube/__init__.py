"""Tests of the live capture core (dradash/kube/) against the test API server (tests/kubeapi.py)."""

from __future__ import annotations
