from __future__ import annotations

import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from dradash.demo import cluster as demo
from dradash.snapshots.services import demo_load


class Command(BaseCommand):
    help = (
        "Load the demo cluster: two snapshots, 30 minutes apart, with Pods at every stage. "
        "Replaces earlier demo snapshots."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--user",
            metavar="NAME",
            help="also create (or reset) this user with a new random password and print it",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        snapshots = demo_load()
        for snapshot in snapshots:
            self.stdout.write(
                f"Loaded demo snapshot {snapshot.pk} of cluster {demo.CLUSTER}: "
                f"{snapshot.object_count} objects, taken {snapshot.captured_at:%Y-%m-%d %H:%M} UTC"
            )
        if name := options["user"]:
            password = secrets.token_urlsafe(12)
            with transaction.atomic():
                user, _ = get_user_model().objects.get_or_create(username=name)
                user.set_password(password)
                user.save()
            self.stdout.write(f"Log in as user {name!r} with password {password!r}")
