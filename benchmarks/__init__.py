"""Benchmarks for dradash: a synthetic cluster generator and scripts that time the core on it."""

from __future__ import annotations
