"""The one redaction every path in applies before an object is stored.

Capture (dradash.kube.capture), ``import_bundle``, web uploads and the demo all go through
``redact``: environment variable values and ``kubectl.kubernetes.io/last-applied-configuration``
annotations are replaced by ``<redacted>`` (the name of the variable, and where a value comes
from, ``valueFrom``, stay: they help to diagnose and hold no secret), and ``managedFields`` are
dropped. Pods, the Pod templates of Jobs and the metadata a ResourceClaimTemplate copies into its
claims are covered. Stored snapshots from before were redacted by a data migration
(snapshots 0005), through ``dradash.snapshots.services.blobs_redact``.
"""

from __future__ import annotations

from typing import Any

REDACTED = "<redacted>"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


def redact(obj: dict[str, Any]) -> dict[str, Any]:
    """Drop managedFields; replace env values and last-applied-configuration. In place."""
    _redact_meta(obj.get("metadata"))
    spec = obj.get("spec")
    if isinstance(spec, dict):
        pod_specs = [spec]
        template = spec.get("template")  # Jobs (and any workload with a Pod template)
        if isinstance(template, dict):
            _redact_meta(template.get("metadata"))
            if isinstance(template.get("spec"), dict):
                pod_specs.append(template["spec"])
        if obj.get("kind") == "ResourceClaimTemplate":
            _redact_meta(spec.get("metadata"))
        for pod_spec in pod_specs:
            for key in CONTAINER_LISTS:
                containers = pod_spec.get(key)
                for container in containers if isinstance(containers, list) else ():
                    if not isinstance(container, dict):
                        continue
                    env = container.get("env")
                    for variable in env if isinstance(env, list) else ():
                        if isinstance(variable, dict) and "value" in variable:
                            variable["value"] = REDACTED
    return obj


def _redact_meta(meta: Any) -> None:
    if not isinstance(meta, dict):
        return
    meta.pop("managedFields", None)
    annotations = meta.get("annotations")
    if isinstance(annotations, dict) and LAST_APPLIED in annotations:
        annotations[LAST_APPLIED] = REDACTED
