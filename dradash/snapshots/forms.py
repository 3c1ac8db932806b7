from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile

from dradash.clusters.models import cluster_name_validator


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data: Any, initial: Any = None) -> list[UploadedFile]:
        single = super().clean
        if isinstance(data, list | tuple):
            return [single(d, initial) for d in data]
        return [single(data, initial)]


class UploadForm(forms.Form):
    files = MultipleFileField(
        help_text="kubectl get … -o json or -o yaml output, JSON arrays, YAML streams."
    )
    cluster = forms.CharField(
        required=False,
        max_length=253,
        validators=[cluster_name_validator],
        help_text="Cluster name. Empty: the bundle's SnapshotInfo, or “imported”.",
    )

    def clean_files(self) -> list[UploadedFile]:
        files: list[UploadedFile] = self.cleaned_data["files"]
        limit = settings.DRADASH_BUNDLE_MAX_BYTES
        for f in files:
            if f.size is not None and f.size > limit:
                raise forms.ValidationError(
                    f"{f.name}: file is {f.size:,} bytes, over the limit of {limit:,} bytes"
                )
        total, most = sum(f.size or 0 for f in files), settings.DRADASH_UPLOAD_MAX_BYTES
        if total > most:
            raise forms.ValidationError(
                f"the files are {total:,} bytes together, over the limit of {most:,} bytes for "
                "one upload; upload them in several"
            )
        return files
