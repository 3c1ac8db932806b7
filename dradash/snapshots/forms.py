from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.core.files.uploadhandler import FileUploadHandler, StopUpload
from django.http import HttpRequest

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
        if problem := files_too_large(files):
            raise forms.ValidationError(problem)
        return files


def files_too_large(files: list[UploadedFile]) -> str | None:
    """Why uploaded files are too large to import (one over DRADASH_BUNDLE_MAX_BYTES, or all
    together over DRADASH_UPLOAD_MAX_BYTES), or None: for the form and the API."""
    limit = settings.DRADASH_BUNDLE_MAX_BYTES
    for f in files:
        if f.size is not None and f.size > limit:
            return f"{f.name}: file is {f.size:,} bytes, over the limit of {limit:,} bytes"
    total, most = sum(f.size or 0 for f in files), settings.DRADASH_UPLOAD_MAX_BYTES
    if total > most:
        return (
            f"the files are {total:,} bytes together, over the limit of {most:,} bytes for "
            "one upload; upload them in several"
        )
    return None


def request_too_large(request: HttpRequest) -> int | None:
    """The length a request says it has when that is over DRADASH_UPLOAD_MAX_BYTES, else None;
    otherwise an UploadLimit goes first among its upload handlers, to stop reading it once it
    is over (its ``exceeded`` then says so)."""
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if length > settings.DRADASH_UPLOAD_MAX_BYTES:
        return length
    request.upload_handlers.insert(0, UploadLimit(request))
    return None


def too_large_message(size: int | None) -> str:
    """What an upload request over DRADASH_UPLOAD_MAX_BYTES is told (``size``: its length, if
    known)."""
    shown = f"{size:,} bytes" if size else "too large"
    return (
        f"The upload is {shown}, over the limit of {settings.DRADASH_UPLOAD_MAX_BYTES:,} bytes "
        "for one request (DRADASH_UPLOAD_MAX_BYTES); nothing was stored. Import large bundles "
        "with `python manage.py import_bundle`, or upload the files one by one."
    )


def upload_exceeded(request: HttpRequest) -> bool:
    """Whether an upload request was stopped by its UploadLimit (read its body first)."""
    return any(getattr(h, "exceeded", False) for h in request.upload_handlers)


class UploadLimit(FileUploadHandler):
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
