from __future__ import annotations

from django.urls import path

from dradash.playground.apis import SelectorEvaluateApi

urlpatterns = [
    path("selectors/evaluate", SelectorEvaluateApi.as_view(), name="api-selector-evaluate"),
]
