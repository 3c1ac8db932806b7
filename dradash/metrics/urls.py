from __future__ import annotations

from django.urls import path

from dradash.metrics import views

urlpatterns = [path("metrics", views.metrics, name="metrics")]
