from __future__ import annotations

from django.core.validators import MaxValueValidator, RegexValidator
from django.db import models

# Context names such as "arn:aws:eks:…:cluster/prod" are common, so allow any visible characters.
cluster_name_validator = RegexValidator(
    r"^\S{1,253}$", "A cluster name is 1 to 253 characters without spaces."
)


class Cluster(models.Model):
    """A Kubernetes cluster whose DRA state dradash keeps snapshots of.

    Clusters known only from imported bundles have no kubeconfig and are never captured.
    Credentials stay in the kubeconfig file or the service account; only the path is stored.
    When the cluster was last captured is not stored: it is the latest capture run's.
    """

    name = models.CharField(max_length=253, unique=True, validators=[cluster_name_validator])
    kubeconfig_path = models.CharField(max_length=1024, blank=True)
    context = models.CharField(
        max_length=253, blank=True, help_text="Empty: the kubeconfig's current-context."
    )
    in_cluster = models.BooleanField(
        default=False, help_text="Use the service account of the pod dradash runs in."
    )
    capture_enabled = models.BooleanField(default=False)
    capture_interval = models.PositiveIntegerField(
        "capture every (minutes)",
        default=60,
        validators=[MaxValueValidator(7 * 24 * 60)],
        help_text="0: only when someone asks (Capture now, manage.py capture).",
    )
    keep_last = models.PositiveIntegerField(
        "keep last",
        default=48,
        help_text="Captured snapshots kept per cluster; older ones are deleted unless pinned. "
        "0 keeps them all.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def capturable(self) -> bool:
        return self.capture_enabled and (self.in_cluster or bool(self.kubeconfig_path))

    @property
    def source_label(self) -> str:
        """Where the credentials come from, for people (never the credentials themselves)."""
        if self.in_cluster:
            return "in-cluster service account"
        if self.kubeconfig_path:
            context = self.context or "current context"
            return f"{self.kubeconfig_path} ({context})"
        return "bundles only"
