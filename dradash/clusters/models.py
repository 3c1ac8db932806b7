from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, RegexValidator
from django.db import models
from django.db.models import Q

# Context names such as "arn:aws:eks:…:cluster/prod" are common, so allow any visible characters.
cluster_name_validator = RegexValidator(
    r"^\S{1,253}$", "A cluster name is 1 to 253 characters without spaces."
)


def live(prefix: str = "") -> Q:
    """Clusters (``prefix="cluster__"``: rows of a cluster) that have capture credentials."""
    return Q(**{f"{prefix}in_cluster": True}) | ~Q(**{f"{prefix}kubeconfig_path": ""})


class Cluster(models.Model):
    """A Kubernetes cluster whose DRA state dradash keeps snapshots of.

    A cluster with credentials is captured live: its captures are its state, and no upload
    lands in it. Clusters known only from bundles have no kubeconfig and are never captured:
    an operator's (made by import_bundle, load_demo, add_cluster or the admin), or one user's
    uploads (see dradash.snapshots.services.cluster_for_upload). Credentials stay in the
    kubeconfig file or the service account; only the path is stored. When the cluster was last
    captured is not stored: it is the latest capture run's.
    """

    class Origin(models.TextChoices):
        OPERATOR = "operator", "operator"
        UPLOAD = "upload", "a user's uploads"

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
    keep_analysed = models.PositiveIntegerField(
        "keep analysed",
        default=12,
        help_text="Captured snapshots beyond the newest N keep their objects and their summary, "
        "but their detailed analysis is dropped (compacted); opening one analyses it again. "
        "Pinned snapshots keep theirs. 0 never compacts.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    origin = models.CharField(
        max_length=16,
        choices=Origin.choices,
        default=Origin.OPERATOR,
        help_text="Upload: made by a user's upload; only that user's uploads land in it.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The user whose uploads made the cluster (none for an operator's).",
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def is_live(self) -> bool:
        """Whether it has capture credentials (whether or not capture is enabled)."""
        return self.in_cluster or bool(self.kubeconfig_path)

    @property
    def capturable(self) -> bool:
        return self.capture_enabled and self.is_live

    @property
    def source_label(self) -> str:
        """Where the credentials come from, for people (never the credentials themselves)."""
        if self.in_cluster:
            return "in-cluster service account"
        if self.kubeconfig_path:
            context = self.context or "current context"
            return f"{self.kubeconfig_path} ({context})"
        if self.origin == self.Origin.UPLOAD:
            return f"uploads of {self.created_by or 'a deleted user'}"
        return "bundles only"
