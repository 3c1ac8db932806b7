"""The share form: how long the link lasts, and which page it shows."""

from __future__ import annotations

from django import forms

DAY = 24 * 60 * 60
EXPIRY_CHOICES = [(DAY, "1 day"), (7 * DAY, "7 days"), (30 * DAY, "30 days")]


class ShareCreateForm(forms.Form):
    expires_in = forms.TypedChoiceField(choices=EXPIRY_CHOICES, coerce=int, initial=7 * DAY)
    # The page being viewed (path and query). htmx requests use the browser's current address
    # (HX-Current-URL) instead, which follows filters pushed into the address bar.
    path = forms.CharField(required=False, max_length=4000, widget=forms.HiddenInput)
