from __future__ import annotations

from django import forms


class SearchForm(forms.Form):
    """?q=: part of a Pod's, claim's or node's name, or namespace/name."""

    q = forms.CharField(required=False, max_length=253 * 2 + 1)
