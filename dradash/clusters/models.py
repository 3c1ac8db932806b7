from __future__ import annotations

from django.core.validators import RegexValidator
from django.db import models

# Context names such as "arn:aws:eks:…:cluster/prod" are common, so allow any visible characters.
cluster_name_validator = RegexValidator(
    r"^\S{1,253}$", "A cluster name is 1 to 253 characters without spaces."
)


class Cluster(models.Model):
    """A Kubernetes cluster whose DRA state dradash keeps snapshots of.

    Clusters known only from imported bundles have no kubeconfig and are never captured.
    Credentials stay in the kubeconfig file or the service account; only the path is stored.
    """

    name = models.CharField(max_length=253, unique=True, validators=[cluster_name_validator])
    kubeconfig_path = models.CharField(max_length=1024, blank=True)
    context = models.CharField(max_length=253, blank=True)
    in_cluster = models.BooleanField(default=False)
    capture_enabled = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def capturable(self) -> bool:
        return self.in_cluster or bool(self.kubeconfig_path)
