"""``GET /metrics``: Prometheus text for each cluster's latest analysed snapshot (DESIGN "Metrics
and chat previews"), behind a bearer token; without DRADASH_METRICS_TOKEN it does not exist."""

from __future__ import annotations

import hmac
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.http import Http404, HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.http import require_safe
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.registry import Collector

from dradash.metrics.selectors import DEVICE_STATES, ClusterMetrics, cluster_metrics

# dradash_devices has a series per class and state: a cluster's MAX_DEVICE_CLASSES classes that
# admit the most devices keep theirs, the others are summed under device_class="(other)" (no
# DeviceClass has that name: they are DNS subdomains). 3,000 classes were 12,000 series.
MAX_DEVICE_CLASSES = 50
OTHER_CLASSES = "(other)"


def device_classes(classes: list[dict[str, Any]]) -> list[tuple[str, dict[str, int]]]:
    """(class name, devices per state) of the classes that admit the most devices, at most
    MAX_DEVICE_CLASSES in the inventory's order, then the rest summed as OTHER_CLASSES."""

    def size(cls: dict[str, Any]) -> int:
        return sum((cls.get("tally") or {}).get(state, 0) for state in DEVICE_STATES)

    ranked = sorted(range(len(classes)), key=lambda i: (-size(classes[i]), i))
    kept = set(ranked[:MAX_DEVICE_CLASSES])
    out = [(c.get("name", ""), c.get("tally") or {}) for i, c in enumerate(classes) if i in kept]
    rest = [classes[i].get("tally") or {} for i in ranked[MAX_DEVICE_CLASSES:]]
    if rest:
        out.append((OTHER_CLASSES, {s: sum(t.get(s, 0) for t in rest) for s in DEVICE_STATES}))
    return out


class SnapshotCollector(Collector):
    def __init__(self, clusters: list[ClusterMetrics], now: datetime) -> None:
        self.clusters = clusters
        self.now = now

    def collect(self) -> Iterator[Metric]:
        pods = GaugeMetricFamily(
            "dradash_pods",
            "Pods using DRA in the cluster's latest analysed snapshot, by stage and reason.",
            labels=["cluster", "stage", "reason"],
        )
        claims = GaugeMetricFamily(
            "dradash_claims",
            "ResourceClaims in the latest analysed snapshot, by stage (not those whose verdict "
            "is unknown: see dradash_claims_unknown).",
            labels=["cluster", "stage"],
        )
        claims_unknown = GaugeMetricFamily(
            "dradash_claims_unknown",
            "ResourceClaims in the latest analysed snapshot whose verdict is unknown: the "
            "snapshot lacks the Pods that would say whether one uses them.",
            labels=["cluster"],
        )
        found = GaugeMetricFamily(
            "dradash_findings",
            "Findings in the latest analysed snapshot, by code and severity.",
            labels=["cluster", "code", "severity"],
        )
        devices = GaugeMetricFamily(
            "dradash_devices",
            "Devices a DeviceClass admits in the latest analysed snapshot, by state: free, "
            "allocated, tainted (free, not tolerated by default) or unusable (in a pool the "
            "allocator skips).",
            labels=["cluster", "device_class", "state"],
        )
        age = GaugeMetricFamily(
            "dradash_snapshot_age_seconds",
            "Seconds since the cluster's latest analysed snapshot was captured.",
            labels=["cluster"],
        )
        runs = CounterMetricFamily(
            "dradash_capture_runs",
            "Finished capture runs of the cluster, by status (succeeded, failed).",
            labels=["cluster", "status"],
        )
        took = GaugeMetricFamily(
            "dradash_capture_duration_seconds",
            "How long the cluster's last finished capture took.",
            labels=["cluster"],
        )
        for m in self.clusters:
            c = m.cluster
            for status in ("succeeded", "failed"):
                runs.add_metric([c, status], m.capture_runs.get(status, 0))
            if m.capture_seconds is not None:
                took.add_metric([c], m.capture_seconds)
            if m.snapshot is None:
                continue
            for stage, reason, n in m.summary.get("reasons") or []:
                pods.add_metric([c, stage, reason], n)
            for stage, n in sorted((m.summary.get("claim_stages") or {}).items()):
                claims.add_metric([c, stage], n)
            claims_unknown.add_metric([c], m.summary.get("claims_unknown") or 0)
            for code, severity, n in m.findings:
                found.add_metric([c, code, severity], n)
            for name, tally in device_classes(m.inventory.get("classes") or []):
                for state in DEVICE_STATES:
                    devices.add_metric([c, name, state], tally.get(state, 0))
            if m.captured_at is not None:
                age.add_metric([c], max((self.now - m.captured_at).total_seconds(), 0.0))
        yield from (pods, claims, claims_unknown, found, devices, age, runs, took)


def _authorised(request: HttpRequest, token: str) -> bool:
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    # Compared as bytes: compare_digest refuses text that is not ASCII (a 500), and a header is
    # bytes that WSGI hands over as latin-1 text.
    sent = given.strip().encode("latin-1", "replace")
    return scheme.lower() == "bearer" and hmac.compare_digest(sent, token.encode())


@login_not_required  # the bearer token is the credential
@require_safe
def metrics(request: HttpRequest) -> HttpResponse:
    token = settings.DRADASH_METRICS_TOKEN
    if not token:
        raise Http404("Metrics are off: set DRADASH_METRICS_TOKEN to turn them on.")
    if not _authorised(request, token):
        response = HttpResponse(
            "A bearer token is required: Authorization: Bearer <DRADASH_METRICS_TOKEN>.\n",
            status=401,
            content_type="text/plain; charset=utf-8",
        )
        response["WWW-Authenticate"] = 'Bearer realm="dradash metrics"'
        return response
    registry = CollectorRegistry(auto_describe=False)
    registry.register(SnapshotCollector(cluster_metrics(), timezone.now()))
    # The 0.0.4 text format every Prometheus reads (the names are plain ASCII: 1.0.0 is the same).
    response = HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_PLAIN_0_0_4)
    response["Cache-Control"] = "no-store"
    return response
