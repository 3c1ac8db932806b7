from __future__ import annotations

from typing import Any

from django import forms

from dradash.snapshots.selectors import snapshot_list


class PlaygroundForm(forms.Form):
    """?snapshot=&class=&expression= (and limit=, the rows per table)."""

    expression = forms.CharField(required=False, strip=False, widget=forms.Textarea)
    snapshot = forms.ModelChoiceField(queryset=snapshot_list(), required=False)
    limit = forms.IntegerField(required=False, min_value=1, max_value=100_000)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["class"] = forms.CharField(required=False, max_length=253)  # a keyword
