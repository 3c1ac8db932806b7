from __future__ import annotations

from django import forms

from dradash.dra.diagnosis import STAGE_TITLES

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
    ("tainted", "tainted"),
]


class DeviceFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=253)
    driver = forms.CharField(required=False, max_length=253)
    pool = forms.CharField(required=False, max_length=253)
    node = forms.CharField(required=False, max_length=253)
    state = forms.ChoiceField(required=False, choices=DEVICE_STATES)
    page = forms.IntegerField(required=False, min_value=1)
