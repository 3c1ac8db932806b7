from __future__ import annotations

from django.urls import path

from dradash.playground import views

urlpatterns = [
    path("playground/", views.playground, name="playground"),
]
