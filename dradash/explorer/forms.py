from __future__ import annotations

from django import forms

from dradash.dra.diagnosis import STAGE_TITLES
from dradash.dra.inventory import AttributeFilter, AttributeFilterError

STAGE_CHOICES = [("", "any stage"), *STAGE_TITLES.items()]

CLAIM_STATES = [
    ("", "any state"),
    ("pending", "pending (unallocated)"),
    ("allocated", "allocated, not reserved"),
    ("reserved", "allocated and reserved"),
    ("deleting", "being deleted"),
]


class ClaimFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=253)
    namespace = forms.CharField(required=False, max_length=253)
    state = forms.ChoiceField(required=False, choices=CLAIM_STATES)
    device_class = forms.CharField(required=False, max_length=253)
    driver = forms.CharField(required=False, max_length=253)
    node = forms.CharField(required=False, max_length=253)
    stage = forms.ChoiceField(required=False, choices=STAGE_CHOICES)
    reason = forms.CharField(required=False, max_length=64)
    page = forms.IntegerField(required=False, min_value=1)


class PodFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=253)
    namespace = forms.CharField(required=False, max_length=253)
    phase = forms.CharField(required=False, max_length=32)
    node = forms.CharField(required=False, max_length=253)
    stage = forms.ChoiceField(required=False, choices=STAGE_CHOICES)
    reason = forms.CharField(required=False, max_length=64)
    page = forms.IntegerField(required=False, min_value=1)


DEVICE_STATES = [
    ("", "any state"),
    ("free", "free"),
    ("allocated", "allocated"),
    ("tainted", "tainted (allocated or not)"),
    ("unusable", "in a pool the allocator skips"),
]


class DeviceFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=253)
    driver = forms.CharField(required=False, max_length=253)
    pool = forms.CharField(required=False, max_length=253)
    device_class = forms.CharField(required=False, max_length=253)
    node = forms.CharField(required=False, max_length=253)
    state = forms.ChoiceField(required=False, choices=DEVICE_STATES)
    attribute = forms.CharField(required=False, max_length=400)
    page = forms.IntegerField(required=False, min_value=1)

    def clean_attribute(self) -> str:
        """``name`` or ``name=value`` (see dradash.dra.inventory.AttributeFilter)."""
        value: str = self.cleaned_data.get("attribute") or ""
        if value:
            try:
                AttributeFilter.parse(value)
            except AttributeFilterError as exc:
                raise forms.ValidationError(str(exc)) from exc
        return value
