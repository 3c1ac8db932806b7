"""The Celery app. Without CELERY_BROKER_URL tasks run eagerly in the calling process."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dradash.settings")

app = Celery("dradash")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
