from __future__ import annotations

from django import forms

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
    page = forms.IntegerField(required=False, min_value=1)


class PodFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=253)
    namespace = forms.CharField(required=False, max_length=253)
    phase = forms.CharField(required=False, max_length=32)
    node = forms.CharField(required=False, max_length=253)
    page = forms.IntegerField(required=False, min_value=1)
