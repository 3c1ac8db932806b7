from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.core.files.uploadhandler import FileUploadHandler, StopUpload
from django.http import HttpRequest

from dradash.clusters.models import cluster_name_validator
from dradash.snapshots.services import UploadRefused


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data: Any, initial: Any = None) -> list[UploadedFile]:
        single = super().clean
        if isinstance(data, list | tuple):
            if not data and self.required:
                raise forms.ValidationError(self.error_messages["required"], code="required")
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
    skip_invalid = forms.BooleanField(
        required=False,
        label="Skip invalid objects",
        help_text="Import the valid objects and list the invalid ones on the snapshot, instead "
        "of refusing the whole bundle. A file that cannot be read (broken JSON or YAML, a key "
        "given twice, over the size limit) still stops the import.",
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


# --- the size of an upload request, checked before and while its body is read -----------


def request_length(request: HttpRequest) -> int:
    """What the request says its body's length is (0 when it does not say)."""
    try:
        return max(int(request.META.get("CONTENT_LENGTH") or 0), 0)
    except ValueError:
        return 0


def too_large(size: int | None) -> UploadRefused:
    limit = settings.DRADASH_UPLOAD_MAX_BYTES
    shown = f"{size:,} bytes" if size else "too large"
    return UploadRefused(
        f"The upload is {shown}, over the limit of {limit:,} bytes for one request "
        "(DRADASH_UPLOAD_MAX_BYTES); nothing was stored. Import large bundles with "
        "`python manage.py import_bundle`, or upload the files one by one.",
        status=413,
    )


class UploadSizeLimit(FileUploadHandler):
    """Stops reading an upload request once it is over DRADASH_UPLOAD_MAX_BYTES (for requests
    that do not say their length; those that do are refused before any byte is read)."""

    def __init__(self, request: HttpRequest | None = None) -> None:
        super().__init__(request)
        self.received = 0
        self.exceeded = False

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        self.received += len(raw_data)
        if self.received > settings.DRADASH_UPLOAD_MAX_BYTES:
            self.exceeded = True
            raise StopUpload(connection_reset=True)
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None


def upload_size_guard(request: HttpRequest) -> UploadRefused | None:
    """Call before anything reads the body of an upload request: its refusal when it says it is
    over DRADASH_UPLOAD_MAX_BYTES; else None, and UploadSizeLimit watches the reading."""
    if request_length(request) > settings.DRADASH_UPLOAD_MAX_BYTES:
        return too_large(request_length(request))
    request.upload_handlers.insert(0, UploadSizeLimit(request))
    return None


def upload_size_exceeded(request: HttpRequest) -> UploadRefused | None:
    """Once the body was read: its refusal when UploadSizeLimit stopped the reading."""
    if any(getattr(h, "exceeded", False) for h in request.upload_handlers):
        return too_large(None)
    return None
