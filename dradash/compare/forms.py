"""The diff page's query string."""

from __future__ import annotations

from django import forms

from dradash.compare.selectors import kind_choices


class DiffFilterForm(forms.Form):
    kind = forms.ChoiceField(required=False, choices=kind_choices)
