from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import Max, QuerySet
from django.http import HttpRequest

from dradash.clusters.models import Cluster
from dradash.clusters.services import (
    CaptureNotPossible,
    ClusterConfigError,
    capture_now,
    cluster_test_connection,
    error_message,
    kubeconfig_check,
)


class ClusterForm(forms.ModelForm):
    class Meta:
        model = Cluster
        fields = [
            "name",
            "kubeconfig_path",
            "context",
            "in_cluster",
            "capture_enabled",
            "capture_interval",
            "keep_last",
            "keep_analysed",
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        path, in_cluster = data.get("kubeconfig_path"), data.get("in_cluster")
        if path and in_cluster:
            raise forms.ValidationError("Give a kubeconfig path or in-cluster, not both.")
        if data.get("context") and not path:
            raise forms.ValidationError("A context needs a kubeconfig path.")
        if path:
            try:
                kubeconfig_check(path, data.get("context") or None)
            except ClusterConfigError as exc:
                self.add_error("kubeconfig_path", str(exc))
        return data


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin):
    form = ClusterForm
    list_display = [
        "name",
        "source",
        "capture_enabled",
        "capture_interval",
        "keep_last",
        "keep_analysed",
        "last_snapshot",
    ]
    list_filter = ["capture_enabled", "in_cluster", "origin"]
    list_select_related = ["created_by"]
    search_fields = ["name"]
    actions = ["test_connection", "capture_now"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Cluster]:
        return (
            super().get_queryset(request).annotate(last_snapshot_at=Max("snapshots__captured_at"))
        )

    @admin.display(description="source", ordering="kubeconfig_path")
    def source(self, cluster: Cluster) -> str:
        return cluster.source_label

    @admin.display(description="last snapshot", ordering="last_snapshot_at")
    def last_snapshot(self, cluster: Cluster) -> Any:
        return getattr(cluster, "last_snapshot_at", None) or "—"

    @admin.action(description="Test connection")
    def test_connection(self, request: HttpRequest, queryset: QuerySet[Cluster]) -> None:
        for cluster in queryset:
            try:
                report = cluster_test_connection(cluster)
            except Exception as exc:
                self.message_user(
                    request, f"Cluster {cluster.name}: {error_message(exc)}", messages.ERROR
                )
                continue
            versions = ", ".join(v.rpartition("/")[2] for v in report.api_versions) or "none"
            allowed = sorted(k for k, ok in report.can_list.items() if ok)
            refused = sorted(k for k, ok in report.can_list.items() if not ok)
            text = (
                f"Cluster {cluster.name}: Kubernetes {report.server_version or 'unknown'}; "
                f"resource.k8s.io served: {versions}; "
                f"may list: {', '.join(allowed) or 'nothing'}"
            )
            if refused:
                text += f"; may not list: {', '.join(refused)}"
            if report.error:
                text += f"; {report.error}"
            level = messages.SUCCESS if not (refused or report.error) else messages.WARNING
            self.message_user(request, text, level)

    @admin.action(description="Capture now")
    def capture_now(self, request: HttpRequest, queryset: QuerySet[Cluster]) -> None:
        for cluster in queryset:
            try:
                run = capture_now(cluster=cluster, user=request.user)
            except CaptureNotPossible as exc:
                self.message_user(request, str(exc), messages.ERROR)
                continue
            self.message_user(
                request,
                f"Cluster {cluster.name}: capture run #{run.pk} is {run.status}.",
                messages.INFO,
            )
