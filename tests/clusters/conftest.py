"""Fixtures for capture tests: a test Kubernetes API server and a cluster registered for it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dradash.clusters.models import Cluster
from dradash.clusters.services import cluster_register
from tests.kubeapi import KubeAPIServer


@pytest.fixture
def kube_api() -> Iterator[KubeAPIServer]:
    """The test API server, serving tests.kubeapi.fixture_objects()."""
    with KubeAPIServer() as api:
        yield api


@pytest.fixture
def kubeconfig(kube_api: KubeAPIServer, tmp_path: Path) -> Path:
    return kube_api.kubeconfig(tmp_path / "kubeconfig", context="test")


@pytest.fixture
def cluster(db: None, kubeconfig: Path, settings) -> Cluster:
    """A cluster registered for capture, with fast retries against the test server."""
    settings.DRADASH_CAPTURE_REQUEST_TIMEOUT = 5
    registered, _ = cluster_register(name="prod", kubeconfig_path=str(kubeconfig), context="test")
    return registered
