"""manage.py revoke_api_tokens USERNAME: delete every API token of a user."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from knox.models import AuthToken


class Command(BaseCommand):
    help = "Revoke (delete) every API token of a user; requests with them then get 401."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username", metavar="USERNAME")

    def handle(self, *args: Any, **options: Any) -> None:
        User = get_user_model()
        user = User.objects.filter(**{User.USERNAME_FIELD: options["username"]}).first()
        if user is None:
            raise CommandError(f"no user named {options['username']!r}")
        count, _ = AuthToken.objects.filter(user=user).delete()
        self.stdout.write(f"Revoked {count} API token(s) of {options['username']}.")
